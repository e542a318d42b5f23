#include "runtime/device.h"

#include <cstdio>

#include "runtime/disk_cache.h"
#include "tg/context.h"
#include "tg/error.h"

namespace tg::runtime {

CompileStats& compile_stats() {
  static CompileStats s;
  return s;
}

std::string Compiler::compile_cached(const std::string& src, bool* from_disk, bool refresh) {
  if (from_disk) *from_disk = false;
  std::string key = cache_key() + "\n" + src;
  if (!refresh) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = memory_.find(key);
    if (it != memory_.end()) {
      compile_stats().memory_hits++;
      return it->second;
    }
  }
  // outside the lock: several threads may compile at once (BEAM's candidates)
  std::optional<std::string> hit = refresh ? std::nullopt : disk_cache_get(cache_table(), key);
  if (hit) {
    size_t nl = hit->find('\n');
    bool framed = nl != std::string::npos;
    std::string binary = framed ? hit->substr(nl + 1) : "";
    // the compiler is asked who it is only on a hit: a cold miss needs it anyway, a warm cache needs none
    std::string mine = framed ? compiler_id() : "";
    bool others = framed && !mine.empty() && hit->compare(0, nl, mine) != 0;
    if (framed && !others && plausible_binary(binary)) {
      std::lock_guard<std::mutex> lock(mu_);
      compile_stats().disk_hits++;
      memory_[key] = binary;
      if (from_disk) *from_disk = true;
      return binary;
    }
    if (getenv_int("DEBUG") >= 1)
      std::fprintf(stderr, "disk cache: rebuilding %s (%s)\n", disk_cache_path(cache_table(), key).c_str(),
                   others ? "another compiler's" : "not a valid binary");
  }
  std::string binary = compile(src);
  disk_cache_put(cache_table(), key, compiler_id() + "\n" + binary);
  std::lock_guard<std::mutex> lock(mu_);
  compile_stats().compiled++;
  memory_[key] = binary;
  return binary;
}

std::shared_ptr<Program> Device::program(const std::string& function, const std::string& src) {
  std::lock_guard<std::mutex> lock(mu_);
  auto key = std::make_pair(function, src);
  auto it = programs_.find(key);
  if (it != programs_.end()) return it->second;
  bool from_disk = false;
  std::string binary = compiler().compile_cached(src, &from_disk);
  std::shared_ptr<Program> p;
  try {
    p = load(function, binary);
  } catch (const Error&) {
    if (!from_disk) throw;
    // a cached binary the loader refused is built again, and its entry replaced
    p = load(function, compiler().compile_cached(src, nullptr, true));
  }
  programs_[key] = p;
  return p;
}

}  // namespace tg::runtime
