// tg::Dim inside the uop layer: its expression as a UOp and back, and the bound values of its variables.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tg/dim.h"
#include "uop/uop.h"

namespace tg::uop {

// d as an integer UOp of dtype dt (its CONST and DEFINE_VAR leaves remade in dt: an int32 kernel gets an int32
// start_pos); BINDs stay.
UOp to_uop(const Dim& d, DType dt = dtypes::int64);
// u simplified as a Dim: an int64 expression over DEFINE_VAR/BIND leaves, or the integer it folds to.
Dim from_uop(const UOp& u);

// a < b if that holds for every value of the variables; when it depends on them, at their bound values (false when
// unbound): how a user's argument is checked (tinygrad's resolve)
bool lt_at_values(const Dim& a, const Dim& b);
// a < b for every value of the variables
inline bool provably_lt(const Dim& a, const Dim& b) { return resolve_lt(a, b) == std::optional<bool>(true); }
// The larger and smaller of two sizes: one of them where that is decided, else a MAX expression
Dim smax(const Dim& a, const Dim& b);
Dim smin(const Dim& a, const Dim& b);

// Python's tuple notation: "(2, (start_pos+1))", "(3,)", "()".
std::string dims_str(const std::vector<Dim>& dims);

// The values of bound variables, by name.
struct VarVals {
  std::vector<std::pair<VarArg, int64_t>> vals;
  const int64_t* find(const std::string& name) const;
  void add(const VarArg& var, int64_t value, SourceLocation where = SourceLocation::current());  // a second value raises
};

// d with every BIND replaced by its variable, the values recorded in *vals.
Dim unbind(const Dim& d, VarVals* vals, SourceLocation where = SourceLocation::current());
// d, or every size in the movement args of u's graph, with each variable that vals holds bound to that value (a
// TinyJit replay's outputs: the capture's shapes at this call's values).
Dim rebind(const Dim& d, const VarVals& vals);
UOp rebind(const UOp& u, const VarVals& vals);
// The variable of a Dim that is exactly a bound Variable (v.bind(n)), with its value; nullopt for anything else.
std::optional<std::pair<VarArg, int64_t>> as_bound_variable(const Dim& d);
// The value of an integer expression over DEFINE_VAR/BIND leaves, variables taken from vals (BINDs from their own
// value); ArgumentError names a variable with no value.
int64_t eval(const UOp& u, const VarVals& vals, SourceLocation where = SourceLocation::current());

}  // namespace tg::uop
