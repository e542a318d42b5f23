// Chat templates: the model's Jinja program run (text/jinja.h), or the formats recognized by their markers, each
// written out as its Jinja template writes it.
#include "tg/text.h"

#include <filesystem>
#include <fstream>

#include "base/json.h"
#include "state/file_io.h"
#include "text/jinja.h"

namespace tg::text {

ChatTemplate ChatTemplate::detect(const std::string& jinja, const Tokenizer& tok, const std::string& bos, const std::string& eos,
                                  SourceLocation where) {
  auto has = [&](const char* marker) { return jinja.find(marker) != std::string::npos; };
  std::string end = !eos.empty() ? eos : tok.token_id("<|endoftext|>") ? "<|endoftext|>" : "";
  if (jinja.empty()) return ChatTemplate(tok.token_id("<|im_start|>") ? Format::ChatML : Format::Plain, end);
  std::optional<Format> format;
  if (has("<|im_start|>")) format = Format::ChatML;
  else if (has("<|start_header_id|>")) format = Format::Llama3;
  else if (has("<|user|>") && has("<|assistant|>")) format = Format::Tulu;
  ChatTemplate t(format.value_or(Format::Plain), end);
  t.bos_ = bos;
  try {
    t.program_ = std::make_shared<const jinja::Template>(jinja, where);
  } catch (const ArgumentError& e) {
    if (!format)
      throw ArgumentError("chat template", std::string(e.what()) + "; nor does it use one of the formats known here (ChatML's "
                                           "<|im_start|>, Llama 3's <|start_header_id|>, OLMo's <|user|>)", where);
  }
  return t;
}

ChatTemplate ChatTemplate::from_gguf(const std::map<std::string, GGUFValue>& metadata, const Tokenizer& tok, const std::string& file,
                                     SourceLocation where) {
  auto text = [&](const char* key) -> std::string {
    auto it = metadata.find(key);
    return it == metadata.end() ? "" : it->second.as_string(file + ": " + key, where);
  };
  auto spelling = [&](const char* key) -> std::string {
    auto it = metadata.find(key);
    if (it == metadata.end()) return "";
    int64_t id = it->second.as_int(file + ": " + key, where);
    return id >= 0 && id < tok.vocab_size() ? tok.token_bytes(static_cast<int32_t>(id), where) : "";
  };
  return detect(text("tokenizer.chat_template"), tok, spelling("tokenizer.ggml.bos_token_id"), spelling("tokenizer.ggml.eos_token_id"), where);
}

ChatTemplate ChatTemplate::from_folder(const std::string& folder, const Tokenizer& tok, SourceLocation where) {
  namespace fs = std::filesystem;
  std::string jinja, bos, eos;
  fs::path config = fs::path(folder) / "tokenizer_config.json";
  if (fs::exists(config)) {
    base::Json j = state::parse_json_file(config.string(), "chat template", where);
    auto member = [&](const base::Json& obj, const char* key) -> const base::Json* {
      for (const auto& [k, v] : obj.members)
        if (k == key) return &v;
      return nullptr;
    };
    auto token = [&](const char* key) -> std::string {  // "<s>", or {"content": "<s>", ...}
      const base::Json* t = member(j, key);
      if (t && t->kind == base::Json::Kind::Object) t = member(*t, "content");
      return t && t->kind == base::Json::Kind::String ? t->str : "";
    };
    bos = token("bos_token"), eos = token("eos_token");
    if (const base::Json* t = member(j, "chat_template")) {
      if (t->kind == base::Json::Kind::String) jinja = t->str;
      for (const base::Json& named : t->items)  // [{"name": "default", "template": "..."}, ...]
        if (const base::Json* n = member(named, "name"); n && n->str == "default")
          if (const base::Json* body = member(named, "template")) jinja = body->str;
    }
  }
  fs::path file = fs::path(folder) / "chat_template.jinja";
  if (jinja.empty() && fs::exists(file)) {
    std::ifstream in(file, std::ios::binary);
    jinja.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return detect(jinja, tok, bos, eos, where);
}

ChatTemplate::ChatTemplate(Format format, std::string eos) : format_(format), eos_(std::move(eos)) {}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  if (program_) {  // the variables Hugging Face's apply_chat_template gives a template without tools
    jinja::List list;
    for (const ChatMessage& m : messages) list.push_back(jinja::Value::of(jinja::Dict{{"role", jinja::Value::of(m.role)}, {"content", jinja::Value::of(m.content)}}));
    return program_->render({{"messages", jinja::Value::of(std::move(list))}, {"add_generation_prompt", jinja::Value::of(add_generation_prompt)},
                             {"bos_token", jinja::Value::of(bos_)}, {"eos_token", jinja::Value::of(eos_)}, {"tools", jinja::Value::none()}});
  }
  std::string out;
  switch (format_) {
    case Format::ChatML:
      for (const ChatMessage& m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      if (add_generation_prompt) out += "<|im_start|>assistant\n";
      break;
    case Format::Llama3: {
      auto trim = [](const std::string& s) {  // the template trims each message
        size_t b = s.find_first_not_of(" \t\n\r"), e = s.find_last_not_of(" \t\n\r");
        return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
      };
      out = "<|begin_of_text|>";
      for (const ChatMessage& m : messages) out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
      if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      break;
    }
    case Format::Tulu:
      for (size_t i = 0; i < messages.size(); i++) {
        const ChatMessage& m = messages[i];
        if (m.role == "assistant") out += "<|assistant|>\n" + m.content + eos_ + (i + 1 < messages.size() ? "\n" : "");
        else out += "<|" + m.role + "|>\n" + m.content + "\n";
      }
      if (add_generation_prompt) out += "<|assistant|>\n";
      break;
    case Format::Plain:
      for (const ChatMessage& m : messages) out += m.role + ": " + m.content + "\n";
      if (add_generation_prompt) out += "assistant:";
      break;
  }
  return out;
}

std::vector<std::string> ChatTemplate::end_of_turn() const {
  switch (format_) {
    case Format::ChatML: return {"<|im_end|>"};
    case Format::Llama3: return {"<|eot_id|>"};
    case Format::Tulu: return eos_.empty() ? std::vector<std::string>{} : std::vector<std::string>{eos_};
    case Format::Plain: return {};
  }
  return {};
}

}  // namespace tg::text
