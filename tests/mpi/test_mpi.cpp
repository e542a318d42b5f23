// tg::mpi under `mpirun -np 2` (ctest mpi.*): allreduce against sums computed on the host for every dtype and odd
// sizes, shapes that differ between ranks, and data-parallel training that keeps the ranks' parameters identical
// and equal to one process training on the whole batch. Every test skips when not started by mpirun.
// TG_MPI_TEST_FAULT=die|stall makes MPI.AFaultEndsTheJob's rank 1 die or stall (ctest checks the job ends).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <thread>

#include "tg/tg.h"

using namespace tg;

#define NEED_MPI() \
  if (!mpi::launched() || mpi::size() < 2) GTEST_SKIP() << "not started by mpirun with 2 or more ranks"

namespace {

// rank r's value at i: distinct per rank and element, exact in every dtype tested
double value(int r, int64_t i) { return static_cast<double>((i * 7 + r * 13) % 61) - 30; }

// a model trained data-parallel over the ranks and its reference, the same weights trained on the whole batch in
// one process, each with SGD
struct DataParallel {
  nn::Linear model{6, 3}, reference{6, 3};
  std::vector<Tensor> params, ref_params;
  optim::LARS opt, ref_opt;
  explicit DataParallel(uint64_t seed)
      : model((Tensor::manual_seed(seed), nn::Linear(6, 3))), reference(copy_of(model)), params{model.weight, model.bias},
        ref_params{reference.weight, reference.bias}, opt(init(params)), ref_opt(init(ref_params)) {}
  static nn::Linear copy_of(const nn::Linear& from) {
    nn::Linear to(6, 3);
    to.weight.assign(from.weight).realize();
    to.bias.assign(from.bias).realize();
    return to;
  }
  static optim::LARS init(std::vector<Tensor>& ps) {
    for (Tensor& p : ps) p.requires_grad_();
    return optim::SGD(ps, 0.1);
  }
  // after training: every rank holds the same parameters, the one-process reference's
  void expect_identical_ranks_equal_to_one_process() {
    for (size_t i = 0; i < params.size(); i++) {
      std::vector<float> p = params[i].to_vector<float>(), hi = mpi::allreduce(params[i], "max").to_vector<float>(),
                         lo = mpi::allreduce(params[i], "min").to_vector<float>(), ref = ref_params[i].to_vector<float>();
      for (size_t j = 0; j < p.size(); j++) {
        ASSERT_EQ(hi[j], lo[j]) << "ranks differ at parameter " << i << " element " << j;
        ASSERT_NEAR(p[j], ref[j], 1e-5f) << "parameter " << i << " element " << j;
      }
    }
  }
};

}  // namespace

TEST(MPI, AllreduceMatchesTheHostForEveryDtypeAndOddSizes) {
  NEED_MPI();
  for (DType dt : {dtypes::float32, dtypes::float64, dtypes::int32, dtypes::int64, dtypes::int16, dtypes::float16, dtypes::bfloat16})
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{4099}, int64_t{1} << 20}) {
      std::vector<double> mine(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; i++) mine[static_cast<size_t>(i)] = value(mpi::rank(), i);
      Tensor x = Tensor(mine, {n}).cast(dt);
      std::vector<double> sum = Tensor(mpi::allreduce(x, "sum")).cast(dtypes::float64).to_vector<double>();
      std::vector<double> most = mpi::allreduce(x, "max").cast(dtypes::float64).to_vector<double>();
      for (int64_t i = 0; i < n; i++) {
        double want = 0, hi = -1e9;
        for (int r = 0; r < mpi::size(); r++) want += value(r, i), hi = std::max(hi, value(r, i));
        ASSERT_EQ(sum[static_cast<size_t>(i)], want) << dt.name() << " n=" << n << " at " << i;
        ASSERT_EQ(most[static_cast<size_t>(i)], hi) << dt.name() << " n=" << n << " at " << i;
      }
    }
  // a 0-d tensor and an empty one
  EXPECT_EQ(mpi::allreduce(Tensor(2.5f)).item<float>(), 2.5f * static_cast<float>(mpi::size()));
  EXPECT_EQ(mpi::allreduce(Tensor::zeros({0, 3})).numel(), 0);
}

TEST(MPI, ShapesThatDifferBetweenRanksAreNamedOnEveryRank) {
  NEED_MPI();
  Tensor x = mpi::rank() == 0 ? Tensor::ones({3, 4}) : Tensor::ones({4, 3});
  try {
    mpi::allreduce(x);
    FAIL() << "no error";
  } catch (const ArgumentError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("ranks disagree"), std::string::npos) << what;
    EXPECT_NE(what.find(mpi::rank() == 0 ? "(3, 4)" : "(4, 3)"), std::string::npos) << what;
  }
  EXPECT_THROW(mpi::allreduce(Tensor::ones({2}), "mean"), ArgumentError);
}

// each rank takes its half of a batch; averaged gradients make every rank's step the full batch's step
TEST(MPI, DataParallelTrainingKeepsTheRanksIdenticalAndEqualToOneProcess) {
  NEED_MPI();
  DataParallel t(7);
  auto& [model, reference, params, ref_params, opt, ref_opt] = t;
  int n = mpi::size();
  for (int step = 0; step < 3; step++) {
    Tensor::manual_seed(100 + static_cast<uint64_t>(step));
    Tensor batch = Tensor::randn({4 * n, 6}).realize(), target = Tensor::randn({4 * n, 3}).realize();
    Tensor mine = batch.shrink({{4 * mpi::rank(), 4 * mpi::rank() + 4}, {0, 6}});
    Tensor my_target = target.shrink({{4 * mpi::rank(), 4 * mpi::rank() + 4}, {0, 3}});
    opt.zero_grad();
    ((model(mine) - my_target).square().mean()).backward();
    mpi::allreduce_gradients(params);
    opt.step();
    ref_opt.zero_grad();
    ((reference(batch) - target).square().mean()).backward();
    ref_opt.step();
  }
  t.expect_identical_ranks_equal_to_one_process();
}

// the allreduce is an op of the graph: lazy until realized, differentiable (a sum's gradient is the sum of the
// ranks' gradients, as torch.distributed.nn's all_reduce), and a TinyJit replays it with the rest of a step
TEST(MPI, AllreduceIsALazyDifferentiableOpOfTheGraph) {
  NEED_MPI();
  int n = mpi::size();
  Tensor x = Tensor(std::vector<float>{1.0f + static_cast<float>(mpi::rank()), 2.0f}, {2}).requires_grad_();
  Tensor w(std::vector<float>{3.0f * static_cast<float>(mpi::rank() + 1), -1.0f}, {2});
  Tensor y = mpi::allreduce(x * 2.0f);
  float w_sum = 0;
  for (int r = 0; r < n; r++) w_sum += 3.0f * static_cast<float>(r + 1);
  (y * w).sum().backward();
  std::vector<float> g = x.grad().to_vector<float>(), v = y.to_vector<float>();
  float x0_sum = 0;
  for (int r = 0; r < n; r++) x0_sum += 1.0f + static_cast<float>(r);
  EXPECT_EQ(v[0], 2.0f * x0_sum);
  EXPECT_EQ(v[1], 4.0f * static_cast<float>(n));
  EXPECT_EQ(g[0], 2.0f * w_sum);
  EXPECT_EQ(g[1], -2.0f * static_cast<float>(n));
  EXPECT_THROW(mpi::allreduce(x, "max").sum().backward(), ArgumentError);
}

TEST(MPI, ATinyJitReplaysAWholeDataParallelStep) {
  NEED_MPI();
  DataParallel t(11);
  auto& [model, reference, params, ref_params, opt, ref_opt] = t;
  int n = mpi::size();
  // the forward, the backward, the gradients' allreduce and the update in one function: replayed from the third call
  TinyJit<> step([&](const std::vector<Tensor>& in) {
    opt.zero_grad();
    Tensor loss = (model(in[0]) - in[1]).square().mean();
    loss.backward();
    mpi::allreduce_gradients(params);
    opt.step();
    return mpi::allreduce(loss.detach()) / static_cast<double>(n);
  });
  for (int s = 0; s < 5; s++) {
    Tensor::manual_seed(200 + static_cast<uint64_t>(s));
    Tensor batch = Tensor::randn({4 * n, 6}).realize(), target = Tensor::randn({4 * n, 3}).realize();
    Tensor mine = batch.shrink({{4 * mpi::rank(), 4 * mpi::rank() + 4}, {0, 6}}).contiguous().realize();
    Tensor my_target = target.shrink({{4 * mpi::rank(), 4 * mpi::rank() + 4}, {0, 3}}).contiguous().realize();
    float loss = step({mine, my_target}).item<float>();
    ref_opt.zero_grad();
    Tensor ref_loss = (reference(batch) - target).square().mean();
    ref_loss.backward();
    ref_opt.step();
    EXPECT_NEAR(loss, ref_loss.item<float>(), 1e-5f) << "step " << s;
  }
  EXPECT_GT(step.kernel_count(), 0u);
  t.expect_identical_ranks_equal_to_one_process();
}

// a rank that dies or stalls ends the job (ctest mpi.*_rank_ends_the_job check that it ends, and how fast)
TEST(MPI, AFaultEndsTheJob) {
  NEED_MPI();
  const char* fault = std::getenv("TG_MPI_TEST_FAULT");
  if (!fault) GTEST_SKIP() << "TG_MPI_TEST_FAULT is not set";
  if (mpi::rank() == 1) {
    if (std::string(fault) == "die") _exit(3);
    std::this_thread::sleep_for(std::chrono::seconds(600));
  }
  mpi::allreduce(Tensor::ones({16}));
  FAIL() << "the collective returned without rank 1";
}
