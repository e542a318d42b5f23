#include "tg/profile.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "base/util.h"
#include "tg/error.h"

namespace tg::profile {

namespace {

struct Event {
  std::string name, lane;
  const char* category;
  Clock::time_point begin, end;
  std::vector<std::pair<std::string, std::string>> args;
};

// 0: not decided (PROFILE is read at the first question), 1: off, 2: on
std::atomic<int> state{0};

struct Trace {
  std::mutex mu;
  std::vector<Event> events;
  size_t dropped = 0;
  Clock::time_point origin = Clock::now();
  std::map<std::thread::id, int> thread_numbers;  // the calling threads' rows, numbered in order of appearance

  // PROFILE=1: the whole run goes to PROFILE_PATH (or the temporary folder) when the process ends
  ~Trace() {
    const char* env = std::getenv("PROFILE");
    if (!env || std::atoi(env) <= 0 || events.empty()) return;
    const char* where = std::getenv("PROFILE_PATH");
    std::string path = base::per_rank(where && *where ? where : base::temp_dir() + "/tinygrad_cpp_profile.json");
    try {
      size_t n = write(path);
      std::fprintf(stderr, "PROFILE: %zu events in %s (open it in https://ui.perfetto.dev or chrome://tracing)\n", n, path.c_str());
    } catch (const Error& e) {
      std::fprintf(stderr, "PROFILE: no trace written: %s\n", e.what());
    }
  }
  size_t write(const std::string& path, SourceLocation where = SourceLocation::current());
};

Trace& trace() {
  static Trace t;
  return t;
}

// a value that is a number in JSON's grammar is written as one: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
std::string json_value(const std::string& v) {
  size_t i = 0, n = v.size();
  auto digits = [&] {
    size_t from = i;
    while (i < n && v[i] >= '0' && v[i] <= '9') i++;
    return i > from;
  };
  if (i < n && v[i] == '-') i++;
  bool number = i < n && (v[i] == '0' ? (++i, true) : digits());
  if (number && i < n && v[i] == '.') i++, number = digits();
  if (number && i < n && (v[i] == 'e' || v[i] == 'E')) {
    i++;
    if (i < n && (v[i] == '+' || v[i] == '-')) i++;
    number = digits();
  }
  return number && i == n ? v : base::json_quote(v);
}

size_t Trace::write(const std::string& path, SourceLocation where) {
  std::vector<Event> copy;
  size_t lost;
  {
    std::lock_guard<std::mutex> lock(mu);
    copy = events;
    lost = dropped;
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw ArgumentError("profile::save", path + ": cannot be written (" + std::strerror(errno) + ")", where);
  // rows: one per lane, named; numbered in order of first appearance
  std::map<std::string, int> rows;
  std::string out = "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"dropped_events\": " + std::to_string(lost) + "},\n\"traceEvents\": [\n";
  for (const Event& e : copy)
    if (rows.emplace(e.lane, static_cast<int>(rows.size()) + 1).second)
      out += "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": " + std::to_string(rows[e.lane]) +
             ", \"args\": {\"name\": " + base::json_quote(e.lane) + "}},\n";
  out += "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"tinygrad.cpp\"}}";
  char num[64];
  for (const Event& e : copy) {
    double ts = std::chrono::duration<double, std::micro>(e.begin - origin).count();
    double dur = std::chrono::duration<double, std::micro>(e.end - e.begin).count();
    out += ",\n{\"ph\": \"X\", \"name\": " + base::json_quote(e.name) + ", \"cat\": " + base::json_quote(e.category) +
           ", \"pid\": 1, \"tid\": " + std::to_string(rows[e.lane]);
    std::snprintf(num, sizeof num, ", \"ts\": %.3f, \"dur\": %.3f", ts, dur < 0 ? 0.0 : dur);
    out += num;
    if (!e.args.empty()) {
      out += ", \"args\": {";
      for (size_t i = 0; i < e.args.size(); i++)
        out += (i ? ", " : "") + base::json_quote(e.args[i].first) + ": " + json_value(e.args[i].second);
      out += "}";
    }
    out += "}";
  }
  out += "\n]}\n";
  bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) throw ArgumentError("profile::save", path + ": writing the trace failed (" + std::strerror(errno) + ")", where);
  return copy.size();
}

}  // namespace

bool enabled() {
  int s = state.load(std::memory_order_relaxed);
  if (s == 0) {
    const char* env = std::getenv("PROFILE");
    int want = env && std::atoi(env) > 0 ? 2 : 1;
    state.compare_exchange_strong(s, want);
    s = state.load(std::memory_order_relaxed);
  }
  return s == 2;
}
void start() {
  trace();  // made before the first event, so it is destroyed after every user of it
  state.store(2);
}
void stop() { state.store(1); }
void clear() {
  Trace& t = trace();
  std::lock_guard<std::mutex> lock(t.mu);
  t.events.clear();
  t.dropped = 0;
}
size_t save(const std::string& path, SourceLocation where) { return trace().write(path, where); }

void record(std::string name, const char* category, Clock::time_point begin, Clock::time_point end, std::string lane,
            std::vector<std::pair<std::string, std::string>> args) {
  if (!enabled()) return;
  Trace& t = trace();
  std::lock_guard<std::mutex> lock(t.mu);
  if (t.events.size() >= kMaxEvents) {
    t.dropped++;
    return;
  }
  if (lane.empty()) {
    auto [it, fresh] = t.thread_numbers.emplace(std::this_thread::get_id(), static_cast<int>(t.thread_numbers.size()));
    lane = "thread " + std::to_string(it->second);
  }
  t.events.push_back({std::move(name), std::move(lane), category, begin, end, std::move(args)});
}

Span::Span(std::string name, const char* category) : on_(enabled()), category_(category) {
  if (!on_) return;
  name_ = std::move(name);
  begin_ = Clock::now();
}
Span::~Span() {
  if (on_) record(std::move(name_), category_, begin_, Clock::now(), "", std::move(args_));
}
void Span::arg(std::string key, std::string value) {
  if (on_) args_.emplace_back(std::move(key), std::move(value));
}

}  // namespace tg::profile
