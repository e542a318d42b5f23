// GlobalCounters: what the kernels run so far have done, summed over the process (tinygrad's GlobalCounters).
#pragma once
#include <cstdint>

namespace tg {

struct GlobalCounters {
  static inline int64_t kernel_count = 0;  // kernels launched (copies not included)
  static inline int64_t global_ops = 0;    // arithmetic ops executed, estimated from the loop sizes
  // bytes the kernels' loads and stores moved, counted over their loops and at most each buffer's size per launch:
  // a gathered read (an embedding's row, a mixture's chosen experts) counts what it reads, not the whole buffer
  static inline int64_t global_mem = 0;
  static inline double time_sum_s = 0;     // seconds spent inside kernels (a grid device's: at DEBUG>=2, timed)
  static inline int64_t copy_count = 0;    // buffer copies between devices
  static inline int64_t mem_used = 0;      // bytes of device memory held by buffers now (all devices)
  static inline int64_t mem_peak = 0;      // the most mem_used has been since the start or the last reset()
  // zeroes the counts; mem_used stays what it is and mem_peak starts again from it
  static void reset() { kernel_count = global_ops = global_mem = copy_count = 0, time_sum_s = 0, mem_peak = mem_used; }
};

}  // namespace tg
