// UPat: patterns over UOp graphs, for PatternMatcher rules.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "uop/uop.h"

namespace tg::uop {

// What a rule's callback sees: the captured nodes by name, the matched node, and the rewrite's context.
class Match {
 public:
  const UOp& operator[](std::string_view name) const;  // the capture; an InternalError if there is none
  const UOp* find(std::string_view name) const;         // the capture or nullptr
  const UOp& root() const { return *root_; }
  template <class T> T& ctx() const {
    if (!ctx_ || *ctx_type_ != typeid(T)) throw_bad_ctx(typeid(T).name());
    return *static_cast<T*>(ctx_);
  }

  // used by the matcher
  std::vector<std::pair<std::string, UOp>> captures;  // names copied: a Match may outlive its pattern
  const UOp* root_ = nullptr;
  void* ctx_ = nullptr;
  const std::type_info* ctx_type_ = nullptr;

 private:
  [[noreturn]] void throw_bad_ctx(const char* wanted) const;
};

class UPat {
 public:
  enum class SrcMode : uint8_t {
    Any,      // sources not checked
    Exact,    // the sources match in order
    Permute,  // the sources match in some order (for commutative ops)
    Repeat,   // any number of sources, each matching the one pattern
    Prefix,   // the first sources match in order, more may follow
  };

  UPat();  // matches any UOp
  UPat(Ops op);
  UPat(OpSet ops);
  UPat(Ops op, std::vector<UPat> srcs);  // sources in order
  UPat(OpSet ops, std::vector<UPat> srcs);

  static UPat var(std::string name = "", std::optional<DType> dtype = std::nullopt);   // anything, captured
  static UPat cvar(std::string name = "", std::optional<DType> dtype = std::nullopt);  // any CONST, captured
  // a CONST of this value (a bool value matches only bool constants)
  template <Scalar T> static UPat cnst(T v) {
    return const_value(to_const(v), std::is_same_v<T, bool> ? std::optional<DType>(dtypes::bool_) : std::nullopt);
  }
  static UPat const_value(ConstValue v, std::optional<DType> dtype = std::nullopt);

  // refinements: each returns a new pattern
  UPat named(std::string name) const;
  UPat dtype(DType dt) const;
  UPat dtypes(std::vector<DType> dts) const;
  UPat int_dtype() const;  // any integer dtype (not bool)
  UPat arg(Arg a) const;
  UPat with_ops(OpSet ops) const;
  UPat src(std::vector<UPat> srcs, SrcMode mode = SrcMode::Exact) const;
  UPat src_permute(std::vector<UPat> srcs) const { return src(std::move(srcs), SrcMode::Permute); }
  UPat src_repeat(UPat each) const { return src({std::move(each)}, SrcMode::Repeat); }
  UPat src_prefix(std::vector<UPat> srcs) const { return src(std::move(srcs), SrcMode::Prefix); }

  // building bigger patterns like UOps: commutative ops match their sources in either order
  UPat alu(Ops op, std::vector<UPat> others) const;
  UPat lt(const UPat& o) const { return alu(Ops::CMPLT, {o}); }
  UPat ne(const UPat& o) const { return alu(Ops::CMPNE, {o}); }
  UPat maximum(const UPat& o) const { return alu(Ops::MAX, {o}); }
  UPat where(const UPat& t, const UPat& f) const { return alu(Ops::WHERE, {t, f}); }
  UPat cast(std::optional<DType> dt = std::nullopt) const;

  // does the pattern match u? captures go into m (and are rolled back on failure)
  bool match(const UOp& u, Match& m) const;
  // the ops a matching root can have, or nullopt for any op
  const std::optional<OpSet>& ops() const;
  std::string repr() const;

 private:
  struct Data;
  std::shared_ptr<const Data> d_;
  UPat(std::shared_ptr<const Data> d) : d_(std::move(d)) {}
  std::shared_ptr<Data> edit();  // copy on write: a refinement never changes a pattern shared elsewhere
};

UPat operator+(const UPat& a, const UPat& b);
UPat operator*(const UPat& a, const UPat& b);
UPat operator/(const UPat& a, const UPat& b);  // IDIV
UPat operator%(const UPat& a, const UPat& b);
UPat operator<(const UPat& a, const UPat& b);
UPat operator&(const UPat& a, const UPat& b);
UPat operator|(const UPat& a, const UPat& b);
UPat operator^(const UPat& a, const UPat& b);
#define TG_UPAT_SCALAR_OP(sym)                                                                    \
  template <Scalar T> UPat operator sym(const UPat& a, T b) { return a sym UPat::cnst(b); } \
  template <Scalar T> UPat operator sym(T a, const UPat& b) { return UPat::cnst(a) sym b; }
TG_UPAT_SCALAR_OP(+)
TG_UPAT_SCALAR_OP(*)
TG_UPAT_SCALAR_OP(/)
TG_UPAT_SCALAR_OP(%)
TG_UPAT_SCALAR_OP(<)
TG_UPAT_SCALAR_OP(&)
TG_UPAT_SCALAR_OP(|)
TG_UPAT_SCALAR_OP(^)
#undef TG_UPAT_SCALAR_OP

}  // namespace tg::uop
