#include "renderer/c_renderer.h"

#include <cmath>
#include <cstdio>
#include <unordered_map>

namespace tg::renderer {

using uop::Ops;
using uop::UOp;

namespace {

// C type of a value in registers: bool as _Bool, the rest as their C types
std::string ctype(DType dt) {
  if (dt.is_bool()) return "_Bool";
  return dt.scalar().c_type();
}

std::string float_suffix(DType dt) { return dt == dtypes::float64 ? "" : "f"; }

}  // namespace

std::string c_literal(const UOp& c) {
  DType dt = c.dtype();
  const ConstValue& v = c.const_value();
  if (dt.is_bool()) return const_to_int(v) ? "1" : "0";
  if (dt.is_float()) {
    double d = const_to_double(v);
    std::string sfx = float_suffix(dt);
    if (std::isnan(d)) return "__builtin_nan" + sfx + "(\"\")";
    if (std::isinf(d)) return std::string(d < 0 ? "-" : "") + "__builtin_inf" + sfx + "()";
    char buf[64];
    std::snprintf(buf, sizeof buf, dt == dtypes::float64 ? "%.17g" : "%.9g", d);
    std::string s = buf;
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return s + sfx;
  }
  if (dt.is_unsigned()) return std::to_string(static_cast<uint64_t>(const_to_int(v))) + (dt.itemsize() == 8 ? "ULL" : "U");
  int64_t i = const_to_int(v);
  if (dt.itemsize() == 8 || i < INT32_MIN + 1 || i > INT32_MAX) {
    // INT64_MIN has no literal: write it as an expression
    if (i == INT64_MIN) return "(-9223372036854775807LL-1)";
    return std::to_string(i) + "LL";
  }
  return std::to_string(i);
}

RenderedKernel render_c(const std::string& name, const std::vector<UOp>& uops) {
  std::unordered_map<const uop::UOpNode*, std::string> r;  // how each value is written
  std::unordered_map<const uop::UOpNode*, int> uses;
  for (const UOp& u : uops)
    for (const UOp& s : u.src()) uses[s.get()]++;
  auto val = [&](const UOp& u) -> std::string {
    if (u.op() == Ops::CONST) return c_literal(u);
    return r.at(u.get());
  };
  std::string body, params, unpack;
  int depth = 1, n_alu = 0, n_val = 0, n_acc = 0;
  auto line = [&](const std::string& s) { body += std::string(2 * depth, ' ') + s + "\n"; };

  for (const UOp& u : uops) {
    switch (u.op()) {
      case Ops::DEFINE_GLOBAL: {
        int64_t i = u.arg().get<int64_t>();
        std::string t = ctype(u.dtype().scalar());
        std::string p = "data" + std::to_string(i);
        params += std::string(params.empty() ? "" : ", ") + t + "* restrict " + p;
        unpack += std::string(unpack.empty() ? "" : ", ") + "(" + t + "*)bufs[" + std::to_string(i) + "]";
        r[u.get()] = p;
        break;
      }
      case Ops::RANGE: {
        std::string v = "ridx" + std::to_string(u.arg().get<int64_t>());
        line("for (" + ctype(u.dtype()) + " " + v + " = 0; " + v + " < " + val(u.src(0)) + "; " + v + "++) {");
        depth++;
        r[u.get()] = v;
        break;
      }
      case Ops::END: depth--, line("}"); break;
      case Ops::INDEX: r[u.get()] = val(u.src(0)) + "[" + val(u.src(1)) + "]"; break;
      case Ops::LOAD: {
        const UOp& idx = u.src(0);
        std::string v = "val" + std::to_string(n_val++), e = val(idx);
        if (idx.src().size() > 2) e = "(" + val(idx.src(2)) + " ? " + e + " : (" + ctype(u.dtype()) + ")0)";
        line(ctype(u.dtype()) + " " + v + " = " + e + ";");
        r[u.get()] = v;
        break;
      }
      case Ops::STORE: line(val(u.src(0)) + " = " + val(u.src(1)) + ";"); break;
      case Ops::DEFINE_REG: {
        const UOp& red = u.src(0);
        std::string acc = "acc" + std::to_string(n_acc++);
        line(ctype(red.dtype()) + " " + acc + " = " + val(red.src().back()) + ";");
        r[red.get()] = acc;
        break;
      }
      case Ops::REDUCE: {
        std::string acc = r.at(u.get()), x = val(u.src(0));
        Ops op = u.arg().get<Ops>();
        if (op == Ops::ADD) line(acc + " += " + x + ";");
        else line(acc + " = (" + x + " > " + acc + " || " + x + " != " + x + ") ? " + x + " : " + acc + ";");  // max, nan wins
        break;
      }
      default: {
        // ALU: an expression, inlined into its one user or named when used more than once
        std::string e;
        auto s = [&](size_t i) { return val(u.src(i)); };
        DType in = u.src().empty() ? u.dtype() : u.src(0).dtype();
        std::string sfx = float_suffix(in);
        switch (u.op()) {
          case Ops::NEG: e = "(-" + s(0) + ")"; break;
          case Ops::RECIPROCAL: e = "(1" + std::string(in == dtypes::float64 ? ".0" : ".0f") + "/" + s(0) + ")"; break;
          case Ops::SQRT: e = "__builtin_sqrt" + sfx + "(" + s(0) + ")"; break;
          case Ops::EXP2: e = "__builtin_exp2" + sfx + "(" + s(0) + ")"; break;
          case Ops::LOG2: e = "__builtin_log2" + sfx + "(" + s(0) + ")"; break;
          case Ops::SIN: e = "__builtin_sin" + sfx + "(" + s(0) + ")"; break;
          case Ops::CAST: e = u.dtype().is_bool() ? "(" + s(0) + " != 0)" : "((" + ctype(u.dtype()) + ")" + s(0) + ")"; break;
          case Ops::BITCAST:
            e = "({ union { " + ctype(in) + " a; " + ctype(u.dtype()) + " b; } _u; _u.a = " + s(0) + "; _u.b; })";
            break;
          case Ops::MAX: e = "((" + s(0) + " > " + s(1) + ") ? " + s(0) + " : " + s(1) + ")"; break;
          case Ops::WHERE: e = "(" + s(0) + " ? " + s(1) + " : " + s(2) + ")"; break;
          case Ops::MULACC: e = "((" + s(0) + "*" + s(1) + ")+" + s(2) + ")"; break;
          case Ops::IDIV:
          case Ops::MOD: {
            const char* sym = uop::infix_symbol(u.op());
            // a divisor that may be 0 would trap (and -1 under INT_MIN for signed types): those give 0 and -x
            bool safe = u.src(1).is_const() && const_to_int(u.src(1).const_value()) > 0;
            std::string zero = "(" + s(1) + " == 0) ? (" + ctype(u.dtype()) + ")0";
            std::string neg1 = in.is_unsigned() ? ""
                               : " : (" + s(1) + " == -1) ? (" + ctype(u.dtype()) + ")" +
                                     (u.op() == Ops::IDIV ? "(0 - " + s(0) + ")" : std::string("0"));
            e = safe ? "(" + s(0) + sym + s(1) + ")" : "(" + zero + neg1 + " : (" + s(0) + sym + s(1) + "))";
            break;
          }
          default: {
            const char* sym = uop::infix_symbol(u.op());
            if (!sym) throw InternalError("render_c", "no C rendering for " + std::string(uop::op_name(u.op())));
            e = "(" + s(0) + sym + s(1) + ")";
          }
        }
        if (uses[u.get()] > 1) {
          std::string v = "alu" + std::to_string(n_alu++);
          line("const " + ctype(u.dtype()) + " " + v + " = " + e + ";");
          e = v;
        }
        r[u.get()] = e;
      }
    }
  }
  RenderedKernel k;
  k.name = name;
  k.entry = name + "_call";
  k.source = "#include <stdint.h>\n\nvoid " + name + "(" + params + ") {\n" + body + "}\n\nvoid " + k.entry +
             "(void* const* bufs, const int64_t* vars) { " + name + "(" + unpack + "); }\n";
  return k;
}

}  // namespace tg::renderer
