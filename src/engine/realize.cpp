#include "engine/realize.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "base/util.h"
#include "engine/kernel_cache.h"
#include "runtime/mpi.h"
#include "runtime/thread_pool.h"
#include "runtime/buffer_uop.h"
#include "uop/buffer_arg.h"
#include "uop/sint.h"
#include "tg/context.h"
#include "tg/counters.h"
#include "tg/interrupt.h"
#include "tg/profile.h"
#include "viz/record.h"

namespace tg::engine {

using runtime::buffer_of;
using schedule::ScheduleItem;

namespace {
thread_local std::vector<ScheduleItem>* capture_sink = nullptr;
thread_local CaptureScope::Holds* capture_holds = nullptr;
std::mutex interrupt_mutex;
std::shared_ptr<const std::function<void()>> interrupt_check;  // set_interrupt_check's; null when none

void check_interrupt() {
  std::shared_ptr<const std::function<void()>> check;
  {
    std::lock_guard<std::mutex> lock(interrupt_mutex);
    check = interrupt_check;
  }
  if (check) (*check)();
}

constexpr int64_t kMinParallelWork = 1 << 17;  // ALU ops + elements moved; below it one thread is faster
constexpr int64_t kChunksPerThread = 4;
}  // namespace

thread_local const uop::VarVals* capture_vars = nullptr;
CaptureScope::CaptureScope(std::vector<ScheduleItem>& sink, const uop::VarVals* vars)
    : outer_(capture_sink), outer_vars_(capture_vars), outer_holds_(capture_holds) {
  capture_sink = &sink, capture_vars = vars, capture_holds = &holds_;
}
CaptureScope::~CaptureScope() { capture_sink = outer_, capture_vars = outer_vars_, capture_holds = outer_holds_; }
bool capturing() { return capture_sink != nullptr; }

// Where one side's memory is host memory (the CPU's) the other device copies straight from or into it; between two
// devices the bytes pass through a host block (not zeroed: first touching 256 MiB of fresh pages cost more than
// the copy itself on a GPU machine)
void copy_buffer(runtime::Buffer& dst, runtime::Buffer& src) {
  profile::Span span("copy " + src.device().name() + " -> " + dst.device().name(), "copy");
  span.arg("bytes", std::to_string(src.nbytes()));
  src.device().synchronize();
  size_t n = src.nbytes();
  if (n > 0 && src.device().allocator().host_addressable()) {
    dst.copyin(src.ptr(), n);
  } else if (n > 0 && dst.device().allocator().host_addressable()) {
    src.copyout(dst.ptr(), n);
  } else if (n > 0) {
    std::unique_ptr<unsigned char[]> host(new unsigned char[n]);
    src.copyout(host.get(), n);
    dst.copyin(host.get(), n);
  }
  GlobalCounters::copy_count++;
  if (getenv_int("DEBUG") >= 2)
    std::fprintf(stderr, "*** %-6s copy %zu bytes from %s\n", dst.device().name().c_str(), n, src.device().name().c_str());
}

// In dst's memory where the host can address it (the CPU's: no staging), else in a host block copied back
void allreduce_buffer(runtime::Buffer& dst, runtime::Buffer& src, const std::string& op) {
  auto start = std::chrono::steady_clock::now();
  profile::Span span("allreduce " + op, "copy");
  span.arg("bytes", std::to_string(src.nbytes()));
  copy_buffer(dst, src);
  if (!runtime::mpi::launched() || dst.nbytes() == 0) return;
  std::optional<runtime::mpi::Op> o = runtime::mpi::op_named(op);
  if (!o) throw InternalError("allreduce", "no collective named '" + op + "'");  // (tg::mpi::allreduce checked it)
  size_t n = dst.nbytes();
  bool host = dst.device().allocator().host_addressable();
  std::unique_ptr<unsigned char[]> staged(host ? nullptr : new unsigned char[n]);
  dst.device().synchronize();
  if (!host) dst.copyout(staged.get(), n);
  runtime::mpi::allreduce(host ? dst.ptr() : staged.get(), n / dst.dtype().itemsize(), dst.dtype(), *o, "allreduce");
  if (!host) dst.copyin(staged.get(), n);
  if (getenv_int("DEBUG") >= 2)
    std::fprintf(stderr, "*** %-6s allreduce %s of %zu bytes over %d ranks: %.3f ms\n", dst.device().name().c_str(), op.c_str(), n,
                 runtime::mpi::size(), std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
}

namespace {
std::string format_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}
// a kernel's variables at the values of one launch
uop::VarVals values_of(const CompiledKernel& k, const std::vector<int64_t>& vals) {
  uop::VarVals at;
  for (size_t i = 0; i < vals.size(); i++) at.vals.push_back({uop::VarArg{k.vars[i], vals[i], vals[i]}, vals[i]});
  return at;
}
// the ALU ops of one launch at these values
int64_t ops_of(const CompiledKernel& k, const std::vector<int64_t>& vals) {
  return k.ops_expr ? uop::eval(k.ops_expr, values_of(k, vals)) : k.ops;
}
// the elements one launch loads and stores
int64_t moves_of(const CompiledKernel& k, const std::vector<int64_t>& vals) {
  return k.moves_expr ? uop::eval(k.moves_expr, values_of(k, vals)) : k.moves;
}
}  // namespace

size_t run_program(const CompiledKernel& k, const std::vector<runtime::Buffer*>& bufs, double* device_s, const std::vector<int64_t>& vals) {
  if (vals.size() != k.vars.size())
    throw InternalError("launch", k.name + " takes " + std::to_string(k.vars.size()) + " variable value(s), not " + std::to_string(vals.size()));
  std::vector<void*> ptrs;
  for (runtime::Buffer* buf : bufs) ptrs.push_back(buf->ptr());
  bufs[0]->wrote();
  if (k.grid) {  // queued on the device; timed (and waited for) when the caller wants the device's own figure
    runtime::LaunchDims dims = k.dims;
    for (size_t d = 0; d < 3; d++)  // a symbolic dimension: this launch's size (none at 0: nothing to compute)
      if (k.global_expr[d] && (dims.global[d] = uop::eval(k.global_expr[d], values_of(k, vals))) <= 0) return 1;
    double t = (*k.program)(ptrs.data(), vals.empty() ? nullptr : vals.data(), dims, device_s != nullptr);
    if (device_s) *device_s = t;
    return 1;
  }
  // the outermost loop cut into kChunksPerThread ranges per thread, when there is enough work to pay for the
  // threads (the elements moved, not the buffers' sizes: a KV cache's row write is a small job in a large buffer,
  // faster on one thread; bench/llm.sh's decode): a thread that starts late or is slowed by another process then
  // takes fewer ranges
  int64_t p = k.parallel_end ? uop::eval(k.parallel_end, values_of(k, vals)) : k.parallel_size;  // a symbolic outermost loop's trips
  bool enough = ops_of(k, vals) + moves_of(k, vals) >= kMinParallelWork;
  size_t threads = p > 1 && enough ? std::min<size_t>(runtime::cpu_threads(), static_cast<size_t>(p)) : 1;
  int64_t chunks = threads > 1 ? std::min<int64_t>(p, static_cast<int64_t>(threads) * kChunksPerThread) : 1;
  if (p == 0 && !k.parallel_end) {
    std::vector<int64_t> vars{0, 0};  // no parallel loop: only the variables' values
    vars.insert(vars.end(), vals.begin(), vals.end());
    (*k.program)(ptrs.data(), vals.empty() ? nullptr : vars.data());
  } else {
    runtime::parallel_for(threads, static_cast<size_t>(chunks), [&](size_t c) {
      int64_t range[2] = {p * static_cast<int64_t>(c) / chunks, p * static_cast<int64_t>(c + 1) / chunks};
      if (vals.empty()) {
        (*k.program)(ptrs.data(), range);
        return;
      }
      std::vector<int64_t> vars{range[0], range[1]};
      vars.insert(vars.end(), vals.begin(), vals.end());
      (*k.program)(ptrs.data(), vars.data());
    });
  }
  return threads;
}

void launch(const CompiledKernel& k, const std::vector<runtime::Buffer*>& bufs, const std::vector<int64_t>& vals) {
  int64_t mem = 0;
  std::optional<uop::VarVals> at;  // the variables' values, when a count depends on them
  for (size_t i = 0; i < bufs.size(); i++) {
    int64_t size = static_cast<int64_t>(bufs[i]->nbytes());
    if (i >= k.buffer_bytes.size()) {
      mem += size;
    } else if (!k.buffer_bytes_expr[i]) {
      mem += std::min(size, k.buffer_bytes[i]);
    } else {
      if (!at) at = values_of(k, vals);
      mem += std::min(size, uop::eval(k.buffer_bytes_expr[i], *at));
    }
  }
  runtime::Buffer& out = *bufs[0];
  static const base::IntSetting debug_level("DEBUG");
  bool debug = debug_level.get() >= 2, profiling = profile::enabled(), timed = debug || profiling;
  double device_s = 0;
  auto t0 = std::chrono::steady_clock::now();
  size_t threads = run_program(k, bufs, timed ? &device_s : nullptr, vals);
  auto t1 = std::chrono::steady_clock::now();
  double s = std::chrono::duration<double>(t1 - t0).count();
  if (device_s > 0) s = device_s;  // DEBUG=2 on a device that measures its kernels: the device's time
  GlobalCounters::kernel_count++;
  int64_t ops = ops_of(k, vals);
  GlobalCounters::global_ops += ops;
  GlobalCounters::global_mem += mem;
  if (!k.grid || timed) GlobalCounters::time_sum_s += s;  // an untimed grid launch only queued the kernel
  if (profiling) {  // on the device's row; a grid device's own time, ending when the wait for it did
    auto begin = device_s > 0 ? t1 - std::chrono::duration_cast<profile::Clock::duration>(std::chrono::duration<double>(s)) : t0;
    profile::record(k.name, "kernel", begin, t1, out.device().name(),
                    {{"ops", std::to_string(ops)}, {"bytes", std::to_string(mem)}, {"GFLOP/s", format_double(s > 0 ? ops / s * 1e-9 : 0)},
                     {"GB/s", format_double(s > 0 ? mem / s * 1e-9 : 0)}, {"threads", std::to_string(threads)}, {"opts", k.opts}});
  }
  if (debug)
    std::fprintf(stderr, "*** %-6s %4lld %-24s arg %2zu mem %7.3f GB tm %9.2fus (%8.2f GFLOP/s %7.2f GB/s) x%zu %s\n",
                 out.device().name().c_str(), static_cast<long long>(GlobalCounters::kernel_count), k.name.c_str(),
                 bufs.size(), GlobalCounters::global_mem * 1e-9, s * 1e6, ops / s * 1e-9, mem / s * 1e-9, threads,
                 k.opts.c_str());
}

namespace {
// The capture keeps every item, so the items would hold every buffer to the capture's end: a buffer past its last
// item in this schedule that nothing but the capture holds (an intermediate) gives its memory back as a plain
// realize would; the capture's peak is then a plain call's, not the sum of every intermediate. TinyJit plans memory
// for such buffers, or runs their steps again.
void capture_item(ScheduleItem item, size_t i, std::unordered_map<const uop::UOpNode*, size_t>& last_use) {
  std::vector<uop::UOp> done;
  if (!item.bufs.empty()) (*capture_holds)[item.bufs[0].get()].written = true;
  for (const uop::UOp& b : item.bufs) {
    (*capture_holds)[b.get()].handles++;
    auto it = last_use.find(b.get());
    if (it != last_use.end() && it->second == i) done.push_back(b), last_use.erase(it);
  }
  capture_sink->push_back(std::move(item));
  for (const uop::UOp& b : done) {
    const CaptureScope::Hold& h = (*capture_holds)[b.get()];
    // written by a captured item (so a replay writes it again: not host data copied in inside the function), held
    // by the capture's items and by `done` only, and no other buffer is a view of its memory
    if (h.written && b.get()->refcount.load() == h.handles + 1 && uop::get_buffer_arg(b).memory.use_count() == 1)
      buffer_of(b).release();
  }
}
}  // namespace

void run_schedule(schedule::Schedule s) {
  static const base::IntSetting debug_level("DEBUG"), beam("BEAM");
  int debug = static_cast<int>(debug_level.get());
  if (debug >= 1 && !s.items.empty()) {
    size_t copies = 0;
    for (const ScheduleItem& it : s.items) copies += it.kind != ScheduleItem::Kind::Kernel;
    std::fprintf(stderr, "realize: %zu kernels, %zu copies on %s\n", s.items.size() - copies, copies,
                 buffer_of(s.items[0].bufs[0]).device().name().c_str());
  }
  if (debug >= 3) std::cerr << schedule::print_schedule(s);
  // a replay launches the kernels with the values of the call's variables: a kernel may take no other
  if (capture_sink)
    for (const auto& [var, value] : s.var_vals.vals) {
      const int64_t* passed = capture_vars ? capture_vars->find(var.name) : nullptr;
      if (!passed || *passed != value)
        throw ArgumentError("TinyJit", "a kernel of the function takes the variable " + var.name + " = " + std::to_string(value) +
                                           (passed ? ", but the call passes " + std::to_string(*passed)
                                                   : ", which is not one of the call's vars: pass it (TinyJit(fn(inputs, vars)), "
                                                     "call(inputs, {var.bind(value)})) or its value would be frozen"));
    }
  // the schedule's new kernels compiled together first (one compiler run per thread on the CPU, not one per
  // kernel); not under BEAM, which times each kernel on its buffers when its turn comes (an earlier run of a later
  // kernel could overwrite what an earlier one reads)
  if (beam.get() <= 0) {
    std::vector<KernelRequest> requests;
    for (const ScheduleItem& item : s.items)
      if (item.kind == ScheduleItem::Kind::Kernel) requests.push_back({item.ast, &buffer_of(item.bufs[0]).device()});
    if (requests.size() > 1) get_kernels(requests);
  }
  // an item that writes memory already there (an assign into a live tensor, or a buffer an earlier item began)
  // ends the checks: stopping after it could leave a tensor's graph to apply its update a second time
  bool checking = s.items.size() > 1;
  std::unordered_map<const uop::UOpNode*, size_t> last_use;  // capture: each buffer's last item in this schedule
  if (capture_sink)
    for (size_t i = 0; i < s.items.size(); i++)
      for (const uop::UOp& b : s.items[i].bufs) last_use[b.get()] = i;
  viz::StoredRealize* viz = viz::current_realize();
  for (size_t i = 0; i < s.items.size(); i++) {
    ScheduleItem& item = s.items[i];
    if (checking && (checking = item.bufs.empty() || !buffer_of(item.bufs[0]).allocated())) check_interrupt();
    viz::StageTimer timer;
    std::string kernel_name;
    std::vector<runtime::Buffer*> bufs;
    for (const uop::UOp& b : item.bufs) bufs.push_back(&buffer_of(b));
    if (item.kind == ScheduleItem::Kind::Copy) copy_buffer(*bufs[0], *bufs[1]);
    else if (item.kind == ScheduleItem::Kind::Allreduce) allreduce_buffer(*bufs[0], *bufs[1], item.ast.arg().get<std::string>());
    else {
      const CompiledKernel& k = *get_kernel(item.ast, bufs[0]->device(), &bufs);
      std::vector<int64_t> vals;  // the kernel's variables' values, in its order
      for (const std::string& name : k.vars) {
        const int64_t* v = s.var_vals.find(name);
        if (!v) throw InternalError("launch", k.name + " takes the variable " + name + ", which the schedule does not bind");
        vals.push_back(*v);
      }
      launch(k, bufs, vals);
      kernel_name = k.name;
    }
    if (viz) {
      viz::ItemRecord rec{schedule::item_kind(item), kernel_name, {}, timer.stop("").ms};
      for (const uop::UOp& b : item.bufs) rec.bufs.push_back(schedule::buffer_str(b));
      viz->items.push_back(std::move(rec));
    }
    if (capture_sink) capture_item(std::move(item), i, last_use);
    item = ScheduleItem();  // frees the buffers only this item still held
  }
}

}  // namespace tg::engine

namespace tg {
void set_interrupt_check(std::function<void()> check) {
  std::lock_guard<std::mutex> lock(engine::interrupt_mutex);
  engine::interrupt_check = check ? std::make_shared<const std::function<void()>>(std::move(check)) : nullptr;
}
}  // namespace tg
