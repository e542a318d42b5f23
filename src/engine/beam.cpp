#include "engine/beam.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "engine/realize.h"
#include "runtime/disk_cache.h"
#include "tg/context.h"

namespace tg::engine {

using codegen::Opt;
using codegen::OptOp;

namespace {

constexpr int kRounds = 4;
constexpr int64_t kMaxCopies = 512;  // upcast * unroll: the body copies one iteration may hold

constexpr double kInf = std::numeric_limits<double>::infinity();

// Every candidate lowered, rendered and compiled together (Compiler::compile_cached_many: the C compiler's runs are
// most of a search); each one then loads from the compiler's memory cache. Null for a candidate that cannot be
// built.
std::vector<std::shared_ptr<CompiledKernel>> build_all(const uop::UOp& ast, const std::vector<std::vector<Opt>>& cands,
                                                       runtime::Device& device) {
  std::vector<std::shared_ptr<CompiledKernel>> out(cands.size());
  std::vector<runtime::KernelSource> sources;
  for (size_t i = 0; i < cands.size(); i++) {
    try {  // distinct names: compiled in one translation unit
      out[i] = plan_kernel(device, codegen::lower(ast, cands[i], device.caps()), "beam_candidate" + std::to_string(i));
      sources.push_back({out[i]->rendered.entry, out[i]->rendered.source});
    } catch (const Error&) {
    }
  }
  try {
    device.compiler().compile_cached_many(sources);
  } catch (const Error&) {  // one that does not compile: each on its own below
  }
  for (std::shared_ptr<CompiledKernel>& k : out) {
    try {
      if (k) k->program = device.program(k->rendered.entry, k->rendered.source);
    } catch (const Error&) {
      k = nullptr;
    }
  }
  return out;
}

// The best of 3 runs in seconds, or of 1 when that one is more than twice `best` (a clear loser is not timed
// again); infinity for a candidate that could not be built. A kernel with variables (symbolic sizes) runs at the
// middle of each one's range, as tinygrad's search does (the buffers hold the largest size).
double time_kernel(const CompiledKernel* k, const std::vector<runtime::Buffer*>& bufs, double best) {
  if (!k) return kInf;
  std::vector<int64_t> vals;
  for (const std::string& name : k->vars)
    for (const uop::UOp& u : k->uops)
      if (u.op() == uop::Ops::DEFINE_VAR && u.arg().get<uop::VarArg>().name == name) {
        vals.push_back((u.arg().get<uop::VarArg>().min + u.arg().get<uop::VarArg>().max) / 2);
        break;
      }
  double t = kInf;
  for (int i = 0; i < 3; i++) {
    auto t0 = std::chrono::steady_clock::now();
    double device_s = 0;  // a grid kernel's time on the device (its launch waits for it)
    run_program(*k, bufs, &device_s, vals);
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t = std::min(t, device_s > 0 ? device_s : wall);
    if (t > 2 * best) break;
  }
  return t;
}

// BEAM_CACHE=file: one text file of "<key hash> <opts>" lines, read before the disk cache and appended to after a
// search, that a user can ship with a program (the key holds the kernel, the compiler and the CPU, as on disk)
std::string key_hash(const std::string& key) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::optional<std::string> cache_file_get(const std::string& file, const std::string& hash) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.size() > hash.size() && line.compare(0, hash.size(), hash) == 0 && line[hash.size()] == ' ')
      return line.substr(hash.size() + 1);
  return std::nullopt;
}

void cache_file_put(const std::string& file, const std::string& hash, const std::string& opts) {
  std::ofstream out(file, std::ios::app);
  out << hash << ' ' << opts << '\n';
  if (!out) throw ArgumentError("BEAM_CACHE", "cannot write the file " + file);
}

using Candidate = std::pair<double, std::vector<Opt>>;  // (seconds, opts)
void sort_by_time(std::vector<Candidate>& v) {
  std::stable_sort(v.begin(), v.end(), [](const Candidate& a, const Candidate& b) { return a.first < b.first; });
}

int64_t copies(const std::vector<Opt>& opts) {
  int64_t n = 1;
  for (const Opt& o : opts)
    if (o.op != OptOp::SWAP && o.op != OptOp::PADTO) n *= o.amount;
  return n;
}

}  // namespace

std::vector<Opt> beam_search(const uop::UOp& ast, const codegen::LoweredKernel& base, runtime::Device& device,
                             const std::vector<runtime::Buffer*>& bufs, int width) {
  std::ostringstream graph;
  graph << ast;
  std::string key = "beam v2, width " + std::to_string(width) + "\n" + device.compiler().cache_key() + "\n" + graph.str();
  std::string file = getenv_str("BEAM_CACHE"), hash = key_hash(key);
  // a remembered choice, when it still applies to this kernel
  auto usable = [&](const std::optional<std::string>& hit) -> std::optional<std::vector<Opt>> {
    if (!hit) return std::nullopt;
    std::vector<Opt> opts = codegen::parse_opts(*hit);
    return codegen::legal(base, opts) ? std::optional(opts) : std::nullopt;
  };
  if (auto opts = usable(file.empty() ? std::nullopt : cache_file_get(file, hash))) return *opts;
  std::optional<std::string> hit = runtime::disk_cache_get("beam", key);
  if (auto opts = usable(hit)) {
    if (!file.empty()) cache_file_put(file, hash, *hit);  // the file collects every choice a program uses
    return *opts;
  }
  // the actions: every legal single opt on this kernel
  std::vector<Opt> actions;
  for (size_t a = 0; a < base.full_shape.size(); a++)
    for (int64_t n : {2, 3, 4, 5, 6, 8, 16})
      for (OptOp op : {OptOp::UPCAST, OptOp::UNROLL, OptOp::VECTOR, OptOp::LOCAL, OptOp::GROUP, OptOp::GROUPTOP})
        if (codegen::legal(base, {{op, static_cast<int64_t>(a), n}})) actions.push_back({op, static_cast<int64_t>(a), n});
  for (int64_t a = 0; a < static_cast<int64_t>(base.full_shape.size()); a++)  // a size with no such divisor padded
    for (int64_t n : {4, 8, 16})
      if (base.full_shape[a] % n != 0 && codegen::legal(base, {{OptOp::PADTO, a, n}})) actions.push_back({OptOp::PADTO, a, n});
  for (int64_t a = 0; a < static_cast<int64_t>(base.full_shape.size()); a++)  // two loops trading places
    for (int64_t b = a + 1; b < static_cast<int64_t>(base.full_shape.size()); b++)
      if (codegen::legal(base, {{OptOp::SWAP, a, b}})) actions.push_back({OptOp::SWAP, a, b});
  auto started = std::chrono::steady_clock::now();
  double budget = static_cast<double>(getenv_int("BEAM_BUDGET", 60));  // seconds of search per kernel
  auto over_budget = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > budget; };
  // the candidates not seen yet, built together and timed one by one against the best so far
  std::vector<Candidate> seen;
  double best = kInf;
  auto time_new = [&](const std::vector<std::vector<Opt>>& cands) {
    std::vector<std::shared_ptr<CompiledKernel>> built = build_all(ast, cands, device);
    for (size_t i = 0; i < cands.size(); i++) {
      seen.push_back({time_kernel(built[i].get(), bufs, best), cands[i]});
      best = std::min(best, seen.back().first);
    }
  };
  std::vector<std::vector<Opt>> starts{{}};
  if (std::vector<Opt> h = codegen::choose_opts(base); !h.empty()) starts.push_back(h);
  for (const Opt& tc : codegen::tc_opts(base))  // every tensor-core configuration (TC goes alone: no round adds to one)
    if (std::find(starts.begin(), starts.end(), std::vector<Opt>{tc}) == starts.end()) starts.push_back({tc});
  time_new(starts);
  std::vector<Candidate> beam = seen;
  sort_by_time(beam);
  // a kernel this fast has little to gain and would spend far more on compiling candidates than it ever runs
  if (beam.front().first * 1e6 < static_cast<double>(getenv_int("BEAM_MIN_US", 50))) return beam.front().second;
  int debug = static_cast<int>(getenv_int("DEBUG"));
  for (int round = 0; round < kRounds && !over_budget(); round++) {
    double best_before = beam.front().first;
    std::vector<std::vector<Opt>> cands;
    for (const auto& [t, opts] : beam)
      for (const Opt& act : actions) {
        std::vector<Opt> cand = opts;
        cand.push_back(act);
        if (copies(cand) > kMaxCopies || !codegen::legal(base, cand)) continue;
        bool timed = std::any_of(seen.begin(), seen.end(), [&](const Candidate& b) { return b.second == cand; });
        if (!timed && std::find(cands.begin(), cands.end(), cand) == cands.end()) cands.push_back(cand);
      }
    size_t first = seen.size();
    time_new(cands);
    std::vector<Candidate> next = beam;
    next.insert(next.end(), seen.begin() + static_cast<int64_t>(first), seen.end());
    sort_by_time(next);
    if (next.size() > static_cast<size_t>(width)) next.resize(static_cast<size_t>(width));
    beam = std::move(next);
    if (debug >= 2)
      std::fprintf(stderr, "BEAM round %d: %zu candidates, %.2f us [%s]\n", round, cands.size(), beam.front().first * 1e6,
                   codegen::opts_str(beam.front().second).c_str());
    if (beam.front().first >= best_before) break;
  }
  runtime::disk_cache_put("beam", key, codegen::opts_str(beam.front().second));
  if (!file.empty()) cache_file_put(file, hash, codegen::opts_str(beam.front().second));
  return beam.front().second;
}

}  // namespace tg::engine
