// Chat templates: the formats recognized by their markers, each written out as its Jinja template writes it.
#include "tg/text.h"

namespace tg::text {

ChatTemplate ChatTemplate::detect(const std::string& jinja, const Tokenizer& tok, SourceLocation where) {
  auto has = [&](const char* marker) { return jinja.find(marker) != std::string::npos; };
  std::string eos = tok.token_id("<|endoftext|>") ? "<|endoftext|>" : "";
  if (jinja.empty()) return ChatTemplate(tok.token_id("<|im_start|>") ? Format::ChatML : Format::Plain, eos);
  if (has("<|im_start|>")) return ChatTemplate(Format::ChatML, eos);
  if (has("<|start_header_id|>")) return ChatTemplate(Format::Llama3, eos);
  if (has("<|user|>") && has("<|assistant|>")) return ChatTemplate(Format::Tulu, eos);
  throw ArgumentError("chat template", "the model's tokenizer.chat_template uses none of the formats known here (ChatML's "
                                       "<|im_start|>, Llama 3's <|start_header_id|>, OLMo's <|user|>)", where);
}

ChatTemplate::ChatTemplate(Format format, std::string eos) : format_(format), eos_(std::move(eos)) {}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
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
