#include "uop/pattern_matcher.h"

#include <unordered_map>
#include <unordered_set>

#include "tg/error.h"
#include "uop/track.h"

namespace tg::uop {

PatternMatcher::PatternMatcher(std::vector<std::pair<UPat, RewriteFn>> rules) : rules_(std::move(rules)) {
  for (uint32_t i = 0; i < rules_.size(); i++) {
    const auto& ops = rules_[i].first.ops();
    for (int o = 0; o < kNumOps; o++)
      if (!ops || ops->contains(static_cast<Ops>(o))) by_op_[o].push_back(i);
  }
}

PatternMatcher PatternMatcher::operator+(const PatternMatcher& o) const {
  auto rules = rules_;
  rules.insert(rules.end(), o.rules_.begin(), o.rules_.end());
  return PatternMatcher(std::move(rules));
}

UOp PatternMatcher::rewrite(const UOp& u, void* ctx, const std::type_info* ctx_type, uint32_t* fired) const {
  Match m;
  m.root_ = &u;
  m.ctx_ = ctx;
  m.ctx_type_ = ctx_type;
  for (uint32_t i : by_op_[static_cast<size_t>(u.op())]) {
    m.captures.clear();
    if (!rules_[i].first.match(u, m)) continue;
    UOp r = rules_[i].second(m);
    if (!r || r == u) continue;
    // a rewrite must keep the value's dtype, or every user of the node would be ill-typed
    if (r.dtype() != u.dtype())
      throw InternalError("PatternMatcher", "rule " + rules_[i].first.repr() + " rewrote a " + u.dtype().name() +
                                                " " + std::string(op_name(u.op())) + " into a " + r.dtype().name());
    if (fired) *fired = i;
    return r;
  }
  return UOp();
}

UOp graph_rewrite(const UOp& root, const PatternMatcher& pm, RewriteOptions opts) {
  return graph_rewrite_ctx(root, pm, nullptr, nullptr, opts);
}

UOp graph_rewrite_ctx(const UOp& root, const PatternMatcher& pm, void* ctx, const std::type_info* ctx_type,
                      RewriteOptions opts) {
  // An explicit stack instead of recursion. Stage 0: push the sources; stage 1: rebuild with rewritten sources and
  // apply pm; stage 2: the node was rewritten into `next`, whose own (fully rewritten) result is ours.
  struct Frame {
    UOp node;
    int stage;
    UOp next;
    size_t chain = 0;  // how many rewrites led to this node from a node of the input
  };
  // keyed by UOp, not by pointer: the key keeps an intermediate node alive, so its address is never reused
  std::unordered_map<UOp, UOp, UOpHash> done;
  std::unordered_set<const UOpNode*> in_progress;  // nodes at stage >= 1: meeting one again means the rules loop
  std::vector<Frame> stack{{root, 0, UOp()}};
  size_t seen = 0, rewrites = 0;
  RewriteLog* log = rewrite_log();
  RewriteCall tracked;
  uint32_t fired = 0;
  size_t fired_here = 0;
  auto loop_error = [&](const UOp& u) {
    return CompileError("graph_rewrite", "rewrite rules loop: " + std::string(op_name(u.op())) + " node " +
                                             u.render() + " rewrites back into itself");
  };
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.stage == 0) {
      if (done.count(f.node)) { stack.pop_back(); continue; }
      if (!in_progress.insert(f.node.get()).second) throw loop_error(f.node);
      f.stage = 1;
      seen++;
      UOp node = f.node;  // the push below may move the frame
      for (auto it = node.src().rbegin(); it != node.src().rend(); ++it)
        if (!done.count(*it)) {
          if (in_progress.count(it->get())) throw loop_error(*it);
          stack.push_back({*it, 0, UOp()});
        }
      continue;
    }
    if (f.stage == 1) {
      std::vector<UOp> src;
      src.reserve(f.node.src().size());
      bool changed = false;
      for (const UOp& s : f.node.src()) {
        const UOp& r = done.at(s);
        changed |= r != s;
        src.push_back(r);
      }
      UOp rebuilt = changed ? f.node.with_src(std::move(src)) : f.node;
      UOp r = pm.rewrite(rebuilt, ctx, ctx_type, &fired);
      if (!r) {
        // the rebuilt node is final too: its sources are already rewritten and no rule fires on it
        if (rebuilt != f.node) done.emplace(rebuilt, rebuilt);
        done.emplace(f.node, rebuilt);
        in_progress.erase(f.node.get());
        stack.pop_back();
        continue;
      }
      if (f.chain >= opts.max_rewrites_per_node || ++rewrites > opts.max_rewrites_per_node * (seen + 100))
        throw CompileError("graph_rewrite", "rewrite did not converge after " + std::to_string(rewrites) +
                                                " rule applications; last rewrite of " + std::string(op_name(rebuilt.op())));
      if (log) {  // VIZ: the rule that fired, on what
        fired_here++;
        if (log->steps++ < RewriteLog::kMaxSteps) tracked.steps.push_back({pm.rule_repr(fired), rebuilt, r});
        else log->dropped_steps++;
      }
      if (auto it = done.find(r); it != done.end()) {
        done.emplace(f.node, it->second);
        in_progress.erase(f.node.get());
        stack.pop_back();
        continue;
      }
      if (in_progress.count(r.get())) throw loop_error(r);
      f.stage = 2;
      f.next = r;
      size_t chain = f.chain + 1;  // read before the push, which may move the frame
      stack.push_back({r, 0, UOp(), chain});
      continue;
    }
    // stage 2
    UOp result = done.at(f.next);
    done.emplace(f.node, result);
    in_progress.erase(f.node.get());
    stack.pop_back();
  }
  if (log && fired_here == 0) log->unchanged_calls++;
  else if (log && !tracked.steps.empty()) log->calls.push_back({root, done.at(root), std::move(tracked.steps)});
  return done.at(root);
}

}  // namespace tg::uop
