// llm: generate with a GPT-2 or LLaMA checkpoint (a Hugging Face folder with config.json and model.safetensors, or a
// GGUF file).
//
//   llm --model PATH (--tokens 1,2,3 | --prompt TEXT) [--max-new N] [--temperature T] [--top-k K] [--top-p P]
//       [--seed S] [--print-tokens] [--bench] [--device DEV] [--max-context N] [--no-jit]
//   llm --model PATH --chat                         a conversation in the terminal
//   llm --model PATH --serve [PORT] [--host HOST]   OpenAI's API and a chat page (port 8080, host 127.0.0.1)
//
// PATH is a Hugging Face folder or a GGUF file. With a tokenizer (the folder's tokenizer.json, or vocab.json +
// merges.txt, or the GGUF file's tokenizer.ggml.* metadata) --prompt is encoded and the text is streamed as it is
// generated; --print-tokens (or a model without a tokenizer) prints the new token ids on one line instead.
// Generation stops after --max-new tokens or at the config's eos_token_id. --bench adds a line "prefill N tok/s,
// decode N tok/s, M MB moved per token", timed after a warm-up run of the prompt (decode from the third new token
// on: the first two run and capture TinyJit; MB moved: the bytes of the buffers a decode step's kernels read and
// write, GlobalCounters::global_mem, to hold against the size of the weights). --max-context sets the KV cache's
// length. By default it is the prompt plus --max-new
// rounded up to a power of two (at least 512, at most the model's context): the kernels depend on the cache's
// length but not on the prompt's, so runs in the same bucket reuse the compiled kernels (cached on disk), and a
// step reads only the cached positions so far.
#include <algorithm>
#include <bit>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include "cli.h"
#include "tg/counters.h"
#include "tg/llm.h"
#include "tg/serve.h"
#include "tg/state.h"
#include "tg/text.h"

namespace {

const tg::cli::Usage kUsage{"llm",
                            "usage: llm --model PATH (--tokens 1,2,3 | --prompt TEXT) [--max-new N] [--temperature T] [--top-k K]\n"
                            "           [--top-p P] [--seed S] [--print-tokens] [--bench] [--device DEV] [--max-context N] [--no-jit]\n"
                            "       llm --model PATH --chat\n"
                            "       llm --model PATH --serve [PORT] [--host HOST]\n"
                            "PATH is a Hugging Face folder (config.json, model.safetensors) or a GGUF file.\n"};

[[noreturn]] void usage(const std::string& msg) { kUsage.fail(msg); }

std::vector<int32_t> parse_tokens(const std::string& list) {
  std::vector<int32_t> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || v < 0 || v > INT32_MAX) usage("--tokens: '" + item + "' is not a token id");
    out.push_back(static_cast<int32_t>(v));
  }
  if (out.empty()) usage("--tokens: no token ids");
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// --chat: read a line, answer it, keep the conversation (the engine keeps its cache between turns)
void chat(tg::serve::Engine& engine, const tg::llm::SamplingOptions& sampling, int64_t max_new) {
  std::vector<tg::text::ChatMessage> messages;
  std::string line;
  std::printf("(an empty line or end of input ends the chat)\n");
  for (;;) {
    std::printf("> ");
    std::fflush(stdout);
    if (!std::getline(std::cin, line) || line.empty()) break;
    messages.push_back({"user", line});
    tg::serve::Request req{engine.chat_prompt(messages), max_new, sampling, {}};
    if (static_cast<int64_t>(req.prompt.size()) >= engine.max_context()) {
      std::printf("(the conversation fills the context of %lld tokens: start again)\n", static_cast<long long>(engine.max_context()));
      break;
    }
    tg::serve::Outcome out = engine.run(req, [](const std::string& piece) {
      std::printf("%s", piece.c_str());
      std::fflush(stdout);
      return true;
    });
    std::printf("\n");
    messages.push_back({"assistant", out.text});
  }
}

}  // namespace

int main(int argc, char** argv) try {
  std::string model_path, device, prompt;
  std::vector<int32_t> tokens;
  int64_t max_new = 32, max_context = 0;
  bool print_tokens = false, bench = false, jit = true, chat_mode = false;
  int serve_port = -1;
  std::string host = "127.0.0.1";
  tg::llm::SamplingOptions sampling;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    auto number = [&]() {
      std::string v = value();
      try {
        size_t used = 0;
        double d = std::stod(v, &used);
        if (used == v.size()) return d;
      } catch (const std::exception&) {
      }
      usage(a + ": '" + v + "' is not a number");
    };
    if (a == "--model") model_path = value();
    else if (a == "--tokens") tokens = parse_tokens(value());
    else if (a == "--prompt") prompt = value();
    else if (a == "--max-new") max_new = static_cast<int64_t>(number());
    else if (a == "--temperature") sampling.temperature = number();
    else if (a == "--top-k") sampling.top_k = static_cast<int64_t>(number());
    else if (a == "--top-p") sampling.top_p = number();
    else if (a == "--seed") sampling.seed = static_cast<uint64_t>(number());
    else if (a == "--print-tokens") print_tokens = true;
    else if (a == "--bench") bench = true;
    else if (a == "--device") device = value();
    else if (a == "--max-context") max_context = static_cast<int64_t>(number());
    else if (a == "--no-jit") jit = false;
    else if (a == "--chat") chat_mode = true;
    else if (a == "--host") host = value();
    else if (a == "--serve") {
      serve_port = 8080;
      if (i + 1 < argc && argv[i + 1][0] != '-') {
        double p = number();
        if (p < 0 || p > 65535 || p != static_cast<int>(p)) usage("--serve: the port must be 0 to 65535");
        serve_port = static_cast<int>(p);
      }
    }
    else if (a == "-h" || a == "--help") kUsage.help();
    else usage("unknown option " + a);
  }
  if (model_path.empty()) usage("--model is required");
  const bool talk = chat_mode || serve_port >= 0;
  if (chat_mode && serve_port >= 0) usage("give --chat or --serve, not both");
  if (talk && !(prompt.empty() && tokens.empty())) usage("--chat and --serve take no --prompt or --tokens");
  if (!talk && prompt.empty() == tokens.empty()) usage("give --prompt or --tokens (one of them), or --chat, or --serve");
  if (max_new < 0 || sampling.top_k < 0 || sampling.temperature < 0 || sampling.top_p <= 0 || sampling.top_p > 1)
    usage("--max-new, --top-k and --temperature must be >= 0 and --top-p in (0, 1]");
  // the model and its tokenizer: a GGUF file holds both (read once), a folder may hold tokenizer files
  namespace fs = std::filesystem;
  std::unique_ptr<tg::llm::Transformer> model;
  std::optional<tg::text::Tokenizer> tok;
  std::optional<tg::text::ChatTemplate> chat_template;  // the GGUF file's or the folder's (tokenizer_config.json)
  if (fs::path(model_path).extension() == ".gguf") {
    tg::GGUFFile file = tg::gguf_load(model_path, device);
    model = tg::llm::from_gguf(file, model_path);
    if (file.metadata.count("tokenizer.ggml.model")) tok = tg::text::Tokenizer::from_gguf(file.metadata, model_path);
    if (tok && talk) chat_template = tg::text::ChatTemplate::from_gguf(file.metadata, *tok, model_path);
  } else {
    model = tg::llm::load(model_path, device);
    if (fs::exists(fs::path(model_path) / "tokenizer.json") || fs::exists(fs::path(model_path) / "vocab.json"))
      tok = tg::text::Tokenizer::load(model_path);
    if (tok && talk) chat_template = tg::text::ChatTemplate::from_folder(model_path, *tok);
  }
  if (talk) {
    if (!tok) usage("--chat and --serve need a tokenizer (a GGUF file's, or tokenizer.json in " + model_path + ")");
    if (max_context == 0) max_context = model->config().max_context;
    tg::serve::Engine engine(*model, *tok, *chat_template, max_context, jit);
    if (chat_mode) {
      chat(engine, sampling, max_new);
      return 0;
    }
    tg::serve::Options options;
    options.host = host, options.port = serve_port;
    options.model_name = fs::path(model_path).filename().string();
    options.on_listening = [&](int port) {
      std::printf("serving %s on http://%s:%d (OpenAI's API under /v1, a chat page at /)\n", options.model_name.c_str(), host.c_str(), port);
      std::fflush(stdout);
    };
    tg::serve::serve(engine, options);
    return 0;
  }
  if (!prompt.empty()) {
    if (!tok) usage("--prompt needs a tokenizer (tokenizer.json, or vocab.json + merges.txt) in " + model_path + ": give --tokens");
    tokens = tok->encode(prompt);
    if (tokens.empty()) usage("--prompt: the text encodes to no tokens");
  }
  print_tokens = print_tokens || !tok;

  int64_t needed = static_cast<int64_t>(tokens.size()) + max_new;
  if (max_context == 0) max_context = std::min(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(needed, 512))),
                                                static_cast<uint64_t>(model->config().max_context));
  if (needed > max_context)
    throw tg::ArgumentError("llm", std::to_string(tokens.size()) + " prompt tokens and " + std::to_string(max_new) +
                                       " new ones do not fit a context of " + std::to_string(max_context));
  for (int32_t t : tokens)
    if (t >= model->config().vocab_size)
      throw tg::ArgumentError("llm", "token " + std::to_string(t) + " is outside the vocabulary of " + std::to_string(model->config().vocab_size));

  if (bench) {  // a warm-up, as PyTorch's side of bench/llm.sh has: the prompt and two tokens, then the timed run
    tg::llm::Generator warm(*model, max_context, jit);
    tg::llm::Sampler greedy;
    int32_t t = warm.next(tokens, greedy);
    for (int i = 0; i < 2 && warm.position() < max_context; i++) t = warm.next({t}, greedy);
  }
  tg::llm::Generator gen(*model, max_context, jit);
  tg::llm::Sampler sampler(sampling);  // picks each token on the device: only the token comes back
  auto t0 = std::chrono::steady_clock::now();
  int32_t next = gen.next(tokens, sampler);
  double prefill_s = seconds_since(t0), decode_s = 0;
  // the text streams as the decoded whole minus what was printed (a token's text can depend on its neighbours)
  std::vector<int32_t> all = tokens;
  size_t printed = tok && !print_tokens ? tok->decode(all).size() : 0;
  if (!print_tokens) std::printf("%s", tok->decode(all).c_str());
  const std::vector<int32_t>& eos = model->config().eos_token_ids;
  int64_t generated = 0, timed = 0, moved = 0;
  while (generated < max_new) {
    if (std::find(eos.begin(), eos.end(), next) != eos.end()) break;
    all.push_back(next);
    if (print_tokens) {
      std::printf("%s%d", generated ? " " : "", next);
    } else {
      std::string text = tok->decode(all);
      std::printf("%s", text.substr(std::min(printed, text.size())).c_str());
      printed = text.size();
    }
    std::fflush(stdout);
    if (++generated == max_new) break;
    auto t1 = std::chrono::steady_clock::now();
    int64_t mem_before = tg::GlobalCounters::global_mem;
    next = gen.next({next}, sampler);
    if (generated > 2)  // the first two steps run and capture TinyJit
      decode_s += seconds_since(t1), timed++, moved += tg::GlobalCounters::global_mem - mem_before;
  }
  std::printf("\n");
  if (bench) {
    std::printf("prefill %.1f tok/s (%zu tokens), decode %.1f tok/s (%lld tokens), %.1f MB moved per token\n",
                tokens.size() / prefill_s, tokens.size(), timed ? timed / decode_s : 0.0, static_cast<long long>(timed),
                timed ? moved * 1e-6 / timed : 0.0);
  }
  return 0;
} catch (const tg::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
