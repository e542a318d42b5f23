#include "serve/openai.h"

#include <cmath>
#include <cstdio>

#include "base/json.h"

namespace tg::serve::openai {

namespace {

using base::Json;

const Json* member(const Json& obj, const char* name) {
  for (const auto& [k, v] : obj.members)
    if (k == name) return &v;
  return nullptr;
}

[[noreturn]] void bad(const std::string& message, const std::string& param = "", int status = 400, const std::string& code = "") {
  throw BadRequest{status, message, param, code};
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

bool is_number(const Json& v) { return v.kind == Json::Kind::Int || v.kind == Json::Kind::Float; }

// an optional number field within [lo, hi]
std::optional<double> number(const Json& body, const char* name, double lo, double hi) {
  const Json* v = member(body, name);
  if (!v || v->kind == Json::Kind::Null) return std::nullopt;
  if (!is_number(*v)) bad(std::string("'") + name + "' must be a number", name);
  if (!(v->number >= lo && v->number <= hi))
    bad(std::string("'") + name + "' must be between " + num(lo) + " and " + num(hi), name);
  return v->number;
}

std::optional<int64_t> integer(const Json& body, const char* name, int64_t lo, int64_t hi) {
  const Json* v = member(body, name);
  if (!v || v->kind == Json::Kind::Null) return std::nullopt;
  if (v->kind != Json::Kind::Int) bad(std::string("'") + name + "' must be an integer", name);
  if (v->integer < lo || v->integer > hi)
    bad(std::string("'") + name + "' must be between " + std::to_string(lo) + " and " + std::to_string(hi), name);
  return v->integer;
}

std::optional<bool> boolean(const Json& body, const char* name) {
  const Json* v = member(body, name);
  if (!v || v->kind == Json::Kind::Null) return std::nullopt;
  if (v->kind != Json::Kind::Bool) bad(std::string("'") + name + "' must be true or false", name);
  return v->boolean;
}

// a message's content: a string, or an array of parts of which the text parts count
std::string content_text(const Json& c, const std::string& param) {
  if (c.kind == Json::Kind::String) return c.str;
  if (c.kind != Json::Kind::Array) bad("'content' must be a string or an array of text parts", param);
  std::string text;
  for (const Json& part : c.items) {
    const Json* type = part.kind == Json::Kind::Object ? member(part, "type") : nullptr;
    const Json* t = part.kind == Json::Kind::Object ? member(part, "text") : nullptr;
    if (!type || type->kind != Json::Kind::String || type->str != "text" || !t || t->kind != Json::Kind::String)
      bad("only text parts ({\"type\": \"text\", \"text\": ...}) are supported in 'content'", param);
    text += t->str;
  }
  return text;
}

std::string usage(const Outcome& out) {
  return "{\"prompt_tokens\":" + std::to_string(out.prompt_tokens) + ",\"completion_tokens\":" + std::to_string(out.completion_tokens) +
         ",\"total_tokens\":" + std::to_string(out.prompt_tokens + out.completion_tokens) +
         ",\"prompt_tokens_details\":{\"cached_tokens\":" + std::to_string(out.reused_tokens) + "}}";
}

std::string head(Endpoint e, const Ids& ids, bool chunk) {
  const char* object = e == Endpoint::Chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
  return "{\"id\":" + base::json_quote(ids.id) + ",\"object\":\"" + object + "\",\"created\":" + std::to_string(ids.created) +
         ",\"model\":" + base::json_quote(ids.model);
}

std::string quote(const std::string& s) { return base::json_quote(base::valid_utf8(s)); }

}  // namespace

Parsed parse(const std::string& body, Endpoint endpoint, const Engine& engine, const std::string& model_name) {
  Json j;
  try {
    j = base::parse_json(body, "request", "the request body", SourceLocation::current());
  } catch (const Error& e) {
    bad(std::string("the body is not valid JSON: ") + e.what());
  }
  if (j.kind != Json::Kind::Object) bad("the body must be a JSON object");
  const Json* model = member(j, "model");
  if (!model || model->kind != Json::Kind::String) bad("'model' must be given, as a string", "model");
  if (model->str != model_name)
    bad("the model '" + model->str + "' does not exist here; GET /v1/models lists '" + model_name + "'", "model", 404, "model_not_found");
  Parsed p;
  integer(j, "n", 1, 1);  // one choice per request
  if (endpoint == Endpoint::Chat) {
    const Json* messages = member(j, "messages");
    if (!messages || messages->kind != Json::Kind::Array || messages->items.empty())
      bad("'messages' must be a non-empty array", "messages");
    std::vector<text::ChatMessage> chat;
    for (size_t i = 0; i < messages->items.size(); i++) {
      const Json& m = messages->items[i];
      std::string at = "messages[" + std::to_string(i) + "]";
      if (m.kind != Json::Kind::Object) bad(at + " must be an object", at);
      const Json* role = member(m, "role");
      if (!role || role->kind != Json::Kind::String) bad(at + ".role must be a string", at + ".role");
      std::string r = role->str == "developer" ? "system" : role->str;  // OpenAI's newer name for system
      if (r != "system" && r != "user" && r != "assistant") bad(at + ".role must be system, developer, user or assistant", at + ".role");
      const Json* content = member(m, "content");
      if (!content) bad(at + ".content is missing", at + ".content");
      chat.push_back({r, content_text(*content, at + ".content")});
    }
    p.request.prompt = engine.chat_prompt(chat);
  } else {
    const Json* prompt = member(j, "prompt");
    if (prompt && prompt->kind == Json::Kind::Array && prompt->items.size() == 1) prompt = &prompt->items[0];
    if (!prompt || prompt->kind != Json::Kind::String || prompt->str.empty()) bad("'prompt' must be a non-empty string", "prompt");
    p.request.prompt = engine.tokenizer().encode(prompt->str);
  }
  const int64_t context = engine.max_context(), n = static_cast<int64_t>(p.request.prompt.size());
  if (n >= context)
    bad("the prompt is " + std::to_string(n) + " tokens and the context holds " + std::to_string(context), "messages", 400, "context_length_exceeded");
  std::optional<int64_t> max = integer(j, "max_completion_tokens", 1, INT32_MAX);
  if (!max) max = integer(j, "max_tokens", 1, INT32_MAX);
  p.request.max_tokens = std::min(max.value_or(context - n), context - n);
  p.request.sampling.temperature = number(j, "temperature", 0, 2).value_or(1.0);
  p.request.sampling.top_p = number(j, "top_p", 0, 1).value_or(1.0);
  if (p.request.sampling.top_p == 0) p.request.sampling.top_p = 1e-9;  // the most likely token only
  if (std::optional<int64_t> seed = integer(j, "seed", INT64_MIN, INT64_MAX)) p.request.sampling.seed = static_cast<uint64_t>(*seed);
  else p.request.sampling.seed = 0;
  if (const Json* stop = member(j, "stop"); stop && stop->kind != Json::Kind::Null) {
    std::vector<const Json*> items;
    if (stop->kind == Json::Kind::String) items.push_back(stop);
    else if (stop->kind == Json::Kind::Array && stop->items.size() <= 4)
      for (const Json& s : stop->items) items.push_back(&s);
    else bad("'stop' must be a string or an array of at most 4 strings", "stop");
    for (const Json* s : items) {
      if (s->kind != Json::Kind::String || s->str.empty()) bad("'stop' must hold non-empty strings", "stop");
      p.request.stop.push_back(s->str);
    }
  }
  p.stream = boolean(j, "stream").value_or(false);
  if (const Json* o = member(j, "stream_options"); o && o->kind != Json::Kind::Null) {
    if (o->kind != Json::Kind::Object) bad("'stream_options' must be an object", "stream_options");
    p.include_usage = boolean(*o, "include_usage").value_or(false);
  }
  return p;
}

std::string error_json(const BadRequest& e) {
  const char* type = e.status >= 500 ? "server_error" : "invalid_request_error";
  return "{\"error\":{\"message\":" + quote(e.message) + ",\"type\":\"" + type + "\",\"param\":" + (e.param.empty() ? "null" : quote(e.param)) +
         ",\"code\":" + (e.code.empty() ? "null" : quote(e.code)) + "}}";
}

std::string models_json(const std::string& model_name, int64_t created) {
  return "{\"object\":\"list\",\"data\":[{\"id\":" + quote(model_name) + ",\"object\":\"model\",\"created\":" + std::to_string(created) +
         ",\"owned_by\":\"tinygrad.cpp\"}]}";
}

std::string reply_json(Endpoint e, const Ids& ids, const Outcome& out) {
  std::string choice = e == Endpoint::Chat
                           ? "{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":" + quote(out.text) + "},\"logprobs\":null"
                           : "{\"index\":0,\"text\":" + quote(out.text) + ",\"logprobs\":null";
  return head(e, ids, false) + ",\"choices\":[" + choice + ",\"finish_reason\":\"" + out.finish_reason + "\"}],\"usage\":" + usage(out) + "}";
}

std::string chunk_json(Endpoint e, const Ids& ids, const std::string* role, const std::string& text, const std::string* finish) {
  std::string fin = finish ? "\"" + *finish + "\"" : "null";
  if (e == Endpoint::Completion)
    return head(e, ids, true) + ",\"choices\":[{\"index\":0,\"text\":" + quote(text) + ",\"logprobs\":null,\"finish_reason\":" + fin + "}]}";
  std::string delta = "{";
  if (role) delta += "\"role\":" + quote(*role) + (finish ? "" : ",");
  if (!finish) delta += "\"content\":" + quote(text);
  delta += "}";
  return head(e, ids, true) + ",\"choices\":[{\"index\":0,\"delta\":" + delta + ",\"logprobs\":null,\"finish_reason\":" + fin + "}]}";
}

std::string usage_chunk_json(Endpoint e, const Ids& ids, const Outcome& out) {
  return head(e, ids, true) + ",\"choices\":[],\"usage\":" + usage(out) + "}";
}

}  // namespace tg::serve::openai
