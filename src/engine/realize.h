// The realize loop: run a schedule's items in order (compile through the caches, launch, count).
#pragma once
#include "schedule/schedule.h"

namespace tg::engine {

void run_schedule(const schedule::Schedule& s);

}  // namespace tg::engine
