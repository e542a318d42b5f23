// A model folder written by tools/llm_reference.py (random weights, PyTorch's logits) against ours:
//   llm_reference_check FOLDER [MODEL]     MODEL: another path for llm::load (a .gguf file), default FOLDER
// 1. forward() of the prompt at once: every position's logits;
// 2. generation with and without TinyJit: the prompt through prefill(), then 32 greedy tokens through step(); each
//    step's logits and the chosen token against the reference's greedy continuation.
// 3. for a GGUF file: the bytes a decode step moves (GlobalCounters::global_mem) are the weights it reads as the
//    file stores them (one row of the embedding table unless the head shares it; of a mixture's experts, the chosen
//    ones) plus the cache, with less left over than a float32 copy of the largest weight: the quantized bytes are
//    read once, only where needed, and no dequantized copy is written or read. Checked where the weights are
//    block-quantized (their dequantization is what must fuse); on the tiny F32/F16 models the activations weigh as
//    much as a weight, and the figures are only printed.
// Logits agree when max |ours - torch| <= 1e-4 * max |torch| over the compared rows. Prints what it compared;
// exits 1 on the first mismatch.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "state/gguf_quants.h"
#include "tg/counters.h"
#include "tg/llm.h"
#include "tg/state.h"

using tg::Tensor;

namespace {

int failures = 0;

void compare(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < want.size(); i++) scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
  bool same_size = got.size() == want.size();
  for (size_t i = 0; same_size && i < want.size(); i++) worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]));
  bool ok = same_size && worst <= 1e-4 * scale;
  if (!ok) {
    failures++;
    std::printf("FAIL %s: max |diff| %.3g of max |logit| %.3g (%zu values, expected %zu)\n", what.c_str(), worst, scale,
                got.size(), want.size());
  }
}

std::vector<int32_t> read_ints(const std::string& text, const std::string& key) {  // "key": [1, 2, 3]
  size_t at = text.find("\"" + key + "\"");
  size_t open = text.find('[', at), close = text.find(']', open);
  std::vector<int32_t> out;
  std::stringstream list(text.substr(open + 1, close - open - 1));
  for (std::string item; std::getline(list, item, ',');) out.push_back(std::stoi(item));
  return out;
}

std::vector<float> row(const std::vector<float>& all, size_t r, size_t width) {
  return {all.begin() + static_cast<std::ptrdiff_t>(r * width), all.begin() + static_cast<std::ptrdiff_t>((r + 1) * width)};
}

// A decode step's traffic against the file's weights: see 3. above.
void check_decode_bytes(tg::llm::Transformer& model, const std::string& path, const std::vector<int32_t>& prompt) {
  tg::GGUFFile file = tg::gguf_load(path);
  const tg::llm::Config& c = model.config();
  double stored = 0, largest_f32 = 0;  // stored: the bytes of the weights one step reads
  bool quantized = false;
  for (const auto& [name, type] : file.types) {
    const Tensor& t = file.tensors.at(name);
    double bytes = 0;
    for (uint32_t id = 0; id < 64; id++)
      if (auto info = tg::state::ggml_type_info(id); info && type == info->name)
        bytes = static_cast<double>(t.numel()) / info->block_size * info->type_size, quantized |= info->block_size > 1;
    if (name == "token_embd.weight" && file.types.count("output.weight")) bytes /= static_cast<double>(t.shape()[0]);
    if (name.find("_exps.") != std::string::npos) bytes *= static_cast<double>(c.n_experts_used) / static_cast<double>(c.n_experts);
    stored += bytes;
    if (t.ndim() == 2) largest_f32 = std::max(largest_f32, 4.0 * t.numel());
  }
  tg::llm::Generator gen(model, 0, true);
  int32_t next = tg::llm::argmax(gen.prefill(prompt));
  for (int i = 0; i < 2; i++) next = tg::llm::argmax(gen.step(next));  // TinyJit captures
  double cache = 2.0 * c.n_layers * c.n_kv_heads * gen.max_context() * c.head_dim * 4;  // keys and values, float32
  int64_t before = tg::GlobalCounters::global_mem;
  gen.step(next);
  double moved = static_cast<double>(tg::GlobalCounters::global_mem - before);
  // each step's key and value are written into one row of the cache, and attention reads its filled rows
  double positions = static_cast<double>(prompt.size()) + 2;  // filled before this step
  double rest = moved - stored - cache * (positions + 2) / static_cast<double>(gen.max_context());
  std::printf("decode step: %.0f bytes moved; the weights read %.0f, the cache %.0f, the rest %.0f (a float32 copy of "
              "the largest weight: %.0f)\n", moved, stored, cache, rest, largest_f32);
  if (quantized && (moved < stored || rest >= largest_f32)) {
    failures++;
    std::printf("FAIL decode bytes: a step should read the stored weights once and no float32 copy of them\n");
  }
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 2 && argc != 3) return std::fprintf(stderr, "usage: llm_reference_check FOLDER [MODEL]\n"), 2;
  std::string dir = argv[1];
  std::ifstream f(dir + "/reference.json");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<int32_t> prompt = read_ints(text, "prompt"), greedy = read_ints(text, "greedy");
  std::vector<float> prompt_logits = tg::load_npy(dir + "/prompt_logits.npy").to_vector<float>();
  std::vector<float> greedy_logits = tg::load_npy(dir + "/greedy_logits.npy").to_vector<float>();

  auto model = tg::llm::load(argc == 3 ? argv[2] : dir);
  const size_t vocab = static_cast<size_t>(model->config().vocab_size), T = prompt.size();
  Tensor tokens(prompt, {1, static_cast<int64_t>(T)});
  model->allocate_cache(1);
  compare(model->forward(tokens, 0).to_vector<float>(), prompt_logits, "forward of the prompt");
  std::printf("forward: logits of %zu prompt positions compared\n", T);

  for (bool jit : {false, true}) {
    tg::llm::Generator gen(*model, 0, jit);
    std::vector<float> logits = gen.prefill(prompt);
    compare(logits, row(prompt_logits, T - 1, vocab), std::string("prefill") + (jit ? " (jit)" : ""));
    size_t steps = 0;
    for (; steps < greedy.size(); steps++) {
      std::string at = " at step " + std::to_string(steps) + (jit ? " (jit)" : "");
      compare(logits, row(greedy_logits, steps, vocab), "logits" + at);
      int32_t next = tg::llm::argmax(logits);
      if (next != greedy[steps]) {
        std::printf("FAIL token%s: %d, PyTorch chose %d\n", at.c_str(), next, greedy[steps]);
        failures++;
        break;
      }
      logits = gen.step(next);
    }
    std::printf("generation%s: %zu greedy tokens and their logits compared\n", jit ? " under TinyJit" : "", steps);
  }
  if (argc == 3 && std::string(argv[2]).ends_with(".gguf")) check_decode_bytes(*model, argv[2], prompt);
  std::printf("%s\n", failures ? "FAILED" : "all match PyTorch");
  return failures ? 1 : 0;
} catch (const std::exception& e) {
  std::printf("FAIL: %s\n", e.what());
  return 1;
}
