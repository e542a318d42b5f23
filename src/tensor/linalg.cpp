// Linear algebra: dot, matmul (numpy semantics), linear, einsum. A matmul is a broadcast multiply and a sum
// over the shared axis; the scheduler fuses it into one kernel.
#include <algorithm>
#include <map>

#include "runtime/device.h"
#include "schedule/schedule.h"
#include "tensor/custom_grad.h"
#include "tensor/tensor_impl.h"

namespace tg {

using tensor::shape_str;

namespace {

// A CPU matmul's register block reads 32 consecutive values of each row of w per step of k, so a large w streams
// from memory 128 bytes of a row at a time; laid out in panels of kPanel columns, (N/32, K, 32), each block's part
// of w is one contiguous run that the prefetchers read whole, and the kernel still sees w's (..., K, N) shape
// through the panels' view. Only where the copy pays (w of kPackedElems or more shared by kPackRows rows or more:
// bench/compare.sh matmul 4096, ./build/bin/tg_bench matmul 4096 --m 32), not on grid devices (GPUs tile through
// local memory), not for symbolic sizes or an N that is no multiple of 32 (views the heuristic cannot pad), and only
// for a stored w: a computed one (a dequantized weight) would become a float32 copy that a TinyJit replay keeps.
constexpr int64_t kPanel = 32, kPackedElems = int64_t{1} << 19, kPackRows = 128;

Tensor packed_in_panels(const Tensor& x, const Tensor& w, bool stored_only, SourceLocation where) {
  std::vector<std::string> devices = w.devices();
  if (w.ndim() < 2 || x.ndim() < 2 || x.is_symbolic() || w.is_symbolic() ||
      (stored_only && !schedule::is_realized_form(w.uop())) ||
      std::any_of(devices.begin(), devices.end(), [](const std::string& d) { return runtime::get_device(d).caps().grid; }))
    return w;
  const Shape &xs = x.shape(), &ws = w.shape();
  int64_t k = ws[ws.size() - 2], n = ws.back();
  // the rows that share each (K, N) matrix of w: x's rows, times x's batch where w's does not vary (broadcasts)
  int64_t rows = xs[xs.size() - 2];
  size_t xb = xs.size() - 2, wb = ws.size() - 2;
  for (size_t i = 1; i <= xb; i++)
    if (i > wb || ws[wb - i] == 1) rows *= xs[xb - i];
  if (n <= kPanel || n % kPanel != 0 || k * n < kPackedElems || rows < kPackRows) return w;
  Shape batch(ws.begin(), ws.end() - 2), split = batch;
  split.insert(split.end(), {k, n / kPanel, kPanel});
  int64_t b = static_cast<int64_t>(batch.size());
  std::vector<int64_t> swap_k_panels;  // (..., K, N/32, 32) <-> (..., N/32, K, 32)
  for (int64_t i = 0; i < b; i++) swap_k_panels.push_back(i);
  swap_k_panels.insert(swap_k_panels.end(), {b + 1, b, b + 2});
  Tensor p = w.reshape(split, where).permute(swap_k_panels, where).contiguous(where);
  return p.permute(swap_k_panels, where).reshape(ws, where);
}

// x (..., M, K) @ w (..., K, N), both at least 2-d: x (..., M, 1, K) * w^T (..., 1, N, K) summed over K, w read
// from panels where that pays (`stored_only` false: a computed w too, as a gradient is: no TinyJit replay keeps it).
// A product on panels with a 2-d w differentiates as two such products (tensor::matmul_gradient): through the
// broadcast multiply, its gradients' kernels ran far slower than the product itself.
Tensor product(const Tensor& x, const Tensor& w, bool stored_only, SourceLocation where) {
  DType dt = least_upper_dtype({x.dtype(), w.dtype()});
  Tensor y = packed_in_panels(x, w, stored_only, where);
  Tensor xt = x.unsqueeze(-2, where), yt = y.transpose(-1, -2, where).unsqueeze(-3, where);
  Tensor r = tensor::exact_products(xt.cast(dt, where), yt.cast(dt, where), where).sum(-1, false, where).cast(dt, where);
  if (y.uop() != w.uop() && w.ndim() == 2 && x.dtype() == w.dtype()) r = tensor::with_gradient_rule(r, tensor::GradRule::matmul, {x, w});
  return r;
}

}  // namespace

namespace tensor {

// (the kernel converts the 16-bit values as it loads them; products rounded to 16 bits one by one have no vector
// form on a CPU: ./build/bin/tg_bench matmul 1024 --half)
Tensor exact_products(const Tensor& x, const Tensor& y, SourceLocation where) {
  auto narrow = [](DType dt) { return dt.is_half() || dt.is_fp8(); };  // products of two are exact in float32
  if (!narrow(x.dtype()) || !narrow(y.dtype())) return x.mul(y, where);
  return x.cast(dtypes::float32, where).mul(y.cast(dtypes::float32, where), where);
}

// d(x @ w) for a 2-d w (K, N): dx = g @ w^T, dw = x^T @ g over every row of x's batch
std::vector<Tensor> matmul_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>&) {
  Tensor x = source_of(u, 1), w = source_of(u, 2);
  int64_t k = w.shape()[0], n = w.shape()[1];
  Tensor dx = product(g, w.transpose(), true, SourceLocation::current());
  Tensor dw = product(x.reshape({-1, k}).transpose(), g.reshape({-1, n}), false, SourceLocation::current());
  return {Tensor(), dx, dw};
}

}  // namespace tensor

Tensor Tensor::matmul(const Tensor& w, Loc where) const try {
  std::vector<Dim> xs = sym_shape(), ws = w.sym_shape();
  if (ndim() == 0 || w.ndim() == 0)
    throw ShapeError("matmul", "needs at least 1-d operands, got " + uop::dims_str(xs) + " and " + uop::dims_str(ws), where);
  Dim k = xs.back(), kw = w.ndim() == 1 ? ws[0] : ws[ws.size() - 2];
  if (!(k == kw))
    throw ShapeError("matmul", "cannot multiply " + uop::dims_str(xs) + " by " + uop::dims_str(ws) +
                                   " (inner sizes " + k.str() + " and " + kw.str() + " differ)", where);
  if (dtype().is_bool() || w.dtype().is_bool()) throw DTypeError("matmul", "needs number tensors, not bool", where);
  // 1-d operands gain a dimension that is dropped after
  Tensor x = ndim() == 1 ? reshape({Dim(1), k}, where) : *this;
  Tensor y = w.ndim() == 1 ? w.reshape({k, Dim(1)}, where) : w;
  Tensor r = product(x, y, true, where);
  if (ndim() == 1) r = r.squeeze(-2, where);
  if (w.ndim() == 1) r = r.squeeze(-1, where);
  return r;
} catch (const Error& e) {
  tensor::rethrow_in(e, "matmul", where);
}

Tensor Tensor::dot(const Tensor& w, Loc where) const try {
  return matmul(w, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "dot", where);
}

Tensor Tensor::linear(const Tensor& weight, const std::optional<Tensor>& bias, Loc where) const try {
  Tensor r = weight.ndim() == 1 ? mul(weight, where) : matmul(weight, where);
  return bias ? r.add(*bias, where) : r;
} catch (const Error& e) {
  tensor::rethrow_in(e, "linear", where);
}

namespace {

DType checked_acc(DType acc, const char* op, SourceLocation where) {
  if (acc.is_bool()) throw DTypeError(op, "cannot accumulate in bool", where);
  return acc;
}

}  // namespace

// The operands cast to `acc` before the products: int8 * int8 summed in int32 never wraps in int8
Tensor Tensor::matmul(const Tensor& w, DType acc, Loc where) const try {
  checked_acc(acc, "matmul", where);
  return cast(acc, where).matmul(w.cast(acc, where), where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "matmul", where);
}

Tensor Tensor::dot(const Tensor& w, DType acc, Loc where) const try {
  return matmul(w, acc, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "dot", where);
}

Tensor Tensor::linear(const Tensor& weight, const std::optional<Tensor>& bias, DType acc, Loc where) const try {
  checked_acc(acc, "linear", where);
  std::optional<Tensor> b;
  if (bias) b = bias->cast(acc, where);
  return cast(acc, where).linear(weight.cast(acc, where), b, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "linear", where);
}

Tensor Tensor::einsum(const std::string& formula, const std::vector<Tensor>& operands, DType acc, Loc where) try {
  checked_acc(acc, "einsum", where);
  std::vector<Tensor> cast_operands;
  for (const Tensor& t : operands) cast_operands.push_back(t.cast(acc, where));
  return einsum(formula, cast_operands, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "einsum", where);
}

namespace {

// An ellipsis in f (no spaces) replaced by letters the formula does not use, one per dimension it stands for,
// aligned from the right across operands (numpy's broadcasting). Without "->" the output is numpy's implicit one,
// written out: the ellipsis dimensions first, then the letters used once, in alphabetical order.
std::string expand_ellipsis(const std::string& f, const std::vector<Tensor>& operands, const std::string& formula,
                            SourceLocation where) {
  size_t arrow = f.find("->");
  std::string lhs = f.substr(0, arrow), rhs = arrow == std::string::npos ? "" : f.substr(arrow + 2);
  std::vector<std::string> ins;
  for (size_t b = 0;; ) {
    size_t e = lhs.find(',', b);
    ins.push_back(lhs.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  if (ins.size() != operands.size()) return f;  // reported by einsum itself
  std::vector<int64_t> rank(ins.size(), 0);
  int64_t most = 0;
  for (size_t i = 0; i < ins.size(); i++) {
    size_t at = ins[i].find("...");
    if (at == std::string::npos) continue;
    if (ins[i].find("...", at + 3) != std::string::npos)
      throw ArgumentError("einsum", "\"" + ins[i] + "\" has more than one ellipsis", where);
    rank[i] = operands[i].ndim() - static_cast<int64_t>(ins[i].size() - 3);
    if (rank[i] < 0)
      throw ShapeError("einsum", "\"" + ins[i] + "\" has more letters than operand " + std::to_string(i) + " of shape " +
                                     shape_str(operands[i].shape()) + " has dimensions", where);
    most = std::max(most, rank[i]);
  }
  std::string fresh;
  for (char c : std::string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
    if (f.find(c) == std::string::npos && static_cast<int64_t>(fresh.size()) < most) fresh += c;
  if (static_cast<int64_t>(fresh.size()) < most)
    throw ArgumentError("einsum", "\"" + formula + "\" uses too many letters to name its ellipsis dimensions", where);
  std::string out;
  std::map<char, int> uses;
  for (size_t i = 0; i < ins.size(); i++) {
    size_t at = ins[i].find("...");
    if (at != std::string::npos) ins[i].replace(at, 3, fresh.substr(static_cast<size_t>(most - rank[i])));
    out += (i ? "," : "") + ins[i];
    for (char c : ins[i]) uses[c]++;
  }
  if (arrow != std::string::npos) {
    size_t at = rhs.find("...");
    if (at != std::string::npos) rhs.replace(at, 3, fresh);
  } else {
    rhs = fresh;
    for (auto [c, n] : uses)
      if (n == 1 && fresh.find(c) == std::string::npos) rhs += c;
  }
  return out + "->" + rhs;
}

}  // namespace

Tensor Tensor::einsum(const std::string& formula, const std::vector<Tensor>& operands, Loc where) try {
  std::string f;
  for (char c : formula)
    if (c != ' ') f += c;
  if (f.find("...") != std::string::npos) f = expand_ellipsis(f, operands, formula, where);
  size_t arrow = f.find("->");
  std::string lhs = f.substr(0, arrow);
  std::vector<std::string> ins;
  for (size_t b = 0;;) {
    size_t e = lhs.find(',', b);
    ins.push_back(lhs.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  if (ins.size() != operands.size())
    throw ArgumentError("einsum", "\"" + formula + "\" names " + std::to_string(ins.size()) + " operands, got " +
                                      std::to_string(operands.size()), where);
  std::map<char, int64_t> size, count;
  for (size_t i = 0; i < ins.size(); i++) {
    if (static_cast<int64_t>(ins[i].size()) != operands[i].ndim())
      throw ShapeError("einsum", "\"" + ins[i] + "\" has " + std::to_string(ins[i].size()) + " letters for operand " +
                                     std::to_string(i) + " of shape " + shape_str(operands[i].shape()), where);
    for (size_t d = 0; d < ins[i].size(); d++) {
      char c = ins[i][d];
      if (!std::isalpha(static_cast<unsigned char>(c))) throw ArgumentError("einsum", "bad subscript '" + std::string(1, c) + "' in \"" + formula + "\"", where);
      int64_t n = operands[i].shape()[d];
      if (size.count(c) && size[c] != n && size[c] != 1 && n != 1)
        throw ShapeError("einsum", "letter '" + std::string(1, c) + "' has sizes " + std::to_string(size[c]) + " and " + std::to_string(n), where);
      size[c] = size.count(c) ? std::max(size[c], n) : n;
      count[c]++;
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = f.substr(arrow + 2);
    for (char c : out)
      if (!size.count(c) || std::count(out.begin(), out.end(), c) > 1)
        throw ArgumentError("einsum", "output letter '" + std::string(1, c) + "' in \"" + formula + "\" is unknown or repeated", where);
  } else {
    for (auto [c, n] : count)  // implicit output: the letters used once, in alphabetical order
      if (n == 1) out += c;
  }
  std::string letters;
  for (auto [c, n] : size) letters += c;
  // every operand aligned to `letters` (size 1 where absent), multiplied, summed over the letters not in out
  Tensor prod;
  for (size_t i = 0; i < ins.size(); i++) {
    Tensor x = operands[i];
    std::string s = ins[i];
    // a letter twice in one operand is its diagonal: mask the pair and sum one of them away
    for (size_t a = 0; a < s.size(); a++)
      for (size_t b = s.size() - 1; b > a; b--)
        if (s[a] == s[b]) {
          int64_t n = x.shape()[a];
          Shape sa(x.ndim(), 1), sb(x.ndim(), 1);
          sa[a] = n, sb[b] = n;
          Tensor ar = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32, x.device(), where);
          x = (ar.reshape(sa) == ar.reshape(sb)).where(x, x.zeros_like()).sum(static_cast<int64_t>(b), false, where).cast(x.dtype());
          s.erase(b, 1);
        }
    std::vector<int64_t> order;
    Shape aligned;
    for (char c : letters) {
      size_t p = s.find(c);
      aligned.push_back(p == std::string::npos ? 1 : x.shape()[p]);
      if (p != std::string::npos) order.push_back(static_cast<int64_t>(p));
    }
    x = x.permute(order, where).reshape(aligned, where);
    prod = prod.defined() ? prod.mul(x, where) : x;
  }
  std::vector<int64_t> summed;
  for (size_t i = 0; i < letters.size(); i++)
    if (out.find(letters[i]) == std::string::npos) summed.push_back(static_cast<int64_t>(i));
  Shape full;
  for (char c : letters) full.push_back(size[c]);
  Tensor r = prod.expand(full, where);
  if (!summed.empty()) r = r.sum(summed, false, where).cast(prod.dtype(), where);
  std::string kept;
  for (char c : letters)
    if (out.find(c) != std::string::npos) kept += c;
  std::vector<int64_t> order;
  for (char c : out) order.push_back(static_cast<int64_t>(kept.find(c)));
  return r.permute(order, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "einsum", where);
}

Tensor Tensor::newton_schulz(int64_t steps, const std::vector<double>& params, double eps, Loc where) const try {
  if (ndim() < 2) throw ShapeError("newton_schulz", "needs at least 2 dimensions, got shape " + shape_str(shape()), where);
  if (steps < 0) throw ArgumentError("newton_schulz", "steps must be >= 0, got " + std::to_string(steps), where);
  if (params.empty()) throw ArgumentError("newton_schulz", "needs at least one coefficient", where);
  // a tall matrix transposed, so that G G^T is the smaller product
  if (shape()[ndim() - 2] > shape()[ndim() - 1])
    return transpose(-2, -1, where).newton_schulz(steps, params, eps, where).transpose(-2, -1, where);
  Tensor x = cast(least_upper_float(dtype()), where);
  Tensor g = x / (x.square().sum({-2, -1}, true, where).sqrt() + eps);
  for (int64_t s = 0; s < steps; s++) {
    // p0 G + (p1 A + p2 A^2 + ...) G with A = G G^T: one product with G per step
    Tensor a = g.matmul(g.transpose(-2, -1, where), where), power = a, poly;
    for (size_t i = 1; i < params.size(); i++) {
      if (i > 1) power = power.matmul(a, where);
      poly = poly.defined() ? poly + power * params[i] : power * params[i];
    }
    g = poly.defined() ? g * params[0] + poly.matmul(g, where) : g * params[0];
  }
  return g;
} catch (const Error& e) {
  tensor::rethrow_in(e, "newton_schulz", where);
}

}  // namespace tg
