// The language models without PyTorch (its logits are checked by ctest llm.reference.*): decode against forward on
// random weights, the cache and the TinyJit replay, sampling statistics, and every bad input naming what is wrong.
#include <map>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <random>

#include "support/expect_error.h"
#include "support/scratch.h"
#include "runtime/device.h"
#include "tg/counters.h"
#include "tg/llm.h"
#include "tg/state.h"

using tg::Tensor;
using tg::testing::expect_error;
using tg::testing::scratch_path;
namespace llm = tg::llm;

namespace {

llm::Config tiny(const std::string& arch) {
  llm::Config c;
  c.arch = arch, c.vocab_size = 50, c.dim = 32, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = arch == "llama" ? 2 : 4;
  c.head_dim = 8, c.hidden_dim = 64, c.max_context = 24, c.tie_embeddings = arch == "gpt2";
  return c;
}

std::vector<float> last_row(const Tensor& logits) {  // (1, T, V) -> the last position's V values
  std::vector<float> all = logits.to_vector<float>();
  size_t v = static_cast<size_t>(logits.shape().back());
  return {all.end() - static_cast<std::ptrdiff_t>(v), all.end()};
}

void expect_close(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  double scale = 0, worst = 0;
  for (size_t i = 0; i < a.size(); i++) scale = std::max(scale, std::fabs(double(b[i]))), worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
  EXPECT_LE(worst, 1e-5 * std::max(scale, 1.0)) << what;
}

std::string write(const std::string& name, const std::string& text) {
  std::string path = scratch_path(name);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
  return path;
}

// programs looked up through the compiler caches so far: a TinyJit replay looks up none
int64_t compile_lookups() {
  const tg::runtime::CompileStats& s = tg::runtime::compile_stats();
  return s.compiled + s.disk_hits + s.memory_hits;
}

const char* kGpt2Config = R"({"model_type": "gpt2", "vocab_size": 50, "n_positions": 24, "n_embd": 32, "n_layer": 2, "n_head": 4,
                          "n_inner": 64})";

}  // namespace

// Generation's two paths agree: the cached decode of each token equals forward() of the whole sequence at once
// (which sees no cache), for both architectures, with and without TinyJit.
TEST(Llm, DecodeWithTheCacheEqualsTheWholeSequence) {
  for (std::string arch : {"gpt2", "llama"})
    for (bool jit : {false, true}) {
      Tensor::manual_seed(1);
      auto model = llm::make_model(tiny(arch));
      std::vector<int32_t> seq{3, 14, 15, 9, 26, 5, 35, 8, 41, 19};
      llm::Generator gen(*model, 0, jit);
      std::vector<float> logits = gen.prefill({seq[0], seq[1], seq[2]});
      for (size_t n = 3; n < seq.size(); n++) logits = gen.step(seq[n]);
      EXPECT_EQ(gen.position(), static_cast<int64_t>(seq.size()));
      model->allocate_cache(1);
      Tensor whole = model->forward(Tensor(seq, {1, static_cast<int64_t>(seq.size())}), 0);
      expect_close(logits, last_row(whole), arch + (jit ? " jit" : ""));
    }
}

// A prompt goes in as chunks of one length from any position (the last padded, or started earlier where it would
// pass the cache's end): the logits after it equal forward() of the whole sequence, for prompts of every length,
// and after the first prompts no new length compiles anything.
TEST(Llm, PromptsOfAnyLengthRunTheSameChunkKernels) {
  for (std::string arch : {"gpt2", "llama"})
    for (bool jit : {false, true}) {
      Tensor::manual_seed(2);
      auto model = llm::make_model(tiny(arch));  // context 24: chunks of 12
      std::vector<int32_t> seq;
      for (int32_t i = 0; i < 24; i++) seq.push_back((i * 7 + 3) % 50);
      std::vector<std::vector<float>> want(seq.size() + 1);
      model->allocate_cache(1);
      Tensor whole = model->forward(Tensor(seq, {1, 24}), 0).realize();
      int64_t looked_up = 0;
      // (start, length): one chunk, two, one past a chunk, a prompt ending at the cache's end, a prompt after steps
      std::vector<std::pair<int64_t, int64_t>> cases{{0, 5}, {0, 12}, {0, 13}, {3, 21}, {0, 1}, {7, 9}, {20, 4}};
      for (size_t c = 0; c < cases.size(); c++) {
        auto [start, length] = cases[c];
        llm::Generator gen(*model, 0, jit);
        if (start > 0) gen.prefill(std::vector<int32_t>(seq.begin(), seq.begin() + start));
        if (c == 3) looked_up = compile_lookups();  // every form has run (and been captured) by now
        std::vector<float> logits = gen.prefill(std::vector<int32_t>(seq.begin() + start, seq.begin() + start + length));
        EXPECT_EQ(gen.position(), start + length);
        std::vector<float> all = whole.to_vector<float>();
        size_t v = 50, row = static_cast<size_t>(start + length - 1);
        expect_close(logits, std::vector<float>(all.begin() + row * v, all.begin() + (row + 1) * v),
                     arch + (jit ? " jit" : "") + " prompt of " + std::to_string(length) + " at " + std::to_string(start));
      }
      if (jit) {
        EXPECT_EQ(compile_lookups(), looked_up) << arch << ": a new prompt length compiled";
      }
    }
}

// A cache that holds two long chunks (128 tokens) takes a long prompt in long chunks while 128 tokens are left, then
// in short ones: the logits after it equal forward() of the whole sequence all the same.
TEST(Llm, LongPromptsRunInLongChunks) {
  for (bool jit : {false, true}) {
    Tensor::manual_seed(3);
    llm::Config c = tiny("llama");
    c.max_context = 300;
    auto model = llm::make_model(c);
    std::vector<int32_t> seq;
    for (int32_t i = 0; i < 300; i++) seq.push_back((i * 13 + 5) % 50);
    model->allocate_cache(1);
    std::vector<float> all = model->forward(Tensor(seq, {1, 300}), 0).to_vector<float>();
    // (start, length): 2 long chunks and a short one of 8; a long, a 32, two 8s and a padded 8 after a 7-token
    // prompt; three 32s and a padded 8
    std::vector<int64_t> launched;
    for (auto [start, length] : std::vector<std::pair<int64_t, int64_t>>{{0, 264}, {7, 180}, {0, 100}}) {
      llm::Generator gen(*model, 0, jit);
      if (start > 0) gen.prefill(std::vector<int32_t>(seq.begin(), seq.begin() + start));
      int64_t before = tg::GlobalCounters::kernel_count;
      std::vector<float> logits = gen.prefill(std::vector<int32_t>(seq.begin() + start, seq.begin() + start + length));
      launched.push_back(tg::GlobalCounters::kernel_count - before);
      size_t v = 50, row = static_cast<size_t>(start + length - 1);
      expect_close(logits, std::vector<float>(all.begin() + row * v, all.begin() + (row + 1) * v),
                   std::string(jit ? "jit" : "") + " prompt of " + std::to_string(length) + " at " + std::to_string(start));
    }
    // every chunk runs the same kernels: 264 tokens as 3 chunks launch fewer than 100 as 4 (as 33 short ones, more)
    EXPECT_LT(launched[0], launched[2]) << (jit ? "jit" : "");
  }
}

// A decode step reads only the cached positions so far (a symbolic shrink to start_pos + 1): its work grows with the
// position, while one captured set of kernels serves every position (no compile after the capture).
TEST(Llm, DecodeReadsOnlyThePositionsSoFar) {
  Tensor::manual_seed(4);
  auto model = llm::make_model(tiny("llama"));
  llm::Generator gen(*model);  // the model's context: 24
  gen.prefill({7});
  std::vector<int64_t> ops;
  int64_t compiled = 0;
  for (int32_t i = 0; i < 22; i++) {
    if (i == 3) compiled = tg::runtime::compile_stats().compiled;
    int64_t before = tg::GlobalCounters::global_ops;
    gen.step(i * 5 % 40);
    ops.push_back(tg::GlobalCounters::global_ops - before);
  }
  EXPECT_EQ(tg::runtime::compile_stats().compiled, compiled) << "a replayed decode step compiled";
  for (size_t i = 4; i < ops.size(); i++) EXPECT_GT(ops[i], ops[i - 1]) << "step " << i << " did no more work than the one before";
}

// logits() (no cache: the training forward) equals forward() through the cache, and is differentiable.
TEST(Llm, LogitsWithoutTheCacheEqualForward) {
  for (std::string arch : {"gpt2", "llama"}) {
    Tensor::manual_seed(6);
    auto model = llm::make_model(tiny(arch));
    Tensor seq = Tensor::randint({2, 9}, 0, 50, tg::dtypes::int32).realize();
    model->allocate_cache(2);
    expect_close(model->logits(seq).to_vector<float>(), model->forward(seq, 0).to_vector<float>(), arch);
    std::vector<Tensor> params = tg::get_parameters(*model);
    for (Tensor& t : params) t.requires_grad_();
    model->logits(seq).sparse_categorical_crossentropy(seq).backward();
    for (Tensor& t : params) EXPECT_TRUE(t.grad().defined());
  }
}

// GGUF's layout: each head's q and k rows permuted from halves (i, i + D/2) to pairs (2i, 2i+1), as llama.cpp's
// converter does, and rotated in pairs (Config::rope_interleaved): the same logits as the model it came from, with
// and without the cache
TEST(Llm, InterleavedRopeOnPermutedRowsEqualsTheHalvesModel) {
  Tensor::manual_seed(8);
  llm::Config c = tiny("llama");
  auto halves = llm::make_model(c);
  c.rope_interleaved = true;
  auto pairs = llm::make_model(c);
  auto permuted = [&](const Tensor& w, int64_t heads) {  // (heads, 2, D/2, in) -> (heads, D/2, 2, in)
    int64_t out = w.shape()[0], in = w.shape()[1];
    return w.reshape({heads, 2, out / heads / 2, in}).permute({0, 2, 1, 3}).reshape({out, in});
  };
  std::map<std::string, Tensor> from = tg::get_state_dict(*halves), to = tg::get_state_dict(*pairs);
  for (auto& [name, t] : to) {
    Tensor w = from.at(name);
    if (name.find("q_proj") != std::string::npos) w = permuted(w, c.n_heads);
    if (name.find("k_proj") != std::string::npos) w = permuted(w, c.n_kv_heads);
    t.assign(w.contiguous()).realize();
  }
  Tensor seq = Tensor::randint({1, 9}, 0, 50, tg::dtypes::int32).realize();
  expect_close(pairs->logits(seq).to_vector<float>(), halves->logits(seq).to_vector<float>(), "logits");
  halves->allocate_cache(1), pairs->allocate_cache(1);
  expect_close(pairs->forward(seq, 0).to_vector<float>(), halves->forward(seq, 0).to_vector<float>(), "forward");
  // and the permutation matters: the halves model's rotation on the permuted rows is another model
  auto wrong = llm::make_model(tiny("llama"));
  std::map<std::string, Tensor> w = tg::get_state_dict(*wrong);
  for (auto& [name, t] : w) t.assign(to.at(name).contiguous()).realize();
  std::vector<float> a = wrong->logits(seq).to_vector<float>(), b = halves->logits(seq).to_vector<float>();
  double diff = 0;
  for (size_t i = 0; i < a.size(); i++) diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
  EXPECT_GT(diff, 1e-3);
}

// The training forward's gradients against central finite differences, one element of every parameter (weights
// scaled up so that no gradient is negligibly small; float32, so a 2% + 2e-3 tolerance).
TEST(Llm, GradientsMatchFiniteDifferences) {
  for (std::string arch : {"gpt2", "llama"}) {
    llm::Config c = tiny(arch);
    c.vocab_size = 16, c.dim = 16, c.head_dim = 4, c.hidden_dim = 32, c.max_context = 8;
    Tensor::manual_seed(3);
    auto model = llm::make_model(c);
    for (auto& [name, t] : tg::get_state_dict(*model)) t.assign(t * 5).realize();
    Tensor x(std::vector<int32_t>{1, 5, 3, 7, 2, 9, 4, 11, 6, 2, 8, 1, 15, 3, 0, 12}, {2, 8});
    Tensor y(std::vector<int32_t>{5, 3, 7, 2, 9, 4, 11, 6, 2, 8, 1, 15, 3, 0, 12, 4}, {2, 8});
    auto loss = [&] { return model->logits(x).sparse_categorical_crossentropy(y); };
    std::vector<Tensor> params = tg::get_parameters(*model);
    for (Tensor& p : params) p.requires_grad_();
    loss().backward();
    tg::NoGradGuard no_grad;
    for (size_t i = 0; i < params.size(); i++) {
      Tensor& p = params[i];
      std::vector<float> v = p.to_vector<float>();
      size_t k = v.size() / 3;
      float grad = p.grad().to_vector<float>()[k], eps = 1e-2f, at = v[k];
      auto loss_with = [&](float value) {
        v[k] = value;
        p.assign(Tensor(v, p.shape())).realize();
        return loss().item<float>();
      };
      float fd = (loss_with(at + eps) - loss_with(at - eps)) / (2 * eps);
      loss_with(at);
      EXPECT_NEAR(grad, fd, 0.02 * std::fabs(fd) + 2e-3) << arch << " parameter " << i;
    }
  }
}

// forward() at a later start attends to what earlier calls cached: two halves equal the whole.
TEST(Llm, ForwardInPiecesEqualsTheWhole) {
  Tensor::manual_seed(2);
  auto model = llm::make_model(tiny("llama"));
  model->allocate_cache(2);
  Tensor seq = Tensor::randint({2, 12}, 0, 50, tg::dtypes::int32).realize();
  Tensor whole = model->forward(seq, 0);
  Tensor first = model->forward(seq.shrink({{0, 2}, {0, 7}}), 0);
  Tensor second = model->forward(seq.shrink({{0, 2}, {7, 12}}), 7);
  Tensor pieces = Tensor::cat({first, second}, 1);
  expect_close(pieces.to_vector<float>(), whole.to_vector<float>(), "batch of 2 in two pieces");
  Tensor last = model->forward(seq.shrink({{0, 2}, {7, 12}}), 7, true);
  EXPECT_EQ(last.shape(), (tg::Shape{2, 1, 50}));
}

// TinyJit captures decode once (second call) and replays its kernels for every later position: the same kernels
// each time, with the values of each position (checked against decode without the JIT).
TEST(Llm, JitReplaysEveryPosition) {
  Tensor::manual_seed(3);
  auto model = llm::make_model(tiny("gpt2"));
  auto plain = llm::make_model(tiny("gpt2"));
  tg::load_state_dict(*plain, tg::get_state_dict(*model));
  model->allocate_cache(1), plain->allocate_cache(1);
  tg::TinyJit<Tensor> decode([&](const std::vector<Tensor>& in) { return model->decode(in[0], in[1]).realize(); });
  for (int32_t pos = 0; pos < 12; pos++) {
    Tensor token(std::vector<int32_t>{pos * 3 % 50}, {1, 1}), at(std::vector<int32_t>{pos}, {});
    int64_t before = tg::GlobalCounters::kernel_count;
    std::vector<float> got = decode({token, at}).to_vector<float>();
    if (pos >= 2) {
      EXPECT_TRUE(decode.captured());
      EXPECT_EQ(tg::GlobalCounters::kernel_count - before, static_cast<int64_t>(decode.kernel_count())) << "position " << pos;
    }
    expect_close(got, plain->decode(token, at).to_vector<float>(), "position " + std::to_string(pos));
  }
  llm::Generator gen(*model, 20);
  gen.prefill({1, 2});
  for (int i = 0; i < 15; i++) gen.step(i);
  EXPECT_EQ(gen.max_context(), 20);
  expect_error<tg::ArgumentError>([&] { for (int i = 0; i < 5; i++) gen.step(1); }, "Generator::step",
                                  {"context of 20 tokens is full"}, "test_llm.cpp");
}

namespace {

// The host reference of Sampler::pick for one row, in double with sorts: the token whose cumulative probability
// (in vocabulary order, over the kept tokens) first passes u * total. nullopt when u or the top_p boundary lies
// within rounding of a boundary, where float32 sums in another order may decide either way.
std::optional<int32_t> reference_pick(const std::vector<float>& logits, double u, const llm::SamplingOptions& o) {
  size_t v = logits.size();
  std::vector<float> sorted(logits);
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  float kth = o.top_k > 0 && static_cast<size_t>(o.top_k) < v ? sorted[static_cast<size_t>(o.top_k) - 1] : sorted.back();
  std::vector<double> p(v, 0.0);
  for (size_t i = 0; i < v; i++)  // tokens tied with the k-th are kept
    if (logits[i] >= kth) p[i] = std::exp((double(logits[i]) - sorted[0]) / o.temperature);
  double total = std::accumulate(p.begin(), p.end(), 0.0);
  if (o.top_p < 1) {  // the most likely tokens whose mass reaches top_p, and every token tied with the last of them
    std::vector<double> desc(p);
    std::sort(desc.begin(), desc.end(), std::greater<>());
    double acc = 0, edge = 0;
    for (double q : desc) {
      if (std::fabs(acc - o.top_p * total) < 1e-5 * total) return std::nullopt;
      acc += q, edge = q;
      if (acc >= o.top_p * total) break;
    }
    for (double& q : p) q = q >= edge ? q : 0;
    total = std::accumulate(p.begin(), p.end(), 0.0);
  }
  double acc = 0, goal = u * total;
  for (size_t i = 0; i < v; i++) {
    if (p[i] == 0) continue;
    if (std::fabs(acc - goal) < 1e-5 * total || std::fabs(acc + p[i] - goal) < 1e-5 * total) return std::nullopt;
    if ((acc += p[i]) > goal) return static_cast<int32_t>(i);
  }
  return std::nullopt;
}

}  // namespace

// The device sampler picks the token a host reference with sorts picks, from the same uniform draws: the inverse
// of the cumulative probability, after top-k (ties with the k-th kept) and top-p, at several temperatures.
TEST(Llm, SamplerPicksWhatAHostReferencePicks) {
  const int64_t rows = 48, vocab = 1000;  // not a power of two: the index search's last candidates are past the end
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0, 3);
  std::uniform_real_distribution<float> uniform(0, 1);
  std::vector<float> logits(static_cast<size_t>(rows * vocab)), u(static_cast<size_t>(rows));
  for (size_t i = 0; i < logits.size(); i++) {
    logits[i] = normal(rng);
    if (i >= logits.size() / 2) logits[i] = std::round(logits[i] * 2) / 2;  // half the rows full of ties
  }
  for (float& x : u) x = uniform(rng);
  Tensor lt(logits, {rows, vocab}), ut(u, {rows});
  for (llm::SamplingOptions o : {llm::SamplingOptions{1.0, 0, 1, 0}, llm::SamplingOptions{0.7, 50, 1, 0},
                                 llm::SamplingOptions{1.3, 0, 0.9, 0}, llm::SamplingOptions{1.0, 20, 0.5, 0},
                                 llm::SamplingOptions{0.5, 1, 1, 0}}) {
    std::vector<int32_t> got = llm::Sampler(o).pick(lt, ut).to_vector<int32_t>();
    int checked = 0;
    for (size_t r = 0; r < static_cast<size_t>(rows); r++) {
      std::vector<float> row(logits.begin() + static_cast<std::ptrdiff_t>(r * vocab), logits.begin() + static_cast<std::ptrdiff_t>((r + 1) * vocab));
      std::optional<int32_t> want = reference_pick(row, u[r], o);
      if (!want) continue;
      checked++;
      EXPECT_EQ(got[r], *want) << "row " << r << ", temperature " << o.temperature << ", top_k " << o.top_k << ", top_p " << o.top_p;
    }
    EXPECT_GE(checked, rows * 9 / 10) << "rows away from a rounding boundary";
  }
}

TEST(Llm, SamplerIsGreedyAtZeroTemperatureAndFollowsTheDistribution) {
  std::vector<float> logits{0.5f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(llm::argmax(logits), 1);
  EXPECT_EQ(llm::Sampler()(logits), 1);
  EXPECT_EQ(llm::Sampler({1.0, 1, 1, 7})(logits) % 2, 1);  // top_k 1: one of the two largest (tied)
  EXPECT_EQ(llm::Sampler({1.0, 0, 0.01, 7})(logits) % 2, 1);  // top_p tiny: the most likely only (both, tied)
  // probabilities 0.5, 0.3, 0.2, as many rows at once: each count within 5 standard deviations of n p
  const int64_t n = 20000;
  std::vector<float> p{std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  Tensor rows = Tensor(p, {1, 3}).expand({n, 3});
  std::vector<int32_t> drawn = llm::Sampler({1.0, 0, 1, 42})(rows).to_vector<int32_t>();
  std::vector<int> count(3);
  for (int32_t t : drawn) count[static_cast<size_t>(t)]++;
  for (size_t k = 0; k < 3; k++) {
    double want = n * std::exp(p[k]), sd = std::sqrt(want * (1 - std::exp(p[k])));
    EXPECT_NEAR(count[k], want, 5 * sd) << "token " << k;
  }
  // top_k 2 never draws the third; top_p 0.7 keeps 0.5 + 0.3 (the smallest set reaching 0.7)
  for (auto options : {llm::SamplingOptions{1.0, 2, 1, 5}, llm::SamplingOptions{1.0, 0, 0.7, 5}}) {
    std::vector<int32_t> some = llm::Sampler(options)(rows).to_vector<int32_t>();
    EXPECT_EQ(std::count(some.begin(), some.end(), 2), 0);
    EXPECT_GT(std::count(some.begin(), some.end(), 1), n / 4);  // 3/8 of the draws
  }
  // the same seed, the same draws; another seed, others
  llm::Sampler a({0.8, 0, 0.9, 9}), b({0.8, 0, 0.9, 9}), c({0.8, 0, 0.9, 10});
  const Tensor& few = rows;
  std::vector<int32_t> from_a = a(few).to_vector<int32_t>();
  EXPECT_EQ(from_a, b(few).to_vector<int32_t>());
  EXPECT_NE(from_a, c(few).to_vector<int32_t>());
  EXPECT_NE(from_a, a(few).to_vector<int32_t>());  // the next call draws new numbers
  // bad input names the sampler and the shapes
  expect_error<tg::ShapeError>([&] { llm::Sampler(llm::SamplingOptions{1.0, 0, 1, 0}).pick(few, Tensor::zeros({3})); },
                               "Sampler", {"one uniform draw per row", "(20000, 3)", "(3,)"}, "test_llm.cpp");
  expect_error<tg::ShapeError>([&] { llm::Sampler()(Tensor::zeros({2, 0})); }, "Sampler", {"with a vocabulary", "(2, 0)"},
                               "test_llm.cpp");
  expect_error<tg::ShapeError>([&] { llm::Sampler()(Tensor(1.0f)); }, "Sampler", {"got a scalar"}, "test_llm.cpp");
}

// Generator::next picks on the device inside the decode step: greedily it continues as argmax of step()'s logits,
// and sampled it draws the same tokens with and without TinyJit, whose replays compile nothing.
TEST(Llm, GeneratorPicksTheNextTokenOnTheDevice) {
  Tensor::manual_seed(6);
  auto model = llm::make_model(tiny("llama"));
  std::vector<int32_t> greedy;
  {
    llm::Generator gen(*model, 20);
    std::vector<float> logits = gen.prefill({3, 1, 4});
    for (int i = 0; i < 8; i++) greedy.push_back(llm::argmax(logits)), logits = gen.step(greedy.back());
  }
  for (bool jit : {false, true}) {
    llm::Generator gen(*model, 20, jit);
    llm::Sampler pick_greedy;
    std::vector<int32_t> got{gen.next({3, 1, 4}, pick_greedy)};
    for (int i = 1; i < 8; i++) got.push_back(gen.next({got.back()}, pick_greedy));
    EXPECT_EQ(got, greedy) << "jit " << jit;
  }
  std::vector<std::vector<int32_t>> sampled;
  for (bool jit : {false, true}) {
    llm::Generator gen(*model, 20, jit);
    llm::Sampler sampler({1.5, 10, 0.95, 11});
    std::vector<int32_t> got{gen.next({3, 1, 4}, sampler)};
    for (int i = 1; i < 12; i++) {
      int64_t looked_up = compile_lookups();
      got.push_back(gen.next({got.back()}, sampler));
      if (jit && i > 2) {
        EXPECT_EQ(compile_lookups(), looked_up) << "a replayed step compiled, step " << i;
      }
    }
    sampled.push_back(got);
  }
  EXPECT_EQ(sampled[0], sampled[1]);
  EXPECT_NE(std::vector<int32_t>(sampled[0].begin(), sampled[0].begin() + 8), greedy);  // it does sample
}

TEST(Llm, LoadsAFolderAndNamesWhatIsWrong) {
  Tensor::manual_seed(4);
  auto model = llm::make_model(tiny("gpt2"));
  std::string dir = std::filesystem::path(write("gpt2/config.json", kGpt2Config)).parent_path().string();
  tg::StateDict sd = tg::get_state_dict(*model);
  tg::safe_save(sd, dir + "/model.safetensors");
  // a loader draws no weights it replaces: the random numbers after it are those a seed gives
  Tensor::manual_seed(9);
  std::vector<float> seeded = Tensor::rand({4}).to_vector<float>();
  Tensor::manual_seed(9);
  auto loaded = llm::load(dir);
  EXPECT_EQ(Tensor::rand({4}).to_vector<float>(), seeded);
  Tensor tokens(std::vector<int32_t>{4, 8, 15}, {1, 3});
  model->allocate_cache(1), loaded->allocate_cache(1);
  expect_close(loaded->forward(tokens, 0).to_vector<float>(), model->forward(tokens, 0).to_vector<float>(), "reloaded");

  // GPT2Model's files name the weights without "transformer."; float16 weights load as float16
  tg::StateDict bare;
  for (auto& [name, t] : sd) bare[name.substr(std::string("transformer.").size())] = t.half();
  tg::safe_save(bare, dir + "/model.safetensors");
  EXPECT_NO_THROW(llm::load(dir));

  sd.erase("transformer.h.1.mlp.c_fc.bias");
  tg::safe_save(sd, dir + "/model.safetensors");
  expect_error<tg::ArgumentError>([&] { llm::load(dir); }, "llm::load", {"1 weights missing", "h.1.mlp.c_fc.bias"}, "test_llm.cpp");
  sd["transformer.h.1.mlp.c_fc.bias"] = Tensor::zeros({63});
  tg::safe_save(sd, dir + "/model.safetensors");
  expect_error<tg::ShapeError>([&] { llm::load(dir); }, "llm::load", {"h.1.mlp.c_fc.bias is (63,)", "(64,)"}, "test_llm.cpp");
  sd["transformer.h.1.mlp.c_fc.bias"] = Tensor::zeros({64}, tg::dtypes::int32);
  tg::safe_save(sd, dir + "/model.safetensors");
  expect_error<tg::DTypeError>([&] { llm::load(dir); }, "llm::load", {"int32"}, "test_llm.cpp");
  std::filesystem::remove(dir + "/model.safetensors");
  expect_error<tg::ArgumentError>([&] { llm::load(dir); }, "llm::load", {"no model.safetensors"}, "test_llm.cpp");
  write("gpt2/model.safetensors.index.json", R"({"weight_map": {"wte.weight": "../elsewhere.safetensors"}})");
  expect_error<tg::ArgumentError>([&] { llm::load(dir); }, "llm::load", {"must be a file name in the folder"}, "test_llm.cpp");
  expect_error<tg::ArgumentError>([&] { llm::load(dir + "/config.json"); }, "llm::load", {"not a folder"}, "test_llm.cpp");
}

TEST(Llm, ConfigErrorsNameTheFileAndField) {
  struct Case { const char* json; const char* part; };
  for (Case c : {Case{"{", "bad JSON"}, Case{"[1]", "not a JSON object"}, Case{R"({"model_type": "bert"})", "\"bert\" is not supported"},
                 Case{R"({"model_type": "gpt2", "vocab_size": 50})", "has no \"n_embd\""},
                 Case{R"({"model_type": "gpt2", "vocab_size": -3, "n_embd": 8})", "\"vocab_size\" must be a positive integer"},
                 Case{R"({"model_type": "gpt2", "vocab_size": 5, "n_embd": 30, "n_layer": 1, "n_head": 4, "n_positions": 8})", "not a multiple of the 4 heads"},
                 Case{R"({"model_type": "llama", "vocab_size": 5, "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 3, "intermediate_size": 8, "max_position_embeddings": 8})", "not a multiple of the 3 key/value heads"},
                 Case{R"({"model_type": "llama", "vocab_size": 5, "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 4, "intermediate_size": 8, "max_position_embeddings": 8, "rope_scaling": {"rope_type": "yarn"}})", "rope_scaling type \"yarn\""},
                 Case{R"({"model_type": "gpt2", "vocab_size": 5, "n_embd": 32, "n_layer": 1, "n_head": 4, "n_positions": 8, "activation_function": "relu"})", "activation_function \"relu\""}}) {
    std::string path = write("bad_config.json", c.json);
    expect_error<tg::ArgumentError>([&] { llm::read_config(path); }, "read_config", {"bad_config.json", c.part}, "test_llm.cpp");
  }
  expect_error<tg::ArgumentError>([&] { llm::read_config(scratch_path("none.json")); }, "read_config", {"none.json"}, "test_llm.cpp");
  llm::Config c = llm::read_config(write("ok.json", kGpt2Config));
  EXPECT_EQ(c.arch, "gpt2");
  EXPECT_EQ(c.hidden_dim, 64);
  c = llm::read_config(write("ok.json", R"({"model_type": "gpt2", "vocab_size": 5, "n_embd": 32, "n_layer": 1, "n_head": 4, "n_positions": 8, "n_inner": null})"));
  EXPECT_EQ(c.hidden_dim, 128);  // n_inner null or absent: 4 * n_embd
  EXPECT_EQ(c.head_dim, 8);
}

TEST(Llm, BadCallsRaise) {
  Tensor::manual_seed(5);
  auto model = llm::make_model(tiny("llama"));
  model->allocate_cache(1, 8);
  Tensor three(std::vector<int32_t>{1, 2, 3}, {1, 3});
  expect_error<tg::ShapeError>([&] { model->forward(Tensor(std::vector<int32_t>{1, 2}, {2}), 0); }, "Transformer",
                               {"(batch, length)", "(2,)"}, "test_llm.cpp");
  expect_error<tg::ArgumentError>([&] { model->forward(three, 6); }, "Transformer", {"3 tokens at position 6", "context of 8"}, "test_llm.cpp");
  expect_error<tg::ShapeError>([&] { model->forward(Tensor(std::vector<int32_t>{1, 2}, {2, 1}), 0); }, "Transformer",
                               {"a batch of 2", "cache holds 1"}, "test_llm.cpp");
  expect_error<tg::DTypeError>([&] { model->forward(Tensor(std::vector<float>{1, 2}, {1, 2}), 0); }, "Transformer",
                               {"integers"}, "test_llm.cpp");
  expect_error<tg::ArgumentError>([&] { model->decode(Tensor(std::vector<int32_t>{1}, {1, 1}), Tensor(3.0f)); },
                                  "Transformer decode", {"0-d int32"}, "test_llm.cpp");
  expect_error<tg::ArgumentError>([&] { model->allocate_cache(1, 25); }, "Transformer", {"context <= the model's 24"}, "test_llm.cpp");
  expect_error<tg::ArgumentError>([&] { llm::Generator(*model).prefill({}); }, "Generator::prefill", {"no tokens"}, "test_llm.cpp");
}
