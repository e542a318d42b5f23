// The CUDA device: its launch shapes and, where the NVIDIA driver is missing, the error that says what to install;
// on a machine with a GPU, hand-written kernels, variables, timing and errors (skipped where there is none). The
// value suites run on it through ctest's cuda.* entries (DEV=CUDA).
#include <gtest/gtest.h>

#include <numeric>

#include "engine/render_check.h"
#include "runtime/buffer.h"
#include "runtime/cuda.h"
#include "support/device_test.h"
#include "tg/tg.h"

using namespace tg;

#define NEED_CUDA(dev) NEED_DEVICE(dev, "CUDA")

TEST(Cuda, LaunchShapesDivideTheGridIntoBlocks) {
  runtime::DeviceCaps gpu = engine::cuda_gpu_caps();  // an H100's limits
  auto shape = [&](std::array<int64_t, 3> global, std::array<int64_t, 3> local = {0, 0, 0}) {
    runtime::LaunchDims d;
    d.global = global, d.local = local;
    return runtime::cuda_launch_shape(d, gpu);
  };
  runtime::CudaLaunch l = shape({1000, 3, 80});  // the driver's choice: divisors, x first, 256 threads at most
  EXPECT_EQ(l.threads[0], 250u);
  EXPECT_EQ(l.blocks[0], 4u);
  EXPECT_EQ(l.threads[1] * l.blocks[1], 3u);
  EXPECT_EQ(l.threads[2] * l.blocks[2], 80u);
  EXPECT_LE(l.threads[0] * l.threads[1] * l.threads[2], 256u);
  l = shape({3, 1, 80});  // z holds at most 64 threads a block
  EXPECT_LE(l.threads[2], 64u);
  EXPECT_EQ(l.threads[2] * l.blocks[2], 80u);
  l = shape({7919, 1, 1});  // a prime: blocks of one thread
  EXPECT_EQ(l.threads[0], 1u);
  EXPECT_EQ(l.blocks[0], 7919u);
  l = shape({256, 200000, 1});  // y past 65535 blocks: larger blocks there, within 1024 threads in all
  EXPECT_EQ(l.threads[1] * l.blocks[1], 200000u);
  EXPECT_LE(l.blocks[1], 65535u);
  EXPECT_LE(l.threads[0] * l.threads[1] * l.threads[2], 1024u);
  EXPECT_THROW(shape({1, 65537 * 2, 1}), DeviceError);  // 2 x a prime above 65535: no split into <= 65535 blocks
  l = shape({64, 32, 1}, {16, 2, 1});  // the kernel's work-groups
  EXPECT_EQ(l.threads, (std::array<unsigned, 3>{16, 2, 1}));
  EXPECT_EQ(l.blocks, (std::array<unsigned, 3>{4, 16, 1}));
}

TEST(Cuda, WithoutTheDriverTheDeviceSaysWhatToInstall) {
  auto [ok, out] = device_missing_in_child("CUDA", "TG_CUDA_LIBRARY=/nonexistent/libcuda.so.1",
                                           {"cannot load the driver library", "NVIDIA driver", "/nonexistent/libcuda.so.1"});
  EXPECT_TRUE(ok) << out;
}

// On a GPU: a hand-written kernel over a grid of blocks, with a variable after the buffers, timed by events
TEST(Cuda, AHandWrittenKernelRunsWithVariablesAndTiming) {
  NEED_CUDA(dev);
  EXPECT_EQ(dev->caps().dialect, "CUDA");
  const char* src = R"CU(extern "C" __global__ void axpb(float* out, const float* a, const long long b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = a[i] * 2.0f + (float)b;
})CU";
  const size_t n = 1000;
  std::vector<float> a(n);
  std::iota(a.begin(), a.end(), -500.0f);
  runtime::Buffer out(*dev, n, dtypes::float32), ba(*dev, n, dtypes::float32);
  ba.copyin(a.data(), n * 4);
  void* bufs[] = {out.ptr(), ba.ptr()};
  int64_t vars[] = {7};
  runtime::LaunchDims dims;
  dims.global = {static_cast<int64_t>(n), 1, 1}, dims.n_bufs = 2, dims.n_vars = 1;
  double t = (*dev->program("axpb", src))(bufs, vars, dims, true);
  EXPECT_GT(t, 0.0);
  std::vector<float> got(n);
  out.copyout(got.data(), n * 4);
  for (size_t i = 0; i < n; i++) ASSERT_EQ(got[i], a[i] * 2 + 7) << i;
}

// On a GPU: tensors move between the CPU and CUDA, compute there (queued; reading waits), and match the CPU
TEST(Cuda, TensorsComputeOnTheGpuAsOnTheCpu) {
  NEED_CUDA(dev);
  auto make = [](const std::string& device) {
    Tensor x = Tensor::arange(0, 4096, 1, dtypes::float32, device).reshape({64, 64}) / 4096;
    return (x.matmul(x.T()) + 1).relu().softmax(1).sum(0);
  };
  std::vector<float> want = make("CPU").to_vector<float>();
  Tensor t = make("CUDA");
  int64_t before = dev->synchronizations();
  t.realize();
  EXPECT_EQ(dev->synchronizations(), before) << "a launch waited";
  std::vector<float> got = t.to("CPU").to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << i;
  EXPECT_THROW(Tensor::ones({3}, dtypes::float32, "CUDA") + Tensor::ones({3}), ArgumentError);
}

// On a GPU: copies of several staging buffers' worth (8 MiB each, odd sizes, a slice at an odd offset) arrive
// whole both ways, and in order with the kernels around them
TEST(Cuda, LargeCopiesRoundTripThroughTheStagingBuffers) {
  NEED_CUDA(dev);
  const int64_t n = 5'500'003;  // 22 MB: two full buffers and a part of one
  Tensor host = Tensor::arange(0, n, 1, dtypes::int32).realize();
  Tensor gpu = (host.to("CUDA") * 3).realize();  // a kernel behind the copy in
  std::vector<int32_t> back = (gpu + 1).to("CPU").to_vector<int32_t>(), part = gpu.shrink({{7, n - 5}}).to("CPU").to_vector<int32_t>();
  ASSERT_EQ(back.size(), static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) ASSERT_EQ(back[i], 3 * i + 1) << i;
  ASSERT_EQ(part.size(), static_cast<size_t>(n - 12));
  for (int64_t i = 0; i < n - 12; i++) ASSERT_EQ(part[i], 3 * (i + 7)) << i;
}

// On a GPU: grids with more than 65535 blocks' worth of work in an outer dimension (their outer axes move to x)
// compute as on the CPU, elementwise and reduced
TEST(Cuda, GridsPastTheBlockLimitsComputeAsOnTheCpu) {
  NEED_CUDA(dev);
  auto make = [](const std::string& device) {
    Tensor x = Tensor::arange(0, 70001 * 24, 1, dtypes::float32, device).reshape({70001, 3, 8}) * 0.001f;
    return std::vector<Tensor>{(x * 2 + 1).contiguous(), x.sum(2), x.reshape({70001, 24}).max(1)};
  };
  std::vector<Tensor> want = make("CPU"), got = make("CUDA");
  for (size_t i = 0; i < want.size(); i++) {
    std::vector<float> w = want[i].to_vector<float>(), g = got[i].to("CPU").to_vector<float>();
    ASSERT_EQ(g.size(), w.size());
    for (size_t j = 0; j < w.size(); j++) ASSERT_NEAR(g[j], w[j], 1e-5f * (1 + std::abs(w[j]))) << "result " << i << " at " << j;
  }
}

// On a GPU, in a fresh process (CUDA keeps a kernel's fault for the rest of the process): a kernel that writes
// through a null pointer fails at the next wait with an error naming it and saying the device is lost; later uses
// of the device say so at once; the CPU goes on
TEST(Cuda, AFaultingKernelIsNamedAndLosesTheDeviceClearly) {
  NEED_CUDA(dev);
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child starts afresh (exec), not as a fork of a CUDA process
  auto fault = [] {
    runtime::Device& gpu = runtime::get_device("CUDA");
    const char* src = R"CU(extern "C" __global__ void writes_to_null(float* out) { ((volatile float*)0)[threadIdx.x] = out[0]; })CU";
    runtime::Buffer out(gpu, 1, dtypes::float32);
    void* bufs[] = {out.ptr()};
    runtime::LaunchDims dims;
    dims.global = {32, 1, 1}, dims.n_bufs = 1;
    (*gpu.program("writes_to_null", src))(bufs, nullptr, dims);
    std::string first, later;
    try {
      gpu.synchronize();
    } catch (const DeviceError& e) {
      first = e.what();
    }
    try {
      (Tensor({1.0f}).to("CUDA") + 1).to("CPU").realize();
    } catch (const DeviceError& e) {
      later = e.what();
    }
    bool cpu = (Tensor({1.0f, 2.0f}) * 2).to_vector<float>() == std::vector<float>{2, 4};
    std::fprintf(stderr, "first: %s\nlater: %s\n", first.c_str(), later.c_str());
    bool ok = first.find("writes_to_null") != std::string::npos && first.find("every later use") != std::string::npos &&
              later.find("earlier error") != std::string::npos && cpu;
    std::exit(ok ? 0 : 1);
  };
  EXPECT_EXIT(fault(), ::testing::ExitedWithCode(0), "first: .*writes_to_null");
}

// On a GPU: an allocation beyond its memory is out of memory, and the device goes on
TEST(Cuda, AnAllocationBeyondTheGpuIsOutOfMemory) {
  NEED_CUDA(dev);
  try {
    runtime::Buffer huge(*dev, size_t{1} << 50, dtypes::float32);
    huge.ptr();
    FAIL() << "no error";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
  EXPECT_EQ((Tensor({1.0f, 2.0f}).to("CUDA") * 3).to("CPU").to_vector<float>(), (std::vector<float>{3, 6}));
}
