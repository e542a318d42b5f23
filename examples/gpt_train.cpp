// gpt_train: a small GPT (GPT-2's architecture over bytes: 256 tokens) trained on a text corpus with AdamW under
// TinyJit, with a progress bar, a held-out loss, and a sample at the end.
//
//   ./build/bin/gpt_train [FILE...]       default: Debian's fortunes (package fortunes: /usr/share/games/fortunes)
//   STEPS=400 BS=32 CTX=128 DIM=128 LAYERS=4 HEADS=4 LR=0.003 SEED=n SAMPLE=120 TEMPERATURE=0.8
//
// The last tenth of the text is held out. The loss is in nats per byte; the unigram entropy of the training bytes
// (what a model that ignores context reaches at best) is printed beside it, and the run ends by saying whether the
// held-out loss got below it.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <tg/llm.h>
#include <tg/tg.h>

#include "cli.h"
#include "training_loop.h"

using tg::Tensor;

namespace {

std::string read_corpus(std::vector<std::string> files) {
  if (files.empty()) {
    const std::filesystem::path dir = "/usr/share/games/fortunes";
    if (!std::filesystem::is_directory(dir))
      throw tg::ArgumentError("gpt_train", "no corpus given and " + dir.string() + " is missing (Debian: apt-get install fortunes)");
    for (const auto& e : std::filesystem::directory_iterator(dir))  // the text files, not their .dat indexes or .u8 links
      if (e.is_regular_file() && !e.is_symlink() && e.path().extension().empty()) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
  }
  std::string text;
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) throw tg::ArgumentError("gpt_train", "cannot read " + f);
    text.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return text;
}

double unigram_entropy(const std::string& text) {  // nats per byte
  std::vector<double> count(256);
  for (unsigned char c : text) count[c]++;
  double h = 0;
  for (double c : count)
    if (c > 0) h -= c / text.size() * std::log(c / text.size());
  return h;
}

}  // namespace

int main(int argc, char** argv) try {
  tg::cli::Usage{"gpt_train", "usage: gpt_train [FILE...]   (default: Debian's fortunes; environment: STEPS BS CTX DIM LAYERS HEADS LR SEED\n"
                              "                              SAMPLE TEMPERATURE)\n"}
      .check(argc, argv);
  std::string text = read_corpus({argv + 1, argv + argc});
  const int64_t steps = env_int("STEPS", 400), bs = env_int("BS", 32), ctx = env_int("CTX", 128);
  if (std::getenv("SEED")) Tensor::manual_seed(static_cast<uint64_t>(env_int("SEED", 0)));
  if (static_cast<int64_t>(text.size()) < 20 * (ctx + 1))
    throw tg::ArgumentError("gpt_train", "the corpus has " + std::to_string(text.size()) + " bytes: too little for CTX=" + std::to_string(ctx));
  const size_t split = text.size() * 9 / 10;
  std::vector<uint8_t> bytes(text.begin(), text.end());
  Tensor train = Tensor(std::vector<uint8_t>(bytes.begin(), bytes.begin() + split), {static_cast<int64_t>(split)}).realize();
  const double unigram = unigram_entropy(text.substr(0, split));

  tg::llm::Config config;
  config.arch = "gpt2", config.vocab_size = 256, config.dim = env_int("DIM", 128), config.n_layers = env_int("LAYERS", 4);
  config.n_heads = config.n_kv_heads = env_int("HEADS", 4), config.head_dim = config.dim / config.n_heads;
  config.hidden_dim = 4 * config.dim, config.max_context = ctx, config.tie_embeddings = true;
  auto model = tg::llm::make_model(config);
  std::vector<Tensor> params = tg::get_parameters(*model);
  int64_t n_params = 0;
  for (Tensor& p : params) p.requires_grad_(), n_params += p.numel();
  tg::optim::LAMB opt = tg::optim::AdamW(params, env_double("LR", 3e-3), 0.9, 0.99, 1e-8, 0.01);
  std::printf("corpus: %zu bytes (%zu for training), unigram entropy %.3f nats/byte; model: %lld parameters\n",
              text.size(), split, unigram, static_cast<long long>(n_params));

  // sequences of ctx + 1 bytes: inputs are the first ctx, targets the last ctx
  auto loss_of = [&](const Tensor& seqs) {
    Tensor x = seqs.shrink({{0, seqs.shape()[0]}, {0, ctx}}).cast(tg::dtypes::int32);
    Tensor y = seqs.shrink({{0, seqs.shape()[0]}, {1, ctx + 1}}).cast(tg::dtypes::int32);
    return model->logits(x).sparse_categorical_crossentropy(y);
  };
  Tensor window = Tensor::arange(0, static_cast<double>(ctx + 1), 1, tg::dtypes::int32).reshape({1, ctx + 1});
  tg::TinyJit<Tensor> train_step([&](const std::vector<Tensor>&) {
    tg::TrainGuard guard;
    opt.zero_grad();
    Tensor starts = Tensor::randint({bs, 1}, 0, static_cast<int64_t>(split) - ctx - 1, tg::dtypes::int32);
    Tensor loss = loss_of(train[{starts + window}]).backward();
    std::vector<Tensor> outs = opt.schedule_step();
    outs.push_back(loss);
    Tensor::realize(outs);
    return loss;
  });
  // the held-out loss over fixed windows spread through the last tenth
  const int64_t n_val = 64, stride = (static_cast<int64_t>(text.size() - split) - ctx - 1) / n_val;
  std::vector<uint8_t> val;
  for (int64_t i = 0; i < n_val; i++)
    val.insert(val.end(), bytes.begin() + static_cast<std::ptrdiff_t>(split + i * stride),
               bytes.begin() + static_cast<std::ptrdiff_t>(split + i * stride + ctx + 1));
  Tensor val_seqs = Tensor(val, {n_val, ctx + 1}).realize();
  tg::TinyJit<Tensor> held_out([&](const std::vector<Tensor>&) { return loss_of(val_seqs); });

  Progress progress(steps, 50);
  float loss = NAN, val_loss = NAN;
  for (int64_t i = 0; i < steps; i++) {
    loss = train_step().item<float>();
    if (progress.reports(i)) {
      tg::NoGradGuard no_grad;
      val_loss = held_out().item<float>();
    }
    progress.step(i, format("loss: %.3f held-out: %.3f", loss, val_loss));
  }

  // a sample, continuing the first bytes of a held-out line
  tg::NoGradGuard no_grad;
  tg::llm::Generator gen(*model, ctx);
  tg::llm::Sampler sampler({env_double("TEMPERATURE", 0.8), 0, 0.95, static_cast<uint64_t>(env_int("SEED", 1))});
  std::string prompt = text.substr(split + text.substr(split).find('\n') + 1, 8), out = prompt;
  int32_t next = gen.next(std::vector<int32_t>(prompt.begin(), prompt.end()), sampler);
  for (int64_t i = 0, n = std::min<int64_t>(env_int("SAMPLE", 120), ctx - 8); i < n; i++) {
    out += static_cast<char>(next);
    if (i + 1 < n) next = gen.next({next}, sampler);
  }
  std::printf("sample:\n%s\n", out.c_str());
  std::printf("held-out loss %.3f nats/byte, unigram entropy %.3f: %s\n", val_loss, unigram,
              val_loss < unigram - 0.3 ? "well below the unigram entropy" : "NOT well below the unigram entropy");
  return val_loss < unigram - 0.3 ? 0 : 1;
} catch (const tg::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
