// PatternMatcher (a table of UPat -> rewrite rules, indexed by op) and graph_rewrite (apply one to a fixed point).
#pragma once
#include <array>
#include <functional>
#include <typeinfo>
#include <utility>
#include <vector>

#include "uop/upat.h"

namespace tg::uop {

// A rule's callback: the replacement for m.root(), or a null UOp when the rule does not apply after all.
using RewriteFn = std::function<UOp(const Match& m)>;

class PatternMatcher {
 public:
  PatternMatcher() = default;
  PatternMatcher(std::vector<std::pair<UPat, RewriteFn>> rules);
  PatternMatcher operator+(const PatternMatcher& o) const;  // o's rules after ours

  // The first rule (in table order) whose pattern matches u and whose callback returns a node; null if none.
  // `fired`, where given, gets that rule's index.
  UOp rewrite(const UOp& u, void* ctx = nullptr, const std::type_info* ctx_type = nullptr, uint32_t* fired = nullptr) const;
  size_t size() const { return rules_.size(); }
  std::string rule_repr(uint32_t i) const { return rules_.at(i).first.repr(); }

 private:
  std::vector<std::pair<UPat, RewriteFn>> rules_;
  std::array<std::vector<uint32_t>, kNumOps> by_op_;  // rule indices that can match a root of each op
};

struct RewriteOptions {
  // a node rewritten this many times in a row (each result rewritten again), or this many rule applications per
  // node seen, is reported as not converging
  size_t max_rewrites_per_node = 1000;
};

// Rewrites every node of the graph below `root`, sources before users, applying pm to each node until no rule
// fires (and rewriting what a rule returns in turn). Memoized within the call. Raises tg::CompileError when the
// rules loop (a node rewrites back into itself) or do not converge. Tracked where a RewriteLog is installed
// (uop/track.h).
UOp graph_rewrite(const UOp& root, const PatternMatcher& pm, RewriteOptions opts = {});
UOp graph_rewrite_ctx(const UOp& root, const PatternMatcher& pm, void* ctx, const std::type_info* ctx_type,
                      RewriteOptions opts = {});
template <class T>
UOp graph_rewrite(const UOp& root, const PatternMatcher& pm, T& ctx, RewriteOptions opts = {}) {
  return graph_rewrite_ctx(root, pm, &ctx, &typeid(T), opts);
}

}  // namespace tg::uop
