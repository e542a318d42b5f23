// The HTTP side: cpp-httplib's server (Debian's libcpp-httplib-dev) around the Engine. Built only where CMake
// found it (TG_HAVE_HTTPLIB); elsewhere serve() says what to install.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>

#include "serve/openai.h"
#include "tg/serve.h"

#ifdef TG_HAVE_HTTPLIB
#include <httplib.h>
#endif

namespace tg::serve {

#ifndef TG_HAVE_HTTPLIB

bool available() { return false; }

void serve(Engine&, const Options&) {
  throw DeviceError("serve", "this build has no HTTP server: install cpp-httplib (Debian: apt-get install libcpp-httplib-dev) "
                             "and build again");
}

#else

bool available() { return true; }

namespace {

const char* const kPage =
#include "serve/chat_page.inc"
    ;

int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void send_error(httplib::Response& res, const openai::BadRequest& e) {
  res.status = e.status;
  res.set_content(openai::error_json(e), "application/json");
}

// POST /v1/chat/completions and /v1/completions
void complete(Engine& engine, const Options& o, openai::Endpoint endpoint, const httplib::Request& req, httplib::Response& res) {
  static std::atomic<uint64_t> counter{0};
  openai::Parsed p;
  try {
    p = openai::parse(req.body, endpoint, engine, o.model_name);
  } catch (const openai::BadRequest& e) {
    return send_error(res, e);
  } catch (const Error& e) {
    return send_error(res, {400, e.what(), "", ""});
  }
  openai::Ids ids{(endpoint == openai::Endpoint::Chat ? "chatcmpl-" : "cmpl-") + std::to_string(now_s()) + "-" + std::to_string(counter++),
                  o.model_name, now_s()};
  if (!p.stream) {
    try {
      Outcome out = engine.run(p.request);
      res.set_content(openai::reply_json(endpoint, ids, out), "application/json");
    } catch (const Error& e) {
      send_error(res, {400, e.what(), "", ""});
    }
    return;
  }
  // streamed: the generation runs in the content provider, writing each piece as a server-sent event; a write that
  // fails (the client went away) stops it
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [&engine, endpoint, ids, p](size_t, httplib::DataSink& sink) {
    auto event = [&](const std::string& json) {
      std::string line = "data: " + json + "\n\n";
      return sink.write(line.data(), line.size());
    };
    const std::string role = "assistant";
    bool alive = endpoint != openai::Endpoint::Chat || event(openai::chunk_json(endpoint, ids, &role, "", nullptr));
    if (alive) {
      try {
        Outcome out = engine.run(p.request, [&](const std::string& piece) { return event(openai::chunk_json(endpoint, ids, nullptr, piece, nullptr)); });
        if (!out.cancelled) {
          event(openai::chunk_json(endpoint, ids, nullptr, "", &out.finish_reason));
          if (p.include_usage) event(openai::usage_chunk_json(endpoint, ids, out));
          std::string done = "data: [DONE]\n\n";
          sink.write(done.data(), done.size());
        }
      } catch (const Error& e) {
        event(openai::error_json({500, e.what(), "", ""}));
      }
    }
    sink.done();
    return true;
  });
}

}  // namespace

void serve(Engine& engine, const Options& o) {
  httplib::Server svr;
  svr.set_payload_max_length(o.max_body_bytes);
  svr.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content(kPage, "text/html; charset=utf-8"); });
  svr.Get("/v1/models", [&o](const httplib::Request&, httplib::Response& res) {
    res.set_content(openai::models_json(o.model_name, now_s()), "application/json");
  });
  svr.Post("/v1/chat/completions", [&](const httplib::Request& req, httplib::Response& res) {
    complete(engine, o, openai::Endpoint::Chat, req, res);
  });
  svr.Post("/v1/completions", [&](const httplib::Request& req, httplib::Response& res) {
    complete(engine, o, openai::Endpoint::Completion, req, res);
  });
  // httplib's own refusals (a body over the limit, an unknown path, a bad request line) in OpenAI's error form
  svr.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // one of ours, already in that form
    std::string what = res.status == 413 ? "the request body is larger than the server accepts"
                       : res.status == 404 ? "no route " + req.method + " " + req.path
                                           : "the request could not be read (HTTP status " + std::to_string(res.status) + ")";
    res.set_content(openai::error_json({res.status, what, "", ""}), "application/json");
  });
  int port = o.port;
  if (port == 0) port = svr.bind_to_any_port(o.host);
  else if (!svr.bind_to_port(o.host, port)) port = -1;
  if (port < 0) throw ArgumentError("serve", "cannot listen on " + o.host + ":" + std::to_string(o.port));
  if (o.on_listening) o.on_listening(port);
  svr.listen_after_bind();
}

#endif

}  // namespace tg::serve
