#include "uop/sint.h"

#include <algorithm>

#include <cctype>
#include <ostream>
#include <unordered_map>

#include "uop/exec_alu.h"
#include "uop/symbolic.h"

namespace tg {

using uop::Ops;
using uop::UOp;

struct DimAccess {
  static Dim of_node(const UOp& u) {  // u: a simplified, non-constant int64 expression
    Dim d;
    d.n_ = const_cast<uop::UOpNode*>(u.get());
    d.n_->refcount.fetch_add(1, std::memory_order_relaxed);
    return d;
  }
};

namespace {

constexpr int64_t kMaxDim = int64_t{1} << 62;

// the expression with every BIND replaced by its variable, the bound values recorded in *vals (when given)
UOp without_binds(const UOp& u, uop::VarVals* vals = nullptr, SourceLocation where = SourceLocation::current()) {
  std::vector<std::pair<UOp, UOp>> subs;
  for (const UOp& x : u.toposort())
    if (x.op() == Ops::BIND) {
      if (vals) vals->add(x.src(0).arg().get<uop::VarArg>(), const_to_int(x.src(1).const_value()), where);
      subs.emplace_back(x, x.src(0));
    }
  return subs.empty() ? u : u.substitute(subs);
}

// names the codegen gives its own variables (lanes, merge and index variables) are not the user's to take
bool reserved(const std::string& name) {
  for (const char* p : {"lane", "vlane", "idx", "merge"}) {
    std::string s(p);
    if (name.rfind(s, 0) == 0 && name.find_first_not_of("0123456789", s.size()) == std::string::npos) return true;
  }
  return false;
}

}  // namespace

void Dim::retain() const noexcept { n_->refcount.fetch_add(1, std::memory_order_relaxed); }
void Dim::release() noexcept {
  if (n_->refcount.fetch_sub(1, std::memory_order_acq_rel) == 1) uop::destroy_node(n_);
  n_ = nullptr;
}
Dim& Dim::operator=(const Dim& o) noexcept {
  Dim tmp(o);
  std::swap(c_, tmp.c_), std::swap(n_, tmp.n_);
  return *this;
}
Dim& Dim::operator=(Dim&& o) noexcept {
  std::swap(c_, o.c_), std::swap(n_, o.n_);
  return *this;
}

int64_t Dim::concrete(const char* op, SourceLocation where) const {
  if (n_) throw ShapeError(op, std::string(op) + " needs a concrete size here, not the symbolic " + str(), where);
  return c_;
}
int64_t Dim::value(SourceLocation where) const { return n_ ? uop::eval(UOp::share(n_), {}, where) : c_; }
int64_t Dim::bound(bool upper) const { return upper ? UOp::share(n_).vmax() : UOp::share(n_).vmin(); }
std::string Dim::str() const { return n_ ? without_binds(UOp::share(n_)).render() : std::to_string(c_); }
uint64_t Dim::hash() const { return n_ ? n_->hash : uop::hash_mix(0x5d1e, static_cast<uint64_t>(c_)); }

Dim Dim::symbolic(char op, const Dim& a, const Dim& b) {
  UOp x = uop::to_uop(a), y = uop::to_uop(b);
  return uop::from_uop(op == '+' ? x + y : op == '-' ? x - y : x * y);
}
Dim Dim::idiv(int64_t d, SourceLocation where) const {
  if (d <= 0) throw ArgumentError("Dim.idiv", "divides " + str() + " by " + std::to_string(d) + ": the divisor must be positive", where);
  if (!n_) return Dim(c_ >= 0 ? c_ / d : -((-c_ + d - 1) / d));
  return uop::from_uop(uop::to_uop(*this).idiv(UOp::const_(dtypes::int64, d)));
}
Dim Dim::mod(int64_t d, SourceLocation where) const {
  if (d <= 0) throw ArgumentError("Dim.mod", "takes " + str() + " modulo " + std::to_string(d) + ": the divisor must be positive", where);
  if (!n_) return Dim(((c_ % d) + d) % d);
  return uop::from_uop(uop::to_uop(*this).mod(UOp::const_(dtypes::int64, d)));
}

Variable::Variable(std::string name, int64_t min, int64_t max, SourceLocation where) : name_(std::move(name)), min_(min), max_(max) {
  bool ident = !name_.empty() && !std::isdigit(static_cast<unsigned char>(name_[0]));
  for (char ch : name_) ident = ident && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
  if (!ident || reserved(name_))
    throw ArgumentError("Variable", "'" + name_ + "' is not a name a Variable can have: a C identifier, not lane<n>, vlane<n>, idx<n> or merge<n>", where);
  if (min < 0 || min > max || max > kMaxDim)
    throw ArgumentError("Variable", "Variable '" + name_ + "' needs 0 <= min <= max <= 2^62, not [" + std::to_string(min) + ", " + std::to_string(max) + "]", where);
}
Dim Variable::unbound() const { return uop::from_uop(UOp::variable(name_, min_, max_, dtypes::int64)); }
Dim Variable::bind(int64_t v, SourceLocation where) const {
  if (v < min_ || v > max_)
    throw ArgumentError("Variable.bind", "binds " + name_ + " to " + std::to_string(v) + ", outside its range [" + std::to_string(min_) + ", " + std::to_string(max_) + "]", where);
  if (min_ == max_) return Dim(v);  // a variable with one possible value is that value
  UOp var = UOp::variable(name_, min_, max_, dtypes::int64, where);
  return uop::from_uop(UOp::make(Ops::BIND, dtypes::int64, {var, UOp::const_(dtypes::int64, v)}));
}

std::optional<VariableUse> as_variable(const Dim& d) {
  if (!d.is_symbolic()) return std::nullopt;
  UOp e = UOp::share(d.node());
  if (e.op() == Ops::DEFINE_VAR) {
    const auto& v = e.arg().get<uop::VarArg>();
    return VariableUse{Variable(v.name, v.min, v.max), std::nullopt};
  }
  if (auto b = uop::as_bound_variable(d)) return VariableUse{Variable(b->first.name, b->first.min, b->first.max), b->second};
  return std::nullopt;
}

namespace {
// a - b, simplified
UOp difference(const Dim& a, const Dim& b) { return uop::simplify(uop::to_uop(a) - uop::to_uop(b)); }
}  // namespace

std::optional<bool> resolve_lt_symbolic(const Dim& a, const Dim& b) {
  UOp d = difference(a, b);
  if (d.vmax() < 0) return true;
  if (d.vmin() >= 0) return false;
  return std::nullopt;
}
bool provably_equal(const Dim& a, const Dim& b) {
  if (a == b) return true;
  UOp d = difference(a, b);
  return d.is_const() && const_to_int(d.const_value()) == 0;
}

std::ostream& operator<<(std::ostream& os, const Dim& d) { return os << d.str(); }

namespace uop {
std::string dims_str(const std::vector<Dim>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); i++) s += (i ? ", " : "") + dims[i].str();
  return s + (dims.size() == 1 ? ",)" : ")");
}
}  // namespace uop

bool DimList::is_symbolic() const {
  return std::any_of(v_.begin(), v_.end(), [](const Dim& d) { return d.is_symbolic(); });
}
std::vector<int64_t> DimList::ints() const {
  std::vector<int64_t> out;
  for (const Dim& d : v_) out.push_back(d.concrete("size"));
  return out;
}
bool DimRanges::is_symbolic() const {
  return std::any_of(v_.begin(), v_.end(), [](const auto& p) { return p.first.is_symbolic() || p.second.is_symbolic(); });
}
std::vector<std::pair<int64_t, int64_t>> DimRanges::ints() const {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& [a, b] : v_) out.push_back({a.concrete("range"), b.concrete("range")});
  return out;
}

namespace uop {

UOp to_uop(const Dim& d, DType dt) {
  if (!d.is_symbolic()) return UOp::const_(dt, d.concrete("to_uop"));
  UOp e = UOp::share(d.node());
  if (dt == dtypes::int64) return e;
  std::unordered_map<const UOpNode*, UOp> remade;
  for (const UOp& u : e.toposort()) {
    std::vector<UOp> src;
    for (const UOp& s : u.src()) src.push_back(remade.at(s.get()));
    DType out = u.dtype().is_bool() ? u.dtype() : dt;
    remade[u.get()] = u.is_const() ? UOp::const_(out, u.const_value()) : UOp::make(u.op(), out, std::move(src), u.arg());
  }
  return remade.at(e.get());
}

Dim from_uop(const UOp& u) {
  UOp s = simplify(u.dtype() == dtypes::int64 ? u : u.cast(dtypes::int64));
  if (s.is_const()) return Dim(const_to_int(s.const_value()));
  return DimAccess::of_node(s);
}

bool lt_at_values(const Dim& a, const Dim& b) {
  if (std::optional<bool> r = resolve_lt(a, b)) return *r;
  try {
    return a.value() < b.value();
  } catch (const ArgumentError&) {
    return false;
  }
}
Dim smax(const Dim& a, const Dim& b) {
  std::optional<bool> r = resolve_lt(a, b);
  if (r) return *r ? b : a;
  return from_uop(to_uop(a).maximum(to_uop(b)));
}
Dim smin(const Dim& a, const Dim& b) {
  std::optional<bool> r = resolve_lt(a, b);
  if (r) return *r ? a : b;
  return from_uop(to_uop(a).minimum(to_uop(b)));
}

const int64_t* VarVals::find(const std::string& name) const {
  for (const auto& [var, v] : vals)
    if (var.name == name) return &v;
  return nullptr;
}
void VarVals::add(const VarArg& var, int64_t value, SourceLocation where) {
  if (const int64_t* have = find(var.name)) {
    if (*have != value)
      throw ArgumentError("bind", var.name + " is bound to " + std::to_string(*have) + " and to " + std::to_string(value) + " in one computation", where);
    return;
  }
  vals.emplace_back(var, value);
}

Dim unbind(const Dim& d, VarVals* vals, SourceLocation where) {
  if (!d.is_symbolic()) return d;
  UOp e = UOp::share(d.node()), free = without_binds(e, vals, where);
  return free == e ? d : from_uop(free);
}

Dim rebind(const Dim& d, const VarVals& vals) {
  if (!d.is_symbolic()) return d;
  UOp e = UOp::share(d.node());
  std::vector<std::pair<UOp, UOp>> moved;
  for (const UOp& x : e.toposort())
    if (x.op() == Ops::BIND)
      if (const int64_t* v = vals.find(x.src(0).arg().get<VarArg>().name))
        moved.push_back({x, UOp::make(Ops::BIND, x.dtype(), {x.src(0), UOp::const_(x.src(1).dtype(), *v)})});
  return moved.empty() ? d : from_uop(e.substitute(moved));
}

UOp rebind(const UOp& u, const VarVals& vals) {
  std::unordered_map<const UOpNode*, UOp> done;
  for (const UOp& x : u.toposort()) {
    std::vector<UOp> src;
    bool changed = false;
    for (const UOp& s : x.src()) {
      src.push_back(done.count(s.get()) ? done.at(s.get()) : s);
      changed = changed || src.back() != s;
    }
    Arg arg = x.arg();
    if (const auto* dims = x.arg().get_if<std::vector<Dim>>()) {
      std::vector<Dim> now;
      for (const Dim& d : *dims) now.push_back(rebind(d, vals));
      changed = changed || now != *dims;
      arg = Arg(std::move(now));
    }
    if (changed) done[x.get()] = UOp::make(x.op(), x.dtype(), std::move(src), std::move(arg));
  }
  return done.count(u.get()) ? done.at(u.get()) : u;
}

std::optional<std::pair<VarArg, int64_t>> as_bound_variable(const Dim& d) {
  if (!d.is_symbolic()) return std::nullopt;
  UOp e = UOp::share(d.node());
  if (e.op() != Ops::BIND || e.src(0).op() != Ops::DEFINE_VAR || !e.src(1).is_const()) return std::nullopt;
  return std::make_pair(e.src(0).arg().get<VarArg>(), const_to_int(e.src(1).const_value()));
}

int64_t eval(const UOp& u, const VarVals& vals, SourceLocation where) {
  VarVals all = vals;  // and the values the expression's own BINDs carry
  UOp e = without_binds(u, &all, where);
  std::unordered_map<const UOpNode*, ConstValue> v;
  for (const UOp& x : e.toposort()) {
    ConstValue r;
    if (x.op() == Ops::CONST) r = x.const_value();
    else if (x.op() == Ops::DEFINE_VAR) {
      const int64_t* have = all.find(x.arg().get<VarArg>().name);
      if (!have) throw ArgumentError("eval", "the variable " + x.arg().get<VarArg>().name + " is not bound to a value", where);
      r = cast_const(ConstValue{*have}, x.dtype());
    } else {
      std::vector<ConstValue> args;
      for (const UOp& s : x.src()) args.push_back(v.at(s.get()));
      std::optional<ConstValue> out = exec_alu(x.op(), x.dtype(), x.src().empty() ? x.dtype() : x.src(0).dtype(), args);
      if (!out) throw ArgumentError("eval", "the size " + e.render() + " divides by zero at these values", where);
      r = *out;
    }
    v[x.get()] = r;
  }
  return const_to_int(v.at(e.get()));
}

}  // namespace uop

}  // namespace tg
