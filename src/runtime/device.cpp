#include "runtime/device.h"

#include <atomic>
#include <cstdio>
#include <exception>
#include <map>
#include <thread>

#include "runtime/disk_cache.h"
#include "runtime/thread_pool.h"
#include "tg/context.h"
#include "tg/error.h"
#include "tg/profile.h"

namespace tg::runtime {

CompileStats& compile_stats() {
  static CompileStats s;
  return s;
}

std::optional<std::string> Compiler::cached(const std::string& key) {
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
  if (!hit) return std::nullopt;
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
    return binary;
  }
  if (getenv_int("DEBUG") >= 1)
    std::fprintf(stderr, "disk cache: rebuilding %s (%s)\n", disk_cache_path(cache_table(), key).c_str(),
                 others ? "another compiler's" : "not a valid binary");
  return std::nullopt;
}

void Compiler::remember(const std::string& key, const std::string& binary) {
  disk_cache_put(cache_table(), key, compiler_id() + "\n" + binary);
  std::lock_guard<std::mutex> lock(mu_);
  compile_stats().compiled++;
  memory_[key] = binary;
}

std::string Compiler::key_of(const std::string& src) { return cache_key() + "\n" + src; }

std::string Compiler::compile_cached(const std::string& src, bool refresh) {
  std::string key = key_of(src);
  std::optional<std::string> hit = refresh ? std::nullopt : cached(key);
  if (hit) return *hit;
  profile::Span span("compile 1 kernel", "compile");
  span.arg("cache", cache_table());
  std::string binary = compile(src);
  remember(key, binary);
  return binary;
}

std::vector<std::string> Compiler::compile_cached_many(const std::vector<KernelSource>& kernels) {
  std::vector<std::string> binaries(kernels.size());
  std::vector<KernelSource> missing;
  std::vector<size_t> at;  // where each missing kernel's binary goes
  std::map<std::string, size_t> first;  // a source asked for twice is compiled once
  for (size_t i = 0; i < kernels.size(); i++) {
    std::optional<std::string> hit = cached(key_of(kernels[i].source));
    if (hit) binaries[i] = std::move(*hit);
    else if (!first.count(kernels[i].source)) first[kernels[i].source] = missing.size(), missing.push_back(kernels[i]), at.push_back(i);
  }
  if (missing.empty()) return binaries;
  profile::Span span("compile " + std::to_string(missing.size()) + (missing.size() == 1 ? " kernel" : " kernels"), "compile");
  span.arg("cache", cache_table());
  span.arg("first", missing[0].entry);
  std::vector<std::string> built = missing.size() == 1 ? std::vector<std::string>{compile(missing[0].source)} : compile_many(missing);
  for (size_t j = 0; j < missing.size(); j++) {
    remember(key_of(missing[j].source), built[j]);
    binaries[at[j]] = std::move(built[j]);
  }
  for (size_t i = 0; i < kernels.size(); i++)
    if (binaries[i].empty()) binaries[i] = binaries[at[first.at(kernels[i].source)]];
  return binaries;
}

std::vector<std::string> Compiler::compile_many(const std::vector<KernelSource>& kernels) {
  // on as many threads as the CPU has (compilers run as processes of their own or are reentrant: NVRTC, an OpenCL
  // driver's build); the first kernel's error in their order is the one raised
  std::vector<std::string> binaries(kernels.size());
  std::vector<std::exception_ptr> errors(kernels.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < kernels.size();) {
      try {
        binaries[i] = compile(kernels[i].source);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(cpu_threads(), kernels.size()); t++) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return binaries;
}

std::string Compiler::disassemble(const std::string&) { return "(no disassembler for " + cache_table() + " binaries)\n"; }

std::shared_ptr<Program> Device::program(const std::string& function, const std::string& src) {
  return programs({{function, src}})[0];
}

std::vector<std::shared_ptr<Program>> Device::programs(const std::vector<KernelSource>& kernels) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<Program>> out(kernels.size());
  std::vector<KernelSource> missing;
  for (size_t i = 0; i < kernels.size(); i++) {
    auto it = programs_.find({kernels[i].entry, kernels[i].source});
    if (it != programs_.end()) out[i] = it->second;
    else missing.push_back(kernels[i]);
  }
  std::vector<std::string> binaries = compiler().compile_cached_many(missing);
  for (size_t i = 0, j = 0; i < kernels.size(); i++) {
    if (out[i]) continue;
    const KernelSource& k = missing[j++];
    auto it = programs_.find({k.entry, k.source});  // (found: the same kernel came twice)
    if (it != programs_.end()) {
      out[i] = it->second;
      continue;
    }
    if (getenv_int("DEBUG") >= 6) {
      std::string text;
      try {
        text = compiler().disassemble(binaries[j - 1]);
      } catch (const Error& e) {  // only a look at the code: the program runs on
        text = std::string("(no disassembly: ") + e.what() + ")\n";
      }
      std::fprintf(stderr, "assembly of %s on %s:\n%s", k.entry.c_str(), name().c_str(), text.c_str());
    }
    try {
      out[i] = load(k.entry, binaries[j - 1]);
    } catch (const Error&) {
      // a cached binary, or one of a joint compile, the loader refused: compiled again on its own, entry replaced
      out[i] = load(k.entry, compiler().compile_cached(k.source, true));
    }
    programs_[{k.entry, k.source}] = out[i];
  }
  return out;
}

}  // namespace tg::runtime
