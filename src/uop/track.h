// Rewrite tracking (what VIZ=1 shows, tinygrad's TrackedGraphRewrite): while a RewriteLog is installed on a
// thread, every graph_rewrite on that thread that changes its graph appends its input, its output and each rule
// that fired (the rule's pattern, the node it matched and what the rule made of it). Nothing is kept otherwise.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "uop/uop.h"

namespace tg::uop {

struct RewriteStep {
  std::string rule;  // the pattern of the rule that fired
  UOp before, after;
};
struct RewriteCall {
  UOp in, out;
  std::vector<RewriteStep> steps;
};
struct RewriteLog {
  static constexpr size_t kMaxSteps = 20000;  // over all calls; later steps are counted, not kept
  std::vector<RewriteCall> calls;
  size_t steps = 0, dropped_steps = 0;
  size_t unchanged_calls = 0;  // graph_rewrites in which no rule fired
};

// Installs `log` on the calling thread for the scope's life (restoring the one installed before).
class TrackRewrites {
 public:
  explicit TrackRewrites(RewriteLog* log);
  ~TrackRewrites();
  TrackRewrites(const TrackRewrites&) = delete;
  TrackRewrites& operator=(const TrackRewrites&) = delete;

 private:
  RewriteLog* outer_;
};

// The calling thread's log, or null.
RewriteLog* rewrite_log();

}  // namespace tg::uop
