// The OpenCL device (PoCL on CI, any driver elsewhere): hand-written kernels, the caches, launches and their
// errors, and the LOCAL opt's kernels against plain loops. Skipped where no OpenCL platform exists.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>

#include "engine/kernel_cache.h"
#include "engine/realize.h"
#include "runtime/buffer.h"
#include "runtime/buffer_uop.h"
#include "schedule/schedule.h"
#include "support/device_test.h"
#include "tg/tg.h"

using namespace tg;

namespace {

#define NEED_OPENCL(dev) NEED_DEVICE(dev, "OPENCL")

constexpr const char* kAdd = R"CL(
__kernel void add(__global float* restrict out, __global const float* restrict a, __global const float* restrict b) {
  int i = get_global_id(0);
  out[i] = a[i] + b[i];
}
)CL";

std::vector<float> read(runtime::Buffer& b) {
  std::vector<float> out(b.size());
  b.copyout(out.data(), b.nbytes());
  return out;
}

// a + b on the device through the hand-written kernel
void run_add(runtime::Device& dev) {
  const size_t n = 1000;
  std::vector<float> a(n), b(n);
  std::iota(a.begin(), a.end(), 0.0f), std::iota(b.begin(), b.end(), -500.0f);
  runtime::Buffer out(dev, n, dtypes::float32), ba(dev, n, dtypes::float32), bb(dev, n, dtypes::float32);
  ba.copyin(a.data(), n * 4), bb.copyin(b.data(), n * 4);
  void* bufs[] = {out.ptr(), ba.ptr(), bb.ptr()};
  runtime::LaunchDims dims;
  dims.global = {static_cast<int64_t>(n), 1, 1};
  (*dev.program("add", kAdd))(bufs, nullptr, dims);
  std::vector<float> got = read(out);
  for (size_t i = 0; i < n; i++) ASSERT_EQ(got[i], a[i] + b[i]) << i;
}

}  // namespace

TEST(OpenCL, AHandWrittenKernelAddsOnTheDevice) {
  NEED_OPENCL(dev);
  run_add(*dev);
  EXPECT_TRUE(dev->caps().grid);
  EXPECT_EQ(dev->caps().dialect, "OpenCL");
  EXPECT_GE(dev->caps().max_local_size, 1);
}

TEST(OpenCL, VariablesFollowTheBuffersAndTimedLaunchesMeasure) {
  NEED_OPENCL(dev);
  const char* src = "__kernel void fill(__global long* out, const long v) { out[get_global_id(0)] = v * (long)get_global_id(0); }";
  runtime::Buffer out(*dev, 64, dtypes::int64);
  void* bufs[] = {out.ptr()};
  int64_t vars[] = {int64_t{1} << 40};
  runtime::LaunchDims dims;
  dims.global = {64, 1, 1}, dims.n_vars = 1;
  double t = (*dev->program("fill", src))(bufs, vars, dims, true);
  EXPECT_GT(t, 0.0);
  std::vector<int64_t> got(64);
  out.copyout(got.data(), out.nbytes());
  for (int64_t i = 0; i < 64; i++) EXPECT_EQ(got[i], vars[0] * i);
}

TEST(OpenCL, ABuildFailureNamesTheLogAndTheSource) {
  NEED_OPENCL(dev);
  try {
    dev->program("broken", "__kernel void broken(__global float* out) { out[0] = undeclared_thing; }");
    FAIL() << "no error";
  } catch (const CompileError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("undeclared_thing"), std::string::npos) << m;
    EXPECT_NE(m.find("source:"), std::string::npos) << m;
    EXPECT_NE(m.find("OPENCL"), std::string::npos) << m;
  }
  run_add(*dev);  // the device goes on
}

TEST(OpenCL, AProgramIsBuiltOnce) {
  NEED_OPENCL(dev);
  // a source no earlier run has seen (a second process finding it on disk: ctest opencl.second_process_compiles_nothing).
  // Not the pid and an unseeded rand(): CI's Release and sanitized passes ran it in processes with the same pid, and
  // the second pass found the first one's binary on disk
  std::string src = std::string(kAdd) + "\n// " + std::to_string(std::random_device{}()) + " " +
                    std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  int64_t compiled = runtime::compile_stats().compiled;
  std::string first = dev->compiler().compile_cached(src);
  EXPECT_EQ(runtime::compile_stats().compiled, compiled + 1);
  EXPECT_EQ(dev->compiler().compile_cached(src), first);
  EXPECT_EQ(runtime::compile_stats().compiled, compiled + 1);
  EXPECT_FALSE(first.empty());
}

TEST(OpenCL, AnAllocationBeyondTheDeviceIsOutOfMemory) {
  NEED_OPENCL(dev);
  try {
    runtime::Buffer huge(*dev, size_t{1} << 60, dtypes::uint8);
    huge.ptr();
    FAIL() << "no error";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("OPENCL"), std::string::npos) << e.what();
  }
  run_add(*dev);
}

TEST(OpenCL, DeviceNamesAndIndices) {
  NEED_OPENCL(dev);
  EXPECT_EQ(Device::canonicalize("cl"), "OPENCL");
  EXPECT_EQ(Device::canonicalize("GPU"), "OPENCL");
  EXPECT_EQ(Device::canonicalize("opencl:0"), "OPENCL");
  try {
    runtime::get_device("OPENCL:77");
    FAIL() << "no error";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("OpenCL device"), std::string::npos) << e.what();
  }
}

TEST(OpenCL, LaunchErrorsNameTheKernelAndTheDeviceGoesOn) {
  NEED_OPENCL(dev);
  runtime::Buffer out(*dev, 16, dtypes::float32), a(*dev, 16, dtypes::float32), b(*dev, 16, dtypes::float32);
  void* bufs[] = {out.ptr(), a.ptr(), b.ptr()};
  runtime::LaunchDims dims;
  dims.global = {16, 1, 1};
  dims.local = {dev->caps().max_local_size * 2, 1, 1};  // a work-group larger than the device allows
  try {
    (*dev->program("add", kAdd))(bufs, nullptr, dims);
    FAIL() << "no error";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel add"), std::string::npos) << e.what();
  }
  // more local memory than the device has: refused when the kernel is loaded, never run
  std::string big = "__kernel void big(__global float* out) { __local float tmp[" + std::to_string(dev->caps().local_memory / 4 + 1024) +
                    "]; tmp[get_local_id(0)] = 1.0f; barrier(CLK_LOCAL_MEM_FENCE); out[get_global_id(0)] = tmp[0]; }";
  try {
    runtime::LaunchDims one;
    (*dev->program("big", big))(bufs, nullptr, one, true);
    dev->synchronize();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(e.kind() == ErrorKind::Compile || e.kind() == ErrorKind::Device) << e.what();
  }
  run_add(*dev);
}

// Kernels are queued, not waited for: a realize of several kernels waits for none of them (the in-order queue keeps
// their order, buffers freed meanwhile included), reading the result waits once, and the values are the CPU's
TEST(OpenCL, LaunchesAreQueuedAndReadingWaits) {
  NEED_OPENCL(dev);
  auto make = [](const std::string& device) {
    Tensor x = Tensor::arange(0, 4096, 1, dtypes::float32, device).reshape({64, 64}) / 4096;
    Tensor h = x;
    for (int i = 0; i < 4; i++) h = (h.matmul(x) + 1).relu().contiguous();  // a kernel each, freed as it is read
    return h.sum(1);
  };
  std::vector<float> want = make("CPU").to_vector<float>();
  Tensor t = make("OPENCL");
  int64_t before = dev->synchronizations(), kernels = GlobalCounters::kernel_count;
  t.realize();
  EXPECT_GE(GlobalCounters::kernel_count - kernels, 5);
  EXPECT_EQ(dev->synchronizations(), before) << "a launch waited";
  std::vector<float> got = t.to_vector<float>();
  EXPECT_GE(dev->synchronizations(), before + 1);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-4f * std::abs(want[i])) << i;
}

TEST(OpenCL, WithoutTheLibraryTheDeviceSaysWhatToInstall) {
  auto [ok, out] = device_missing_in_child("OPENCL", "TG_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1",
                                           {"cannot load the driver library", "apt-get install ocl-icd-libopencl1", "/nonexistent/libOpenCL.so.1"});
  EXPECT_TRUE(ok) << out;
}

TEST(OpenCL, TensorsMoveBetweenDevicesAndOpsBetweenThemRaise) {
  NEED_OPENCL(dev);
  Tensor a = Tensor({1.0f, 2.0f, 3.0f}).to("OPENCL");
  EXPECT_EQ(a.device(), "OPENCL");
  Tensor b = (a * 2 + 1).to("CPU");
  EXPECT_EQ(b.device(), "CPU");
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{3, 5, 7}));
  try {
    (void)(a + Tensor({1.0f, 1.0f, 1.0f}));
    FAIL() << "no error";
  } catch (const ArgumentError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("OPENCL"), std::string::npos) << m;
    EXPECT_NE(m.find("CPU"), std::string::npos) << m;
  }
}

// LOCAL cuts a global axis into work-groups: the values are a plain loop's
TEST(OpenCL, LocalWorkGroupsKeepTheValues) {
  NEED_OPENCL(dev);
  Tensor x = Tensor::arange(0, 48 * 20, 1, dtypes::float32, "CPU").reshape({48, 20});
  Tensor w = Tensor::arange(0, 20 * 36, 1, dtypes::float32, "CPU").reshape({20, 36}) / 100;
  std::vector<float> want = x.matmul(w).to_vector<float>();
  Tensor xc = x.to("OPENCL").realize(), wc = w.to("OPENCL").realize();
  schedule::Schedule s = schedule::create_schedule({xc.matmul(wc).uop()});
  const uop::UOp& ast = s.items.back().ast;
  codegen::LoweredKernel plain = codegen::lower(ast, {}, dev->caps());
  for (std::vector<codegen::Opt> opts : std::vector<std::vector<codegen::Opt>>{
           {{codegen::OptOp::LOCAL, 0, 4}}, {{codegen::OptOp::LOCAL, 1, 6}, {codegen::OptOp::LOCAL, 0, 2}},
           {{codegen::OptOp::LOCAL, 1, 4}, {codegen::OptOp::UPCAST, 1, 3}, {codegen::OptOp::UPCAST, 0, 2}},
           {{codegen::OptOp::VECTOR, 1, 4}, {codegen::OptOp::LOCAL, 1, 3}, {codegen::OptOp::UNROLL, 2, 4}}}) {
    ASSERT_TRUE(codegen::legal(plain, opts)) << codegen::opts_str(opts);
    auto k = engine::build_kernel(*dev, codegen::lower(ast, opts, dev->caps()), "local_test");
    EXPECT_GT(k->dims.local[0] * k->dims.local[1] * k->dims.local[2], 1) << k->rendered.source;
    EXPECT_NE(k->rendered.source.find("get_local_id"), std::string::npos);
    runtime::Buffer out(*dev, 48 * 36, dtypes::float32);
    std::vector<runtime::Buffer*> bufs{&out};
    for (const uop::UOp& b : std::vector<uop::UOp>(s.items.back().bufs.begin() + 1, s.items.back().bufs.end()))
      bufs.push_back(&runtime::buffer_of(b));
    engine::run_program(*k, bufs);
    std::vector<float> got = read(out);
    for (size_t i = 0; i < want.size(); i++) ASSERT_NEAR(got[i], want[i], 1e-3f * std::abs(want[i]) + 1e-4f) << codegen::opts_str(opts) << " at " << i;
  }
}

TEST(OpenCL, LocalBeyondTheDeviceIsNotLegal) {
  NEED_OPENCL(dev);
  Tensor x = Tensor::ones({8192}, dtypes::float32, "OPENCL").contiguous().realize();
  schedule::Schedule s = schedule::create_schedule({(x * 2).uop()});
  codegen::LoweredKernel k = codegen::lower(s.items.back().ast, {}, dev->caps());
  const runtime::DeviceCaps& caps = dev->caps();
  int64_t too_many = 2;
  while (too_many <= caps.max_local_size && too_many <= 8192) too_many *= 2;
  if (too_many <= 8192) {
    EXPECT_FALSE(codegen::legal(k, {{codegen::OptOp::LOCAL, 0, too_many}}));
  }
  EXPECT_TRUE(codegen::legal(k, {{codegen::OptOp::LOCAL, 0, 2}}));
  // and no LOCAL on a device without a grid
  codegen::LoweredKernel cpu = codegen::lower(s.items.back().ast);
  EXPECT_FALSE(codegen::legal(cpu, {{codegen::OptOp::LOCAL, 0, 2}}));
}

// BEAM times its candidates on the device; LOCAL is among the actions there, and the choice keeps the values.
// Only the matmul is searched (its inputs and the CPU's answer are made before), at a size with few divisors: each
// candidate is a PoCL compile, seconds each under ASan.
TEST(OpenCL, BeamSearchesOnTheDevice) {
  NEED_OPENCL(dev);
  Tensor a = (Tensor::arange(0, 8 * 3, 1, dtypes::float32, "OPENCL").reshape({8, 3}) / 100).realize();
  Tensor b = (Tensor::arange(0, 3 * 6, 1, dtypes::float32, "OPENCL").reshape({3, 6}) / 100).realize();
  std::vector<float> want = a.to("CPU").matmul(b.to("CPU")).to_vector<float>();
  Context ctx{{"BEAM_MIN_US", 0}, {"BEAM", 1}, {"XDG_CACHE_HOME", ::testing::TempDir() + "opencl_beam_" + std::to_string(::getpid())}};
  std::vector<float> got = a.matmul(b).to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) ASSERT_NEAR(got[i], want[i], 1e-4f * std::abs(want[i]) + 1e-5f) << i;
}

// TinyJit captures OpenCL kernels and the copies between devices, and replays them
TEST(OpenCL, TinyJitReplaysMixedDeviceWork) {
  NEED_OPENCL(dev);
  Tensor w = Tensor::arange(0, 12, 1, dtypes::float32, "CPU").reshape({3, 4}).realize();
  TinyJit<Tensor> f([&](const std::vector<Tensor>& in) {
    Tensor on_cl = (in[0].to("OPENCL") * 2).relu();  // copy to OpenCL, a kernel there
    return (on_cl.to("CPU") + w).sum(1).realize();   // back to the CPU, a kernel here
  });
  for (int call = 0; call < 4; call++) {
    std::vector<float> x(12);
    for (int i = 0; i < 12; i++) x[i] = static_cast<float>((i * 7 + call * 3) % 11) - 5.0f;
    Tensor in = Tensor(x, {3, 4});
    std::vector<float> got = f({in}).to_vector<float>();
    for (int r = 0; r < 3; r++) {
      float want = 0;
      for (int c = 0; c < 4; c++) want += std::max(0.0f, 2 * x[r * 4 + c]) + static_cast<float>(r * 4 + c);
      EXPECT_EQ(got[r], want) << "call " << call << " row " << r;
    }
  }
}

namespace {

// `make` realized on the CPU, and its last kernel on OpenCL with each list of opts, element by element
void check_opts_on_opencl(runtime::Device& dev, const std::function<Tensor(const std::string&)>& make,
                          const std::vector<std::vector<codegen::Opt>>& cases, float tol) {
  std::vector<float> want = make("CPU").to_vector<float>();
  Tensor t = make("OPENCL");
  schedule::Schedule s = schedule::create_schedule({t.uop()});
  for (size_t i = 0; i + 1 < s.items.size(); i++) {  // the inputs of the last kernel
    schedule::Schedule one;
    one.items = {s.items[i]};
    engine::run_schedule(one);
  }
  const schedule::ScheduleItem& last = s.items.back();
  codegen::LoweredKernel plain = codegen::lower(last.ast, {}, dev.caps());
  for (const std::vector<codegen::Opt>& opts : cases) {
    ASSERT_TRUE(codegen::legal(plain, opts)) << codegen::opts_str(opts);
    auto k = engine::build_kernel(dev, codegen::lower(last.ast, opts, dev.caps()), "opts_test");
    std::vector<runtime::Buffer*> bufs;
    for (const uop::UOp& b : last.bufs) bufs.push_back(&runtime::buffer_of(b));
    engine::run_program(*k, bufs);
    ASSERT_EQ(bufs[0]->dtype(), dtypes::float32);
    std::vector<float> got(bufs[0]->size());
    bufs[0]->copyout(got.data(), bufs[0]->nbytes());
    ASSERT_EQ(got.size(), want.size());
    for (size_t j = 0; j < want.size(); j++)
      ASSERT_NEAR(got[j], want[j], tol * (1 + std::abs(want[j]))) << codegen::opts_str(opts) << " at " << j << "\n" << k->rendered.source;
  }
}

// OpenCL memory is cl_mem, not host memory: from_blob says so instead of handing a host pointer to a kernel
TEST(OpenCL, FromBlobIsRefused) {
  NEED_OPENCL(dev);
  float data[2] = {1, 2};
  try {
    Tensor::from_blob(data, {2}, dtypes::float32, "OPENCL");
    FAIL() << "no error";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("not host memory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(Tensor::from_blob(data, {2}, dtypes::float32, "CPU").to("OPENCL").to_vector<float>(), (std::vector<float>{1, 2}));
}

}  // namespace

// GROUP / GROUPTOP share a reduce axis between a group's work-items through local memory and a barrier
TEST(OpenCL, GroupedReductionsKeepTheValues) {
  NEED_OPENCL(dev);
  using codegen::Opt;
  using codegen::OptOp;
  auto x = [](const std::string& d) { return (Tensor::arange(0, 24 * 96, 1, dtypes::float32, d).reshape({24, 96}) * 0.37f).sin(); };
  check_opts_on_opencl(*dev, [&](const std::string& d) { return x(d).sum(1); },
                       {{{OptOp::GROUP, 1, 16}}, {{OptOp::GROUPTOP, 1, 8}}, {{OptOp::GROUP, 1, 96}},
                        {{OptOp::GROUP, 1, 4}, {OptOp::LOCAL, 0, 6}}, {{OptOp::GROUPTOP, 1, 3}, {OptOp::UNROLL, 1, 4}, {OptOp::LOCAL, 0, 2}}},
                       1e-5f);
  check_opts_on_opencl(*dev, [&](const std::string& d) { return x(d).max(1); },
                       {{{OptOp::GROUP, 1, 32}}, {{OptOp::GROUPTOP, 1, 12}, {OptOp::LOCAL, 0, 4}}}, 0);
  // a column sum: the reduce axis is the outer one
  check_opts_on_opencl(*dev, [&](const std::string& d) { return x(d).sum(0); }, {{{OptOp::GROUP, 0, 8}}, {{OptOp::GROUPTOP, 0, 6}}}, 1e-5f);
  // a matmul's k axis shared by 8 work-items
  auto mm = [&](const std::string& d) { return x(d).reshape({24, 96}).matmul(x(d).reshape({96, 24})); };
  check_opts_on_opencl(*dev, mm, {{{OptOp::GROUP, 2, 8}}, {{OptOp::GROUP, 2, 4}, {OptOp::LOCAL, 1, 4}, {OptOp::LOCAL, 0, 2}}}, 1e-4f);
  // with UPCAST copies of the reduction: each copy keeps partial results of its own (rows, columns, matmul outputs)
  check_opts_on_opencl(*dev, [&](const std::string& d) { return x(d).sum(1); },
                       {{{OptOp::GROUP, 1, 16}, {OptOp::UPCAST, 0, 4}}, {{OptOp::UPCAST, 0, 3}, {OptOp::GROUPTOP, 1, 8}, {OptOp::LOCAL, 0, 2}},
                        {{OptOp::GROUP, 1, 8}, {OptOp::UPCAST, 0, 2}, {OptOp::UNROLL, 1, 4}}},
                       1e-5f);
  check_opts_on_opencl(*dev, [&](const std::string& d) { return x(d).max(0); }, {{{OptOp::GROUPTOP, 0, 6}, {OptOp::UPCAST, 1, 4}}}, 0);
  check_opts_on_opencl(*dev, mm,
                       {{{OptOp::GROUP, 2, 8}, {OptOp::UPCAST, 1, 4}, {OptOp::UPCAST, 0, 2}},
                        {{OptOp::UPCAST, 0, 3}, {OptOp::LOCAL, 1, 4}, {OptOp::GROUPTOP, 2, 4}}},
                       1e-4f);
  // float16 values: partial results in local memory as float
  check_opts_on_opencl(*dev, [&](const std::string& d) { return x(d).cast(dtypes::float16).sum(1).cast(dtypes::float32); }, {{{OptOp::GROUP, 1, 16}}}, 2e-3f);
}

TEST(OpenCL, GroupIsLegalOnlyWhereItFits) {
  NEED_OPENCL(dev);
  using codegen::OptOp;
  Tensor x = Tensor::ones({64, 64}, dtypes::float32, "OPENCL").contiguous().realize();
  schedule::Schedule s = schedule::create_schedule({x.sum(1).uop()});
  codegen::LoweredKernel k = codegen::lower(s.items.back().ast, {}, dev->caps());
  EXPECT_TRUE(codegen::legal(k, {{OptOp::GROUP, 1, 16}}));
  EXPECT_FALSE(codegen::legal(k, {{OptOp::GROUP, 0, 16}}));                            // not a reduce axis
  EXPECT_TRUE(codegen::legal(k, {{OptOp::GROUP, 1, 16}, {OptOp::UPCAST, 0, 4}}));      // copies: slots of their own
  EXPECT_FALSE(codegen::legal(k, {{OptOp::GROUP, 1, 16}, {OptOp::VECTOR, 0, 4}}));     // vector lanes: none
  EXPECT_FALSE(codegen::legal(k, {{OptOp::GROUP, 1, 16}, {OptOp::VECTOR, 1, 4}}));
  EXPECT_FALSE(codegen::legal(k, {{OptOp::GROUP, 1, 4}, {OptOp::GROUPTOP, 1, 4}}));    // one per kernel
  runtime::DeviceCaps small = dev->caps();
  small.local_memory = 16 * 8;  // one float64 per work-item of the group fits, four copies of it do not
  k.caps = small;
  EXPECT_TRUE(codegen::legal(k, {{OptOp::GROUP, 1, 16}}));
  EXPECT_FALSE(codegen::legal(k, {{OptOp::GROUP, 1, 16}, {OptOp::UPCAST, 0, 4}}));
  small.local_memory = 16 * 8 - 1;
  k.caps = small;
  EXPECT_FALSE(codegen::legal(k, {{OptOp::GROUP, 1, 16}}));
  codegen::LoweredKernel cpu = codegen::lower(s.items.back().ast);
  EXPECT_FALSE(codegen::legal(cpu, {{OptOp::GROUP, 1, 16}}));
  // the heuristic groups a reduction with few outputs on a GPU (not on PoCL's CPU device, where it is slower)
  Tensor wide = Tensor::ones({4, 4096}, dtypes::float32, "OPENCL").contiguous().realize();
  schedule::Schedule ws = schedule::create_schedule({wide.sum(1).uop()});
  runtime::DeviceCaps gpu = dev->caps();
  gpu.gpu = true;
  std::vector<codegen::Opt> chosen = codegen::choose_opts(codegen::lower(ws.items.back().ast, {}, gpu));
  EXPECT_EQ(codegen::opts_str(chosen), "GROUP(1,64)");
  gpu.gpu = false;
  EXPECT_EQ(codegen::opts_str(codegen::choose_opts(codegen::lower(ws.items.back().ast, {}, gpu))).find("GROUP"), std::string::npos);
}

// On a GPU every output block is a work-item: the CPU's register blocks shrink to at most 4 copies per axis, and
// further while fewer than 16384 work-items would be left (float4 vectors stay)
TEST(OpenCL, GpuBlocksLeaveThousandsOfWorkItems) {
  NEED_OPENCL(dev);
  using codegen::OptOp;
  auto matmul_opts = [&](int64_t n, bool gpu) {
    Tensor a = Tensor::ones({n, n}, dtypes::float32, "OPENCL").contiguous().realize();
    Tensor b = Tensor::ones({n, n}, dtypes::float32, "OPENCL").contiguous().realize();
    schedule::Schedule s = schedule::create_schedule({a.matmul(b).uop()});
    runtime::DeviceCaps caps = dev->caps();
    caps.gpu = gpu;
    if (gpu) caps.max_vector = 4;  // a GPU's float4 (PoCL's device says 16)
    codegen::LoweredKernel k = codegen::lower(s.items.back().ast, {}, caps);
    std::vector<codegen::Opt> opts = codegen::choose_opts(k);
    EXPECT_TRUE(codegen::legal(k, opts)) << codegen::opts_str(opts);
    int64_t work_items = n * n, most = 1;  // the outputs over the global axes' UPCAST/VECTOR lanes
    for (const codegen::Opt& o : opts)
      if ((o.op == OptOp::UPCAST || o.op == OptOp::VECTOR) && o.axis < 2) work_items /= o.amount, most = std::max(most, o.amount);
    return std::pair{work_items, most};
  };
  EXPECT_EQ(matmul_opts(64, true).first, 64 * 64 / 4);  // a float4 and no block: 4096 outputs are too few already
  auto [items, most] = matmul_opts(512, true);
  EXPECT_GE(items, 16384);
  EXPECT_LE(most, 4);
  EXPECT_LT(items, 512 * 512);  // blocked all the same
  EXPECT_LT(matmul_opts(64, false).first, 64 * 64 / 16);  // a CPU blocks the small one: few loops, many copies
}
