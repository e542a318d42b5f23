// The Hugging Face tokenizer files: tokenizer.json (its model, pre-tokenizer, normalizer, decoder and added
// tokens), GPT-2's original vocab.json and merges.txt, and Tokenizer::load, which finds them in a folder.
#include <string>

#include "state/file_io.h"
#include "text/vocab.h"

namespace tg::text {

using base::Json;

namespace {

const Json* member(const Json& obj, std::string_view key) {
  if (obj.kind != Json::Kind::Object) return nullptr;
  for (const auto& [k, v] : obj.members)
    if (k == key) return &v;
  return nullptr;
}
bool is_null(const Json* j) { return j == nullptr || j->kind == Json::Kind::Null; }
std::string str_of(const Json* j, const std::string& file, const std::string& what, SourceLocation where) {
  if (!j || j->kind != Json::Kind::String) fail(file, what + ": expected a string", where);
  return j->str;
}
bool bool_of(const Json* j, bool fallback, const std::string& file, const std::string& what, SourceLocation where) {
  if (is_null(j)) return fallback;
  if (j->kind != Json::Kind::Bool) fail(file, what + ": expected true or false", where);
  return j->boolean;
}


std::string read_text(const std::string& path, SourceLocation where) {
  size_t size = 0;
  auto data = state::map_file(path, size, "Tokenizer", where);
  return std::string(reinterpret_cast<const char*>(data.get()), size);
}

// The regexes of tokenizer.json's Split pre-tokenizers that we have matchers for.
std::optional<SplitPattern> known_pattern(const std::string& re) {
  static const std::string contractions = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|";
  static const std::string rest = "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  if (re == "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+")
    return SplitPattern::GPT2;
  if (re == contractions + "\\p{N}{1,3}" + rest) return SplitPattern::Llama3;
  if (re == contractions + "\\p{N}" + rest) return SplitPattern::Qwen2;
  return std::nullopt;
}

void read_pre_tokenizer(Tokenizer::Impl& t, const Json* pre, const std::string& file, SourceLocation where) {
  t.byte_level = false;
  if (is_null(pre)) return;
  std::vector<const Json*> steps;
  std::string type = str_of(member(*pre, "type"), file, "pre_tokenizer.type", where);
  if (type == "Sequence") {
    const Json* list = member(*pre, "pretokenizers");
    if (!list || list->kind != Json::Kind::Array) fail(file, "pre_tokenizer.pretokenizers: expected an array", where);
    for (const Json& s : list->items) steps.push_back(&s);
  } else {
    steps.push_back(pre);
  }
  bool split_seen = false;
  for (const Json* s : steps) {
    std::string st = str_of(member(*s, "type"), file, "pre_tokenizer.type", where);
    if (st == "ByteLevel") {
      t.byte_level = true;
      t.add_prefix_space =
          bool_of(member(*s, "add_prefix_space"), false, file, "pre_tokenizer.add_prefix_space", where);
      if (bool_of(member(*s, "use_regex"), true, file, "pre_tokenizer.use_regex", where)) {
        if (split_seen) fail(file, "pre_tokenizer: two splitting regexes", where);
        t.split = SplitPattern::GPT2;
      }
    } else if (st == "Split" && !split_seen && !t.byte_level) {
      const Json* pattern = member(*s, "pattern");
      std::string re =
          str_of(pattern ? member(*pattern, "Regex") : nullptr, file, "pre_tokenizer Split.pattern.Regex", where);
      auto known = known_pattern(re);
      if (!known) fail(file, "unsupported pre-tokenizer regex " + base::json_quote(re), where);
      if (str_of(member(*s, "behavior"), file, "Split.behavior", where) != "Isolated" ||
          bool_of(member(*s, "invert"), false, file, "Split.invert", where))
        fail(file, "unsupported Split pre-tokenizer (only behavior Isolated, not inverted)", where);
      t.split = known;
      split_seen = true;
    } else {
      fail(file, "unsupported pre-tokenizer " + base::json_quote(st), where);
    }
  }
  if (!t.byte_level) fail(file, "a Split pre-tokenizer without ByteLevel is not supported", where);
}

void read_normalizer(Tokenizer::Impl& t, const Json* norm, const std::string& file, SourceLocation where) {
  if (is_null(norm)) return;
  std::string type = str_of(member(*norm, "type"), file, "normalizer.type", where);
  if (type == "Sequence") {
    const Json* list = member(*norm, "normalizers");
    if (!list || list->kind != Json::Kind::Array) fail(file, "normalizer.normalizers: expected an array", where);
    for (const Json& s : list->items) read_normalizer(t, &s, file, where);
  } else if (type == "Prepend") {
    t.normalizer.push_back({true, str_of(member(*norm, "prepend"), file, "normalizer Prepend.prepend", where), ""});
  } else if (type == "Replace") {
    const Json* pattern = member(*norm, "pattern");
    std::string a =
        str_of(pattern ? member(*pattern, "String") : nullptr, file, "normalizer Replace.pattern.String", where);
    if (a.empty()) fail(file, "normalizer Replace: empty pattern", where);
    t.normalizer.push_back({false, a, str_of(member(*norm, "content"), file, "normalizer Replace.content", where)});
  } else {
    fail(file, "unsupported normalizer " + base::json_quote(type), where);
  }
}

// SentencePiece-style decoders: Replace("▁", " "), ByteFallback, Fuse, Strip(" ", n, 0) are what we apply; any other
// step would change the text in a way we do not reproduce
void read_decoder(Tokenizer::Impl& t, const Json* dec, const std::string& file, SourceLocation where) {
  if (is_null(dec)) return;
  std::string type = str_of(member(*dec, "type"), file, "decoder.type", where);
  if (type == "Sequence") {
    const Json* list = member(*dec, "decoders");
    if (!list || list->kind != Json::Kind::Array) fail(file, "decoder.decoders: expected an array", where);
    for (const Json& s : list->items) read_decoder(t, &s, file, where);
  } else if (type == "Replace") {
    const Json* pattern = member(*dec, "pattern");
    std::string a =
        str_of(pattern ? member(*pattern, "String") : nullptr, file, "decoder Replace.pattern.String", where);
    if (a != "\xE2\x96\x81" || str_of(member(*dec, "content"), file, "decoder Replace.content", where) != " ")
      fail(file, "unsupported decoder Replace (only \"▁\" by \" \")", where);
  } else if (type == "Strip") {
    const Json* start = member(*dec, "start");
    if (str_of(member(*dec, "content"), file, "decoder Strip.content", where) != " " || !start ||
        start->kind != Json::Kind::Int || start->integer < 0)
      fail(file, "unsupported decoder Strip (only leading spaces)", where);
    t.strip_leading = static_cast<size_t>(start->integer);
  } else if (type != "ByteFallback" && type != "Fuse" && type != "ByteLevel") {
    fail(file, "unsupported decoder " + base::json_quote(type), where);
  }
}

}  // namespace

std::shared_ptr<Tokenizer::Impl> load_tokenizer_json(const std::string& file, SourceLocation where) {
  auto t = std::make_shared<Tokenizer::Impl>();
  Json root = state::parse_json_file(file, "Tokenizer", where);
  if (root.kind != Json::Kind::Object) fail(file, "expected a JSON object", where);
  const Json* model = member(root, "model");
  if (!model || model->kind != Json::Kind::Object) fail(file, "no \"model\" object", where);
  if (const Json* type = member(*model, "type"); !is_null(type) && str_of(type, file, "model.type", where) != "BPE")
    fail(file, "unsupported model type " + base::json_quote(type->str) + " (only BPE)", where);
  if (const Json* d = member(*model, "dropout"); !is_null(d) && !(d->kind == Json::Kind::Int && d->integer == 0))
    fail(file, "model.dropout is not supported", where);
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (const Json* a = member(*model, affix); !is_null(a) && str_of(a, file, affix, where) != "")
      fail(file, std::string("model.") + affix + " is not supported", where);

  read_pre_tokenizer(*t, member(root, "pre_tokenizer"), file, where);
  if (t->byte_level) {
    if (!is_null(member(root, "normalizer")))
      fail(file, "a normalizer with a byte-level pre-tokenizer is not supported", where);
  } else {
    read_normalizer(*t, member(root, "normalizer"), file, where);
    read_decoder(*t, member(root, "decoder"), file, where);
  }
  t->ignore_merges = bool_of(member(*model, "ignore_merges"), false, file, "model.ignore_merges", where);
  t->byte_fallback = bool_of(member(*model, "byte_fallback"), false, file, "model.byte_fallback", where);
  t->fuse_unk = bool_of(member(*model, "fuse_unk"), false, file, "model.fuse_unk", where);

  const Json* vocab = member(*model, "vocab");
  if (!vocab) fail(file, "no model.vocab", where);
  read_vocab(*t, *vocab, file, where);

  const Json* merges = member(*model, "merges");
  if (!merges || merges->kind != Json::Kind::Array) fail(file, "model.merges: expected an array", where);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const Json& m : merges->items) {
    if (m.kind == Json::Kind::String) {  // "a b" (older files)
      size_t sp = m.str.find(' ');
      if (sp == std::string::npos || m.str.find(' ', sp + 1) != std::string::npos)
        fail(file, "merge " + base::json_quote(m.str) + " is not two tokens", where);
      pairs.emplace_back(m.str.substr(0, sp), m.str.substr(sp + 1));
    } else if (m.kind == Json::Kind::Array && m.items.size() == 2 && m.items[0].kind == Json::Kind::String &&
               m.items[1].kind == Json::Kind::String) {  // ["a", "b"] (newer files)
      pairs.emplace_back(m.items[0].str, m.items[1].str);
    } else {
      fail(file, "model.merges: each merge is \"a b\" or [\"a\", \"b\"]", where);
    }
  }
  read_merges(*t, pairs, file, where);

  if (const Json* unk = member(*model, "unk_token"); !is_null(unk)) {
    std::string name = str_of(unk, file, "model.unk_token", where);
    auto it = t->piece_id.find(name);
    if (it == t->piece_id.end())
      fail(file, "model.unk_token " + base::json_quote(name) + " is not in the vocab", where);
    t->unk_id = it->second;
  }
  if (t->byte_level || t->byte_fallback) find_byte_tokens(*t, file, where);

  if (const Json* added = member(root, "added_tokens"); !is_null(added)) {
    if (added->kind != Json::Kind::Array) fail(file, "added_tokens: expected an array", where);
    for (const Json& a : added->items) {
      const Json* id = member(a, "id");
      if (!id || id->kind != Json::Kind::Int) fail(file, "added_tokens: each needs an integer id", where);
      add_token(*t, id->integer, str_of(member(a, "content"), file, "added_tokens.content", where), file, where);
    }
  }
  finish(*t, file, where);
  return t;
}

// GPT-2's original files: vocab.json (token: id) and merges.txt ("#version" line, then "a b" per line)
std::shared_ptr<Tokenizer::Impl> load_gpt2_files(const std::string& folder, SourceLocation where) {
  auto t = std::make_shared<Tokenizer::Impl>();
  t->split = SplitPattern::GPT2;
  std::string vocab_file = folder + "/vocab.json", merges_file = folder + "/merges.txt";
  read_vocab(*t, state::parse_json_file(vocab_file, "Tokenizer", where), vocab_file, where);
  std::string text = read_text(merges_file, where);
  std::vector<std::pair<std::string, std::string>> pairs;
  size_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    at = end + 1, line_no++;
    if (line.empty() || (line_no == 1 && line.starts_with("#version"))) continue;
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos || sp == 0 || sp + 1 == line.size() ||
        line.find(' ', sp + 1) != std::string_view::npos)
      fail(merges_file, "line " + std::to_string(line_no) + ": expected two tokens separated by a space", where);
    pairs.emplace_back(std::string(line.substr(0, sp)), std::string(line.substr(sp + 1)));
  }
  read_merges(*t, pairs, merges_file, where);
  find_byte_tokens(*t, vocab_file, where);
  if (auto it = t->name_id.find("<|endoftext|>"); it != t->name_id.end()) t->added.emplace_back(it->first, it->second);
  finish(*t, vocab_file, where);
  return t;
}

namespace {

bool is_file(const std::string& path) {
  size_t size = 0;
  try {
    state::map_file(path, size, "Tokenizer", SourceLocation());
    return true;
  } catch (const ArgumentError&) {
    return false;
  }
}

}  // namespace

Tokenizer Tokenizer::load(const std::string& folder, SourceLocation where) {
  if (folder.ends_with(".json") && is_file(folder)) return Tokenizer(load_tokenizer_json(folder, where));
  if (is_file(folder + "/tokenizer.json")) return Tokenizer(load_tokenizer_json(folder + "/tokenizer.json", where));
  if (is_file(folder + "/vocab.json") && is_file(folder + "/merges.txt"))
    return Tokenizer(load_gpt2_files(folder, where));
  fail(folder, "no tokenizer.json, nor vocab.json and merges.txt", where);
}

}  // namespace tg::text
