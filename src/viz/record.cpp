#include "viz/record.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <unordered_map>

#include "base/util.h"

namespace tg::viz {

namespace {

constexpr size_t kMaxNodes = 400000;  // past this, further graphs are left out (a page of a few hundred MB is unusable)
constexpr size_t kMaxArg = 160;       // characters of an arg's text

// 0: not decided (VIZ is read at the first question), 1: off, 2: on
std::atomic<int> state{0};
thread_local RealizeScope* current = nullptr;

bool env_on() {
  const char* env = std::getenv("VIZ");
  return env && std::atoi(env) > 0;
}

struct Recorder {
  std::mutex mu;
  Recorded data;
  std::unordered_map<std::string, long> node_ids;  // a node's op, dtype, arg and sources' numbers -> its number
  std::unordered_map<std::string, size_t> rule_ids;

  // VIZ=1: the page of the whole run goes to VIZ_PATH (or the temporary folder) when the process ends
  ~Recorder() {
    if (!env_on() || (data.realizes.empty() && data.kernels.empty())) return;
    const char* where = std::getenv("VIZ_PATH");
    std::string path = base::per_rank(where && *where ? where : base::temp_dir() + "/tinygrad_cpp_viz.html");
    try {
      size_t n = write(path);
      std::string left_out;  // past the page's limits (tg/viz.h)
      if (data.dropped_realizes) left_out += ", " + std::to_string(data.dropped_realizes) + " later realizes";
      if (data.dropped_kernels) left_out += ", " + std::to_string(data.dropped_kernels) + " later kernels";
      if (data.nodes_left_out) left_out += ", the graphs past " + std::to_string(kMaxNodes) + " nodes";
      if (!left_out.empty()) left_out = "; left out" + left_out.substr(1);
      std::fprintf(stderr, "VIZ: %zu realizes and %zu kernels in %s (open it in a browser)%s\n", n, data.kernels.size(),
                   path.c_str(), left_out.c_str());
    } catch (const Error& e) {
      std::fprintf(stderr, "VIZ: no page written: %s\n", e.what());
    }
  }

  size_t write(const std::string& path, SourceLocation where = SourceLocation::current()) {
    std::string page;
    size_t realizes;
    {
      std::lock_guard<std::mutex> lock(mu);
      page = render_page(data);
      realizes = data.realizes.size();
    }
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw ArgumentError("viz::save", path + ": cannot be written (" + std::strerror(errno) + ")", where);
    bool ok = std::fwrite(page.data(), 1, page.size(), f) == page.size();
    ok = std::fclose(f) == 0 && ok;
    if (!ok) throw ArgumentError("viz::save", path + ": writing the page failed (" + std::strerror(errno) + ")", where);
    return realizes;
  }

  // The number of `root` in the table, adding it and the nodes below it that are not there yet (under mu).
  long store(const uop::UOp& root) {
    if (!root) return -1;
    std::unordered_map<const uop::UOpNode*, long> seen;  // this graph's nodes, alive for the call
    std::vector<std::pair<uop::UOp, size_t>> stack{{root, 0}};
    while (!stack.empty()) {
      auto& [u, next] = stack.back();
      if (next < u.src().size()) {
        const uop::UOp& s = u.src(next++);
        if (!seen.count(s.get())) stack.push_back({s, 0});
        continue;
      }
      if (!seen.count(u.get())) seen.emplace(u.get(), intern(u, seen));
      stack.pop_back();
    }
    return seen.at(root.get());
  }

  long intern(const uop::UOp& u, const std::unordered_map<const uop::UOpNode*, long>& seen) {
    std::string arg = u.arg().empty() ? "" : u.arg().repr();
    if (arg.size() > kMaxArg) arg = arg.substr(0, kMaxArg) + "...";
    std::string srcs;
    for (const uop::UOp& s : u.src()) {
      long id = seen.at(s.get());
      if (id < 0) return -1;  // below a node left out
      srcs += (srcs.empty() ? "" : ",") + std::to_string(id);
    }
    std::string key = std::to_string(static_cast<int>(u.op())) + "," + base::json_quote(u.dtype().name()) + "," + base::json_quote(arg) + ",[" + srcs + "]";
    if (auto it = node_ids.find(key); it != node_ids.end()) return it->second;
    if (data.n_nodes >= kMaxNodes) {
      data.nodes_left_out = true;
      return -1;
    }
    data.nodes_json += (data.n_nodes ? ",\n[" : "\n[") + key + "]";
    node_ids.emplace(std::move(key), static_cast<long>(data.n_nodes));
    return static_cast<long>(data.n_nodes++);
  }

  StoredRewrites store(const uop::RewriteLog& log) {
    StoredRewrites out{{}, log.unchanged_calls, log.dropped_steps};
    for (const uop::RewriteCall& call : log.calls) {
      StoredRewrites::Call c{store(call.in), store(call.out), {}};
      for (const uop::RewriteStep& st : call.steps) {
        auto [it, added] = rule_ids.emplace(st.rule, data.rules.size());
        if (added) data.rules.push_back(st.rule);
        c.steps.push_back({static_cast<long>(it->second), store(st.before), store(st.after)});
      }
      out.calls.push_back(std::move(c));
    }
    return out;
  }
};

Recorder& recorder() {
  static Recorder r;
  return r;
}

}  // namespace

Stage StageTimer::stop(std::string name) {
  auto now = std::chrono::steady_clock::now();
  Stage s{std::move(name), std::chrono::duration<double, std::milli>(now - begin_).count()};
  begin_ = now;
  return s;
}

bool enabled() {
  int s = state.load(std::memory_order_relaxed);
  if (s == 0) {
    int want = env_on() ? 2 : 1;
    if (want == 2) recorder();  // made before the first record, so it is destroyed (and writes) after its users
    state.compare_exchange_strong(s, want);
    s = state.load(std::memory_order_relaxed);
  }
  return s == 2;
}
void start() {
  recorder();
  state.store(2);
}
void stop() { state.store(1); }
void clear() {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mu);
  r.data = Recorded();
  r.node_ids.clear();
  r.rule_ids.clear();
}
size_t save(const std::string& path, SourceLocation where) { return recorder().write(path, where); }

void add_kernel(const KernelRecord& k) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.data.kernels.size() >= kMaxKernels) {
    r.data.dropped_kernels++;
    return;
  }
  r.data.kernels.push_back(std::make_shared<const StoredKernel>(
      StoredKernel{k.name, k.device, k.opts, r.store(k.ast), r.store(k.lowered), k.uops, k.source, k.stages, r.store(k.rewrites)}));
}

RealizeScope::RealizeScope(const std::vector<uop::UOp>& outputs, std::string where) {
  if (!enabled()) return;
  record_ = std::make_unique<StoredRealize>();
  record_->where = std::move(where);
  Recorder& r = recorder();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    record_->graph = r.store(uop::UOp::sink(outputs));
  }
  tracking_ = std::make_unique<uop::TrackRewrites>(&rewrites_);
  outer_ = current;
  current = this;
}

RealizeScope::~RealizeScope() {
  if (!record_) return;
  current = outer_;
  tracking_.reset();
  if (std::uncaught_exceptions() > 0 && record_->error.empty()) record_->error = "stopped by an exception";
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mu);
  record_->rewrites = r.store(rewrites_);
  if (r.data.realizes.size() >= kMaxRealizes) r.data.dropped_realizes++;
  else r.data.realizes.push_back(std::shared_ptr<const StoredRealize>(std::move(record_)));
}

StoredRealize* current_realize() { return current ? current->operator->() : nullptr; }

}  // namespace tg::viz
