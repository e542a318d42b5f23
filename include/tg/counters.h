// GlobalCounters: what the kernels run so far have done, summed over the process (tinygrad's GlobalCounters).
#pragma once
#include <cstdint>

namespace tg {

struct GlobalCounters {
  static inline int64_t kernel_count = 0;  // kernels launched (copies not included)
  static inline int64_t global_ops = 0;    // arithmetic ops executed, estimated from the loop sizes
  static inline int64_t global_mem = 0;    // bytes of the buffers the kernels read and wrote
  static inline double time_sum_s = 0;     // seconds spent inside kernels
  static inline int64_t copy_count = 0;    // buffer copies between devices
  static void reset() { kernel_count = global_ops = global_mem = copy_count = 0, time_sum_s = 0; }
};

}  // namespace tg
