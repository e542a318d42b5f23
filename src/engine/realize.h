// The realize loop: run a schedule's items in order (compile through the caches, launch, count).
// Each item drops its references to its buffers once it has run, so a buffer that nothing else holds (an
// intermediate no live tensor refers to) goes back to the allocator right after its last reader: the schedule's
// `becomes` must have been applied (and cleared) first, or it keeps every buffer alive to the end.
#pragma once
#include "schedule/schedule.h"

namespace tg::engine {

void run_schedule(schedule::Schedule s);

}  // namespace tg::engine
