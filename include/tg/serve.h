// tg::serve: a language model for people to talk to. Engine runs a conversation's turns on one model, keeping its
// key/value cache between them; serve() puts it behind OpenAI's HTTP API (chat and text completions, streamed as
// server-sent events) with a chat page at "/".
//
//   tg::serve::Engine engine(*model, tokenizer, tg::text::ChatTemplate::detect(jinja, tokenizer));
//   tg::serve::serve(engine, {.port = 8080});   // blocks; GET /v1/models, POST /v1/chat/completions, ...
#pragma once
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "tg/llm.h"
#include "tg/text.h"

namespace tg::serve {

struct Request {
  std::vector<int32_t> prompt;  // the whole conversation so far, as tokens
  int64_t max_tokens = 256;     // new tokens at most; fewer where the context ends first
  llm::SamplingOptions sampling;
  std::vector<std::string> stop;  // text that ends the reply (not part of it)
};

struct Outcome {
  std::string text;                 // the reply (also given piece by piece to on_text)
  std::string finish_reason;        // "stop" (an end-of-turn token or a stop text) or "length"
  int64_t prompt_tokens = 0, completion_tokens = 0;
  int64_t reused_tokens = 0;        // prompt tokens the cache held from the last request
  bool cancelled = false;           // on_text returned false
};

// One model and one cache: run() calls take turns (a mutex), each one reusing the cache for the prefix its prompt
// shares with the previous call's tokens.
class Engine {
 public:
  Engine(llm::Transformer& model, text::Tokenizer tokenizer, text::ChatTemplate chat, int64_t max_context = 0, bool jit = true);
  // Generates the reply to req.prompt. on_text gets the reply's text as it becomes final: whole UTF-8 characters,
  // never a piece that could be the start of a stop text. Returning false stops the generation (a client gone).
  // A prompt that leaves no room in the context raises ArgumentError.
  Outcome run(const Request& req, const std::function<bool(const std::string&)>& on_text = {});

  const text::Tokenizer& tokenizer() const { return tokenizer_; }
  const text::ChatTemplate& chat() const { return chat_; }
  int64_t max_context() const { return gen_.max_context(); }
  // The prompt of a chat: the template's text, encoded (its special tokens as such).
  std::vector<int32_t> chat_prompt(const std::vector<text::ChatMessage>& messages) const;

 private:
  Outcome generate(const Request& req, const std::function<bool(const std::string&)>& on_text);  // run(), locked

  llm::Transformer& model_;
  text::Tokenizer tokenizer_;
  text::ChatTemplate chat_;
  llm::Generator gen_;
  std::vector<int32_t> stop_ids_;  // the model's end-of-text tokens and the template's end-of-turn tokens
  std::mutex turn_;
};

struct Options {
  std::string host = "127.0.0.1";
  int port = 8080;                        // 0: any free port
  std::string model_name = "tinygrad.cpp";  // the id /v1/models lists and requests must name
  size_t max_body_bytes = 4 << 20;
  // called once the socket listens, with the port (useful with port 0)
  std::function<void(int port)> on_listening;
};

// Whether this build has the HTTP server (cpp-httplib was found when it was built: Debian's libcpp-httplib-dev).
bool available();
// Serves until the process ends; ArgumentError where the address cannot be bound, DeviceError without the server.
void serve(Engine& engine, const Options& options);

}  // namespace tg::serve
