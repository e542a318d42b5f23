// OpenAI's API as clients use it: requests read and checked into an Engine's Request, replies and stream chunks
// written as JSON. Independent of HTTP, so each rule is testable alone.
#pragma once
#include <string>
#include <vector>

#include "tg/serve.h"

namespace tg::serve::openai {

// A request the client got wrong: the HTTP status (400, 404, 413) and OpenAI's error fields.
struct BadRequest {
  int status;
  std::string message, param, code;
};

enum class Endpoint { Chat, Completion };

struct Parsed {
  Request request;
  bool stream = false, include_usage = false;
};

// The body of POST /v1/chat/completions or /v1/completions, checked; throws BadRequest.
Parsed parse(const std::string& body, Endpoint endpoint, const Engine& engine, const std::string& model_name);

// JSON documents, each on one line: the error, the model list, a whole reply, a stream's chunks.
std::string error_json(const BadRequest& e);
std::string models_json(const std::string& model_name, int64_t created);
struct Ids {
  std::string id, model;
  int64_t created;
};
std::string reply_json(Endpoint endpoint, const Ids& ids, const Outcome& out);
std::string chunk_json(Endpoint endpoint, const Ids& ids, const std::string* role, const std::string& text, const std::string* finish);
std::string usage_chunk_json(Endpoint endpoint, const Ids& ids, const Outcome& out);

}  // namespace tg::serve::openai
