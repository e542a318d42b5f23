#include "tg/context.h"

#include "base/util.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace tg {

namespace {

std::mutex& context_mutex() {
  static std::mutex m;
  return m;
}
// the overrides of every live Context, innermost last
std::vector<std::pair<std::string, Context::Value>>& overrides() {
  static std::vector<std::pair<std::string, Context::Value>> v;
  return v;
}

std::atomic<uint64_t> generation{0};

std::string value_str(const Context::Value& v) {
  return std::holds_alternative<int64_t>(v) ? std::to_string(std::get<int64_t>(v)) : std::get<std::string>(v);
}

}  // namespace

uint64_t base::context_generation() { return generation.load(std::memory_order_acquire); }

std::string getenv_str(const std::string& name, const std::string& fallback) {
  {
    std::lock_guard<std::mutex> lock(context_mutex());
    auto& o = overrides();
    for (auto it = o.rbegin(); it != o.rend(); ++it)
      if (it->first == name) return value_str(it->second);
  }
  const char* env = std::getenv(name.c_str());
  return env ? std::string(env) : fallback;
}

int64_t getenv_int(const std::string& name, int64_t fallback) {
  std::string s = getenv_str(name, "");
  if (s.empty()) return fallback;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  return end && *end == '\0' ? v : fallback;
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
