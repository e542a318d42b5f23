// tg::text: the tokenizers of the language models (include/tg/llm.h), text to token ids and back.
//
// Reads a Hugging Face model folder: tokenizer.json (GPT-2, LLaMA 3 and kin: byte-level BPE; LLaMA 2: SentencePiece-
// style BPE with byte fallback), or GPT-2's vocab.json + merges.txt. Any malformed file, unsupported configuration or
// bad id raises tg::ArgumentError("Tokenizer", ...); nothing the files or the caller pass can crash it.
//
//   auto tok = tg::text::Tokenizer::load("models/gpt2");
//   std::vector<int32_t> ids = tok.encode("Hello world<|endoftext|>");  // {15496, 995, 50256}
//   std::string text = tok.decode(ids);
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tg/error.h"
#include "tg/state.h"

namespace tg::text {

class Tokenizer {
 public:
  // `folder` holds tokenizer.json, or vocab.json + merges.txt; a path to a tokenizer.json file works too.
  static Tokenizer load(const std::string& folder, SourceLocation where = SourceLocation::current());

  // The vocabulary a GGUF file carries (gguf_load's metadata, tokenizer.ggml.*): "gpt2" byte-level BPE (its merges,
  // the pre-tokenizer tokenizer.ggml.pre names: default/gpt-2, llama-bpe, qwen2) or "llama" SentencePiece (merges
  // made from the token scores). `file` names the source in errors.
  static Tokenizer from_gguf(const std::map<std::string, GGUFValue>& metadata, const std::string& file,
                             SourceLocation where = SourceLocation::current());

  // The ids of `text` (any bytes; invalid UTF-8 is encoded byte by byte where the vocabulary allows it). The added
  // tokens (tokenizer.json's added_tokens, GPT-2's <|endoftext|>) are matched as such where they occur in the text.
  // No BOS or EOS is added: prepend token_id("<|begin_of_text|>") or the like yourself.
  std::vector<int32_t> encode(std::string_view text, SourceLocation where = SourceLocation::current()) const;

  // The tokens' bytes concatenated, as the tokenizer's decoder writes them (LLaMA 2's drops the one space that
  // encode put in front). The result may end in the middle of a UTF-8 sequence.
  std::string decode(const std::vector<int32_t>& ids, SourceLocation where = SourceLocation::current()) const;

  // One token's bytes, for streaming output (LLaMA 2's "▁Hello" is " Hello": strip the first yourself).
  std::string token_bytes(int32_t id, SourceLocation where = SourceLocation::current()) const;

  int64_t vocab_size() const;                                       // the largest id + 1, added tokens included
  std::optional<int32_t> token_id(const std::string& token) const;  // the vocabulary's spelling: "<|endoftext|>"

  Tokenizer(const Tokenizer&) = default;  // copies share the (immutable) vocabulary and the encode cache
  Tokenizer& operator=(const Tokenizer&) = default;
  ~Tokenizer();

  struct Impl;  // src/text/vocab.h

 private:
  explicit Tokenizer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// One message of a chat: role "system", "user" or "assistant", and its text.
struct ChatMessage {
  std::string role, content;
};

namespace jinja {
class Template;
}

// A chat as the model was trained to read it. The chat templates of GGUF files (tokenizer.chat_template) and of
// Hugging Face folders (tokenizer_config.json's chat_template) are Jinja programs: run here as Hugging Face runs them
// (src/text/jinja.h), so a model's own defaults (Qwen's system prompt, Llama 3's date header) are kept. A template
// this interpreter cannot parse falls back to the format its markers name, written here.
class ChatTemplate {
 public:
  enum class Format {
    ChatML,  // Qwen and many others: <|im_start|>role\ncontent<|im_end|>\n
    Llama3,  // <|begin_of_text|><|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
    Tulu,    // OLMo's: <|user|>\ncontent\n<|assistant|>\ncontent<eos>\n
    Plain,   // no template and no markers: "role: content" lines
  };
  // `jinja`: a model's template, empty for none (then ChatML where the vocabulary has <|im_start|>, else Plain).
  // `bos` and `eos`: the spellings of the model's begin- and end-of-text tokens (the template's bos_token and
  // eos_token; eos defaults to <|endoftext|> where the vocabulary has it). A template that neither parses nor has
  // one of the known markers raises ArgumentError with the parse error.
  static ChatTemplate detect(const std::string& jinja, const Tokenizer& tok, const std::string& bos = "",
                             const std::string& eos = "", SourceLocation where = SourceLocation::current());
  // A GGUF file's (gguf_load's metadata): tokenizer.chat_template, and the spellings of tokenizer.ggml.bos_token_id
  // and eos_token_id. `file` names the source in errors.
  static ChatTemplate from_gguf(const std::map<std::string, GGUFValue>& metadata, const Tokenizer& tok, const std::string& file,
                               SourceLocation where = SourceLocation::current());
  // A Hugging Face folder's: tokenizer_config.json's chat_template (a string, or the one named "default" of a list),
  // bos_token and eos_token; chat_template.jinja where the folder has one (newer releases keep it there).
  static ChatTemplate from_folder(const std::string& folder, const Tokenizer& tok, SourceLocation where = SourceLocation::current());
  ChatTemplate(Format format, std::string eos);  // one of the formats written here (Tulu ends turns with eos)
  // The messages, then (add_generation_prompt) the opening of the assistant's turn. A template that refuses the
  // messages (its raise_exception: roles that do not alternate) raises ArgumentError with its message.
  std::string render(const std::vector<ChatMessage>& messages, bool add_generation_prompt = true) const;
  // The tokens that end the assistant's turn in this format (<|im_end|>, <|eot_id|>), as the vocabulary spells them.
  std::vector<std::string> end_of_turn() const;
  Format format() const { return format_; }
  bool runs_jinja() const { return program_ != nullptr; }  // whether render() runs the model's template

 private:
  Format format_;
  std::string bos_, eos_;
  std::shared_ptr<const jinja::Template> program_;
};

// The pre-tokenizer regexes, hand-written (exposed for tests). Each splits `text` into consecutive pieces that cover
// it exactly; invalid UTF-8 bytes count as one character each of no class.
enum class SplitPattern {
  GPT2,    // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  Llama3,  // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|
           // \s+(?!\S)|\s+  (tiktoken's cl100k_base)
  Qwen2,   // LLaMA 3's with \p{N} for \p{N}{1,3}
};
std::vector<std::string_view> split_words(std::string_view text, SplitPattern pattern);

const char* unicode_version();  // of the character tables: "14.0.0"

}  // namespace tg::text
