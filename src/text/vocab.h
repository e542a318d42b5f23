// The tables a tokenizer is (Tokenizer::Impl) and the helpers that fill them, shared by its loaders:
// hf_files.cpp (tokenizer.json, GPT-2's vocab.json and merges.txt) and gguf_vocab.cpp (a GGUF file's metadata).
// The BPE engine that encodes with them is tokenizer.cpp.
#pragma once
#include <array>
#include <map>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/json.h"
#include "text/unicode.h"
#include "tg/text.h"

namespace tg::text {

struct Tokenizer::Impl {
  bool byte_level = true;
  std::optional<SplitPattern> split;  // byte-level: the words' regex (none: the whole segment is one word)
  bool add_prefix_space = false;      // byte-level: " " before each segment that does not start with one
  struct Step {  // SentencePiece normalizer: prepend `a` to a non-empty segment, or replace every `a` by `b`
    bool prepend;
    std::string a, b;
  };
  std::vector<Step> normalizer;
  size_t strip_leading = 0;  // decoder: spaces dropped from the front of a decoded text (LLaMA 2's Strip)

  bool ignore_merges = false;  // a word that is a token as a whole is that token (LLaMA 3)
  bool byte_fallback = false;
  bool fuse_unk = false;
  int32_t unk_id = -1;

  std::unordered_map<std::string, int32_t>
      piece_id;  // the model's tokens in the encoding domain (raw bytes if byte-level)
  std::unordered_map<std::string, int32_t> name_id;  // every token as the files spell it
  std::vector<std::string> bytes;                    // per id
  std::vector<uint8_t> present;                      // per id: whether a token has it
  std::array<int32_t, 256> byte_id{};                // byte-level: the one-byte tokens; byte fallback: <0xXX>
  struct Merge {
    int32_t rank, id;
  };
  std::unordered_map<uint64_t, Merge> merges;          // by (left id, right id)
  std::vector<std::pair<std::string, int32_t>> added;  // added tokens, longest first (leftmost-longest matching)

  mutable std::mutex cache_mu;  // encode is const and may run on several threads
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache;

  static uint64_t key(int32_t a, int32_t b) { return uint64_t(uint32_t(a)) << 32 | uint32_t(b); }
  void bpe(std::string_view word, std::vector<int32_t>& out, SourceLocation where) const;
  void bpe_cached(std::string_view word, std::vector<int32_t>& out, SourceLocation where) const;
  void encode_segment(std::string_view seg, std::vector<int32_t>& out, SourceLocation where) const;
};

// ArgumentError("Tokenizer", "<file>: <what>")
[[noreturn]] void fail(const std::string& file, const std::string& what, SourceLocation where);
// A byte-level token's raw bytes (GPT-2's bytes_to_unicode undone), or nullopt if a character of it stands for no byte.
std::optional<std::string> unbyte(std::string_view s);
// id -> the token's bytes and its name; an id outside [0, 2^24) is refused
void set_token(Tokenizer::Impl& t, int64_t id, const std::string& name, std::string bytes, const std::string& file,
               SourceLocation where);
// vocab (name -> id) into the tables; `t.byte_level` spells tokens in bytes_to_unicode characters
void read_vocab(Tokenizer::Impl& t, const base::Json& vocab, const std::string& file, SourceLocation where);
// the merges in rank order, each naming tokens of the vocab
void read_merges(Tokenizer::Impl& t, const std::vector<std::pair<std::string, std::string>>& merges, const std::string& file,
                 SourceLocation where);
// the byte tokens every input byte can fall back on: byte-level's 256 one-byte tokens, or SentencePiece's <0xXX>
void find_byte_tokens(Tokenizer::Impl& t, const std::string& file, SourceLocation where);
// a token matched in the text before BPE (control and user-defined tokens)
void add_token(Tokenizer::Impl& t, int64_t id, const std::string& content, const std::string& file, SourceLocation where);
// checks the vocabulary is not empty and orders the added tokens longest first
void finish(Tokenizer::Impl& t, const std::string& file, SourceLocation where);

// The loaders: tokenizer.json, GPT-2's vocab.json + merges.txt in `folder`, a GGUF file's tokenizer.ggml.* metadata.
std::shared_ptr<Tokenizer::Impl> load_tokenizer_json(const std::string& file, SourceLocation where);
std::shared_ptr<Tokenizer::Impl> load_gpt2_files(const std::string& folder, SourceLocation where);
std::shared_ptr<Tokenizer::Impl> load_gguf_vocab(const std::map<std::string, GGUFValue>& meta, const std::string& file,
                                                 SourceLocation where);

}  // namespace tg::text
