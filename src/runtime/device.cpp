#include "runtime/device.h"

#include "runtime/disk_cache.h"
#include "tg/context.h"

namespace tg::runtime {

CompileStats& compile_stats() {
  static CompileStats s;
  return s;
}

std::string Compiler::compile_cached(const std::string& src) {
  std::string key = cache_key() + "\n" + src;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = memory_.find(key);
    if (it != memory_.end()) {
      compile_stats().memory_hits++;
      return it->second;
    }
  }
  // outside the lock: several threads may compile at once (BEAM's candidates)
  std::optional<std::string> hit = disk_cache_get(cache_table(), key);
  std::string binary = hit ? std::move(*hit) : compile(src);
  if (!hit) disk_cache_put(cache_table(), key, binary);
  std::lock_guard<std::mutex> lock(mu_);
  (hit ? compile_stats().disk_hits : compile_stats().compiled)++;
  memory_[key] = binary;
  return binary;
}

std::shared_ptr<Program> Device::program(const std::string& function, const std::string& src) {
  std::lock_guard<std::mutex> lock(mu_);
  auto key = std::make_pair(function, src);
  auto it = programs_.find(key);
  if (it != programs_.end()) return it->second;
  std::shared_ptr<Program> p = load(function, compiler().compile_cached(src));
  programs_[key] = p;
  return p;
}

}  // namespace tg::runtime
