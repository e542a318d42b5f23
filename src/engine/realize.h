// The realize loop: run a schedule's items in order (compile through the caches, launch, count).
// Each item drops its references to its buffers once it has run, so a buffer that nothing else holds (an
// intermediate no live tensor refers to) goes back to the allocator right after its last reader: the schedule's
// `becomes` must have been applied (and cleared) first, or it keeps every buffer alive to the end.
#pragma once
#include <unordered_map>
#include <vector>

#include "engine/kernel_cache.h"
#include "runtime/buffer.h"
#include "schedule/schedule.h"

namespace tg::engine {

void run_schedule(schedule::Schedule s);

// TinyJit's capture: while a CaptureScope lives on this thread, run_schedule also appends every item it runs to
// `sink`. The items hold their buffers, except that an intermediate's memory goes back to the allocator after its
// last item, as in a plain realize (Buffer::release: allocated again, with undefined contents, at its next use).
class CaptureScope {
 public:
  struct Hold {
    uint32_t handles = 0;  // handles the sink's items hold on a buffer node
    bool written = false;  // whether one of those items wrote it
  };
  using Holds = std::unordered_map<const uop::UOpNode*, Hold>;
  // `vars`: the values of the variables the captured kernels may take (TinyJit's call); a kernel taking another
  // variable, or one at another value, raises ArgumentError
  explicit CaptureScope(std::vector<schedule::ScheduleItem>& sink, const uop::VarVals* vars = nullptr);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

 private:
  std::vector<schedule::ScheduleItem>* outer_;
  const uop::VarVals* outer_vars_;
  Holds holds_;
  Holds* outer_holds_;
};

// Whether a CaptureScope is active on this thread.
bool capturing();

// Runs a kernel on explicit buffers ([0] written): on the CPU its parallel loop split over the threads, to its end
// (returns how many); on a grid device queued once over its grid (reading a result waits: Device::synchronize). With
// `device_s`, a grid device waits, measures the kernel itself and puts its time there (0 where it cannot). `vals`: the values of the kernel's variables (k.vars,
// symbolic loop sizes), in that order.
size_t run_program(const CompiledKernel& k, const std::vector<runtime::Buffer*>& bufs, double* device_s = nullptr,
                   const std::vector<int64_t>& vals = {});
// One kernel launch on explicit buffers ([0] written), counted in GlobalCounters and printed at DEBUG=2; `vals` as
// for run_program.
void launch(const CompiledKernel& k, const std::vector<runtime::Buffer*>& bufs, const std::vector<int64_t>& vals = {});
// The whole of src copied into dst (same size), through the host.
void copy_buffer(runtime::Buffer& dst, runtime::Buffer& src);
// dst = src combined elementwise over the ranks of an MPI job (op "sum", "max" or "min"; ScheduleItem::Allreduce),
// through host memory; a copy where the process is not part of a job.
void allreduce_buffer(runtime::Buffer& dst, runtime::Buffer& src, const std::string& op);

}  // namespace tg::engine
