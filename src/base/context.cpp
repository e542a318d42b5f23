#include "tg/context.h"

#include "base/util.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace tg {

namespace {

// The tables below are never destroyed: the thread pool's workers read settings until the process is gone, after
// static destructors have run.
std::mutex& context_mutex() {
  static std::mutex* m = new std::mutex();
  return *m;
}
// the overrides of every live Context, innermost last
std::vector<std::pair<std::string, Context::Value>>& overrides() {
  static auto* v = new std::vector<std::pair<std::string, Context::Value>>();
  return *v;
}

// An environment variable as first read: the engine reads a few settings per kernel launch, and scanning environ
// for each was a tenth of a small realize. tinygrad's getenv caches the same way.
struct EnvValue {
  std::optional<std::string> text;
  std::optional<int64_t> number;  // set when text is a whole decimal number
};
std::unordered_map<std::string, EnvValue>& env_values() {
  static auto* m = new std::unordered_map<std::string, EnvValue>();
  return *m;
}

std::atomic<uint64_t> generation{0};

std::optional<int64_t> parse_int(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  return end && *end == '\0' ? std::optional<int64_t>(v) : std::nullopt;
}

// The innermost Context's value of name, else nullptr. Call with context_mutex held.
const Context::Value* override_of(const std::string& name) {
  auto& o = overrides();
  for (auto it = o.rbegin(); it != o.rend(); ++it)
    if (it->first == name) return &it->second;
  return nullptr;
}

// The environment's value of name, read once. Call with context_mutex held.
const EnvValue& env_value(const std::string& name) {
  auto& m = env_values();
  auto it = m.find(name);
  if (it == m.end()) {
    EnvValue v;
    if (const char* env = std::getenv(name.c_str())) v.text = env, v.number = parse_int(*v.text);
    it = m.emplace(name, std::move(v)).first;
  }
  return it->second;
}

}  // namespace

uint64_t base::context_generation() { return generation.load(std::memory_order_acquire); }

int64_t base::IntSetting::read() const { return getenv_int(name_, fallback_); }

std::string getenv_str(const std::string& name, const std::string& fallback) {
  std::lock_guard<std::mutex> lock(context_mutex());
  if (const Context::Value* v = override_of(name))
    return std::holds_alternative<int64_t>(*v) ? std::to_string(std::get<int64_t>(*v)) : std::get<std::string>(*v);
  const EnvValue& e = env_value(name);
  return e.text ? *e.text : fallback;
}

int64_t getenv_int(const std::string& name, int64_t fallback) {
  std::lock_guard<std::mutex> lock(context_mutex());
  if (const Context::Value* v = override_of(name)) {
    if (std::holds_alternative<int64_t>(*v)) return std::get<int64_t>(*v);
    return parse_int(std::get<std::string>(*v)).value_or(fallback);
  }
  return env_value(name).number.value_or(fallback);
}

void reread_environment() {
  std::lock_guard<std::mutex> lock(context_mutex());
  env_values().clear();
  generation.fetch_add(1, std::memory_order_acq_rel);
}

Context::Context(std::initializer_list<Setting> settings) : count_(settings.size()) {
  std::lock_guard<std::mutex> lock(context_mutex());
  for (const Setting& s : settings) overrides().emplace_back(s.name, s.value);
  generation.fetch_add(1, std::memory_order_acq_rel);
}

Context::~Context() {
  std::lock_guard<std::mutex> lock(context_mutex());
  overrides().resize(overrides().size() - count_);
  generation.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace tg
