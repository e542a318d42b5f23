// The realize loop's DEBUG output, and index math wide enough for large tensors.
#include <gtest/gtest.h>

#include <tg/tg.h>

#include "engine/kernel_cache.h"
#include "runtime/device.h"
#include "schedule/schedule.h"

using namespace tg;

TEST(Engine, DebugLevelsPrintCountsKernelsScheduleSourceAndUops) {
  Tensor a = Tensor::arange(12).cast(dtypes::float32).reshape({3, 4}).contiguous().realize();
  auto run = [&](int level, float k) {
    Context ctx{{"DEBUG", level}};
    ::testing::internal::CaptureStderr();
    ((a * k).sum(1) + 1).realize();  // a fresh constant: a fresh kernel, so it is compiled (and printed) now
    return ::testing::internal::GetCapturedStderr();
  };
  std::string d1 = run(1, 1.5f), d2 = run(2, 2.5f), d3 = run(3, 3.5f), d4 = run(4, 4.5f), d5 = run(5, 5.5f);
  EXPECT_NE(d1.find("realize: 1 kernels"), std::string::npos) << d1;
  EXPECT_EQ(d1.find("GFLOP/s"), std::string::npos) << d1;
  EXPECT_NE(d2.find("r_3_4"), std::string::npos) << d2;
  EXPECT_NE(d2.find("GFLOP/s"), std::string::npos) << d2;
  EXPECT_NE(d2.find("GB/s"), std::string::npos) << d2;
  EXPECT_NE(d2.find("VECTOR(1,4)"), std::string::npos) << d2;  // the opts applied: the contiguous sum as a vector
  EXPECT_NE(d3.find("loops (3, 4), opts [VECTOR(1,4)]"), std::string::npos) << d3;
  EXPECT_NE(d3.find("schedule item 0: kernel"), std::string::npos) << d3;
  EXPECT_NE(d3.find("Ops.REDUCE_AXIS"), std::string::npos) << d3;
  EXPECT_NE(d4.find("void r_3_4"), std::string::npos) << d4;
  EXPECT_NE(d5.find("Ops.STORE"), std::string::npos) << d5;
  EXPECT_EQ(run(0, 6.5f), "");
}

TEST(Engine, CountersAddUp) {
  Tensor a = Tensor::arange(256).cast(dtypes::float32).contiguous().realize();
  GlobalCounters::reset();
  (a * 2 + 1).realize();
  EXPECT_EQ(GlobalCounters::kernel_count, 1);
  EXPECT_EQ(GlobalCounters::global_ops, 2 * 256);     // a MUL and an ADD per element
  EXPECT_EQ(GlobalCounters::global_mem, 2 * 256 * 4);  // read a, write the result
  EXPECT_GT(GlobalCounters::time_sum_s, 0);
}

TEST(Engine, LoopsPastInt32UseInt64Indices) {
  // 3e9 positions: the loop counter and the index math must be 64-bit (compiled here, not run)
  Tensor big = Tensor::ones({1}, dtypes::int8).expand({3000000000}) + 1;
  schedule::Schedule s = schedule::create_schedule({big.uop()});
  ASSERT_EQ(s.items.size(), 1u);
  std::string src = engine::get_kernel(s.items[0].ast, runtime::get_device("CPU"))->rendered.source;
  // (the loop is the one threads split: it runs from core_start to core_end, 3000000000LL when not split)
  EXPECT_NE(src.find("for (long long ridx0 = core_start; ridx0 < core_end;"), std::string::npos) << src;
  EXPECT_NE(src.find("vars ? vars[1] : 3000000000LL"), std::string::npos) << src;
  // small tensors keep int32 indices
  Tensor small = Tensor::ones({1}, dtypes::int8).expand({3000}) + 1;
  s = schedule::create_schedule({small.uop()});
  src = engine::get_kernel(s.items[0].ast, runtime::get_device("CPU"))->rendered.source;
  // ... and bounds of their type: an int counter against an int64 end may wrap under -fwrapv, and the C compiler
  // then cannot count the trips and does not vectorize the loop
  EXPECT_NE(src.find("for (int ridx0 = (int)core_start; ridx0 < (int)core_end;"), std::string::npos) << src;
}
