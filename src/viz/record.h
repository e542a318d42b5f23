// The VIZ recorder (include/tg/viz.h). The tensor layer, the engine and the kernel cache hand it what they did while
// viz::enabled(); it keeps that as text and numbers, never as graphs: every node goes into one table of its own
// (interned by op, dtype, arg and sources, so a graph seen in many realizes is stored once), and records refer to
// nodes by their number there. So recording holds no UOp, and with it no buffer, past the call that hands it over.
#pragma once
#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tg/viz.h"
#include "uop/track.h"
#include "uop/uop.h"

namespace tg::viz {

// one stage of a realize or of a kernel's compile, and how long it took
struct Stage {
  std::string name;
  double ms;
};

// Measures stages: stop() the time since construction or the last stop(), which starts the next stage.
class StageTimer {
 public:
  StageTimer() : begin_(std::chrono::steady_clock::now()) {}
  Stage stop(std::string name);

 private:
  std::chrono::steady_clock::time_point begin_;
};

// A kernel as the kernel cache hands it over.
struct KernelRecord {
  std::string name, device, opts;
  uop::UOp ast;      // the kernel AST from the scheduler
  uop::UOp lowered;  // the SINK after lowering with its opts
  std::string uops, source;
  std::vector<Stage> stages;
  uop::RewriteLog rewrites;  // the graph rewrites of its lowering, opt search and linearizing
};
void add_kernel(const KernelRecord& k);

// ---- as kept: graph nodes by their number in the recorder's table (-1: left out, past the table's limit)

struct StoredRewrites {
  struct Call {
    long in, out;
    std::vector<std::array<long, 3>> steps;  // the rule (its number in the rule table), the node before, after
  };
  std::vector<Call> calls;
  size_t unchanged = 0, dropped = 0;
};

struct StoredKernel {
  std::string name, device, opts;
  long ast, lowered;
  std::string uops, source;
  std::vector<Stage> stages;
  StoredRewrites rewrites;
};

struct ItemRecord {
  std::string kind;    // "kernel", "copy", "allreduce sum" ...
  std::string kernel;  // the kernel's name
  std::vector<std::string> bufs;
  double ms = 0;
};

struct StoredRealize {
  std::string where;  // the file:line that made the first tensor, where known
  long graph;         // SINK of the realized tensors' graphs
  std::vector<ItemRecord> items;
  std::vector<Stage> stages;
  StoredRewrites rewrites;  // the graph rewrites of scheduling
  std::string error;        // what stopped it, where something did
};

// Records one realize from construction to destruction when VIZ is on (else nothing): its graph is stored at once,
// its rewrites are tracked on this thread, and the engine adds its items through current_realize().
class RealizeScope {
 public:
  RealizeScope(const std::vector<uop::UOp>& outputs, std::string where);
  ~RealizeScope();
  RealizeScope(const RealizeScope&) = delete;
  RealizeScope& operator=(const RealizeScope&) = delete;
  StoredRealize* operator->() { return record_.get(); }
  explicit operator bool() const { return record_ != nullptr; }

 private:
  std::unique_ptr<StoredRealize> record_;
  uop::RewriteLog rewrites_;
  std::unique_ptr<uop::TrackRewrites> tracking_;
  RealizeScope* outer_ = nullptr;
};

// The realize being recorded on this thread, or null.
StoredRealize* current_realize();

// what a page shows: a snapshot of the recorder
struct Recorded {
  std::string nodes_json;  // the node table: [op, dtype, arg, [sources]] per node, comma-separated
  size_t n_nodes = 0;
  bool nodes_left_out = false;
  std::vector<std::string> rules;  // the rules that fired, by number
  std::vector<std::shared_ptr<const StoredRealize>> realizes;
  std::vector<std::shared_ptr<const StoredKernel>> kernels;
  size_t dropped_realizes = 0, dropped_kernels = 0;
};

// page.cpp: the self-contained HTML page of `r`
std::string render_page(const Recorded& r);

}  // namespace tg::viz
