#include "uop/upat.h"

#include <algorithm>

#include "tg/error.h"

namespace tg::uop {

struct UPat::Data {
  std::optional<OpSet> ops;
  std::optional<std::vector<DType>> dtypes;
  bool any_int = false;
  SrcMode mode = SrcMode::Any;
  std::vector<UPat> src;
  std::optional<Arg> arg;
  std::optional<ConstValue> value;  // a CONST's value, compared numerically
  std::string name;
};

// ---- Match ----

const UOp* Match::find(std::string_view name) const {
  for (const auto& [n, u] : captures)
    if (n == name) return &u;
  return nullptr;
}

const UOp& Match::operator[](std::string_view name) const {
  if (const UOp* u = find(name)) return *u;
  throw InternalError("PatternMatcher", "rule asked for capture '" + std::string(name) + "' that its pattern does not name");
}

void Match::throw_bad_ctx(const char* wanted) const {
  throw InternalError("PatternMatcher", std::string("rule wants a context of type ") + wanted +
                                            (ctx_ ? std::string(", graph_rewrite got ") + ctx_type_->name() : ", graph_rewrite got none"));
}

// ---- building ----

UPat::UPat() : d_(std::make_shared<Data>()) {}
UPat::UPat(Ops op) : UPat() { edit()->ops = OpSet{op}; }
UPat::UPat(OpSet ops) : UPat() { edit()->ops = ops; }
UPat::UPat(Ops op, std::vector<UPat> srcs) : UPat(OpSet{op}, std::move(srcs)) {}
UPat::UPat(OpSet ops, std::vector<UPat> srcs) : UPat(ops) {
  auto d = edit();
  d->src = std::move(srcs);
  d->mode = SrcMode::Exact;
}

std::shared_ptr<UPat::Data> UPat::edit() {
  auto d = std::make_shared<Data>(*d_);
  d_ = d;
  return d;
}

UPat UPat::var(std::string name, std::optional<DType> dtype) {
  UPat p;
  auto d = p.edit();
  d->name = std::move(name);
  if (dtype) d->dtypes = std::vector<DType>{*dtype};
  return p;
}

UPat UPat::cvar(std::string name, std::optional<DType> dtype) { return var(std::move(name), dtype).src({}, SrcMode::Any).with_ops(OpSet{Ops::CONST}); }

UPat UPat::const_value(ConstValue v, std::optional<DType> dtype) {
  UPat p = cvar("", dtype);
  p.edit()->value = v;
  return p;
}

UPat UPat::named(std::string name) const { UPat p(*this); p.edit()->name = std::move(name); return p; }
UPat UPat::dtype(DType dt) const { UPat p(*this); p.edit()->dtypes = std::vector<DType>{dt}; return p; }
UPat UPat::dtypes(std::vector<DType> dts) const { UPat p(*this); p.edit()->dtypes = std::move(dts); return p; }
UPat UPat::int_dtype() const { UPat p(*this); p.edit()->any_int = true; return p; }
UPat UPat::arg(Arg a) const { UPat p(*this); p.edit()->arg = std::move(a); return p; }
UPat UPat::src(std::vector<UPat> srcs, SrcMode mode) const {
  UPat p(*this);
  auto d = p.edit();
  d->src = std::move(srcs);
  d->mode = mode;
  return p;
}
UPat UPat::with_ops(OpSet ops) const { UPat p(*this); p.edit()->ops = ops; return p; }

UPat UPat::alu(Ops op, std::vector<UPat> others) const {
  std::vector<UPat> srcs{*this};
  srcs.insert(srcs.end(), others.begin(), others.end());
  return UPat(op).src(std::move(srcs), GroupOp::Commutative().contains(op) ? SrcMode::Permute : SrcMode::Exact);
}

UPat UPat::cast(std::optional<DType> dt) const {
  UPat p = UPat(Ops::CAST, {*this});
  return dt ? p.dtype(*dt) : p;
}

const std::optional<OpSet>& UPat::ops() const { return d_->ops; }

UPat operator+(const UPat& a, const UPat& b) { return a.alu(Ops::ADD, {b}); }
UPat operator*(const UPat& a, const UPat& b) { return a.alu(Ops::MUL, {b}); }
UPat operator/(const UPat& a, const UPat& b) { return a.alu(Ops::IDIV, {b}); }
UPat operator%(const UPat& a, const UPat& b) { return a.alu(Ops::MOD, {b}); }
UPat operator<(const UPat& a, const UPat& b) { return a.alu(Ops::CMPLT, {b}); }
UPat operator&(const UPat& a, const UPat& b) { return a.alu(Ops::AND, {b}); }
UPat operator|(const UPat& a, const UPat& b) { return a.alu(Ops::OR, {b}); }
UPat operator^(const UPat& a, const UPat& b) { return a.alu(Ops::XOR, {b}); }

// ---- matching ----

namespace {
bool match_in_order(const std::vector<UPat>& pats, const std::vector<UOp>& srcs, size_t n, Match& m) {
  for (size_t i = 0; i < n; i++)
    if (!pats[i].match(srcs[i], m)) return false;
  return true;
}
}  // namespace

bool UPat::match(const UOp& u, Match& m) const {
  const Data& d = *d_;
  if (d.ops && !d.ops->contains(u.op())) return false;
  if (d.dtypes && std::find(d.dtypes->begin(), d.dtypes->end(), u.dtype()) == d.dtypes->end() &&
      std::find(d.dtypes->begin(), d.dtypes->end(), u.dtype().scalar()) == d.dtypes->end())
    return false;
  if (d.any_int && !u.dtype().is_int()) return false;
  if (d.arg && !(*d.arg == u.arg())) return false;
  if (d.value && !(u.is_const() && const_equal(*d.value, u.const_value()))) return false;
  size_t mark = m.captures.size();
  if (!d.name.empty()) {
    // a name used twice in a pattern must capture the same node both times
    if (const UOp* prev = m.find(d.name)) {
      if (*prev != u) return false;
    } else {
      m.captures.emplace_back(d.name, u);
    }
  }
  const auto& srcs = u.src();
  bool ok = true;
  switch (d.mode) {
    case SrcMode::Any: break;
    case SrcMode::Exact: ok = srcs.size() == d.src.size() && match_in_order(d.src, srcs, srcs.size(), m); break;
    case SrcMode::Prefix: ok = srcs.size() >= d.src.size() && match_in_order(d.src, srcs, d.src.size(), m); break;
    case SrcMode::Repeat:
      for (const UOp& s : srcs)
        if (!(ok = d.src[0].match(s, m))) break;
      break;
    case SrcMode::Permute: {
      ok = false;
      if (srcs.size() != d.src.size()) break;
      std::vector<size_t> order(srcs.size());
      for (size_t i = 0; i < order.size(); i++) order[i] = i;
      size_t inner = m.captures.size();
      do {
        bool all = true;
        for (size_t i = 0; i < order.size() && all; i++) all = d.src[order[i]].match(srcs[i], m);
        if (all) { ok = true; break; }
        m.captures.resize(inner);
      } while (std::next_permutation(order.begin(), order.end()));
      break;
    }
  }
  if (!ok) m.captures.resize(mark);
  return ok;
}

std::string UPat::repr() const {
  const Data& d = *d_;
  std::string s = "UPat(";
  if (d.ops) {
    std::string names;
    d.ops->for_each([&](Ops o) { names += (names.empty() ? "" : "|") + std::string(op_name(o)); });
    s += names;
  } else {
    s += "*";
  }
  if (!d.name.empty()) s += ", name=" + d.name;
  if (d.value) s += ", value=" + const_repr(*d.value);
  if (!d.src.empty()) {
    s += ", src=[";
    for (size_t i = 0; i < d.src.size(); i++) s += (i ? ", " : "") + d.src[i].repr();
    s += "]";
  }
  return s + ")";
}

}  // namespace tg::uop
