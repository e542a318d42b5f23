// The schedule cache: a graph that differs from one scheduled before only in its buffers (the same ops, args and
// shapes over other buffers of the same sizes, dtypes and devices, in the same pattern of sharing), as every call
// of an eager training step or of a layer builds, gets that schedule again over its own buffers, without grouping
// or building kernel ASTs. SCHEDULE_CACHE=0 turns it off.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "schedule/schedule.h"

namespace tg::schedule {

// The schedule of `outputs`: a cached one instantiated over this graph's buffers when the graph's form was seen
// before, else make(outputs), remembered (at most a few hundred forms are kept).
Schedule cached_schedule(const std::vector<uop::UOp>& outputs, const std::function<Schedule(const std::vector<uop::UOp>&)>& make);

struct CacheStats {
  int64_t hits = 0, misses = 0;  // misses: schedules built and remembered
};
CacheStats schedule_cache_stats();

}  // namespace tg::schedule
