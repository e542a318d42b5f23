// Matrix factorizations over the last two dims, batched over the leading ones, built from ordinary lazy ops (so
// they run on every device and gradients flow through them): qr by Householder reflections (LAPACK's geqrf
// conventions, so Q and R match PyTorch's, signs included) and svd by one-sided Jacobi rotations on QR's R,
// the pairs of each round chosen by the round-robin (circle) schedule so that a round rotates disjoint pairs at
// once.
#include <algorithm>
#include <numeric>

#include "tensor/tensor_impl.h"

namespace tg {

using tensor::shape_str;

namespace {

// x[..., :, b:e] and x[..., b:e, :]
Tensor cols(const Tensor& x, int64_t b, int64_t e) {
  std::vector<std::pair<int64_t, int64_t>> r;
  for (int64_t d : x.shape()) r.push_back({0, d});
  r.back() = {b, e};
  return x.shrink(r);
}
Tensor rows(const Tensor& x, int64_t b, int64_t e) {
  std::vector<std::pair<int64_t, int64_t>> r;
  for (int64_t d : x.shape()) r.push_back({0, d});
  r[r.size() - 2] = {b, e};
  return x.shrink(r);
}

// x padded by `before` and `after` rows (the last dim but one), zeros
Tensor pad_rows(const Tensor& x, int64_t before, int64_t after) {
  std::vector<std::pair<int64_t, int64_t>> p(static_cast<size_t>(x.ndim()), {0, 0});
  p[p.size() - 2] = {before, after};
  return x.pad(p);
}

Shape batch_of(const Tensor& x) { return Shape(x.shape().begin(), x.shape().end() - 2); }

Tensor batched_eye(const Shape& batch, int64_t n, const Tensor& like) {
  Shape s = batch;
  s.push_back(n), s.push_back(n);
  return Tensor::eye(n, n, like.dtype(), like.device()).expand(s);
}

void check_matrix(const Tensor& x, const char* op, SourceLocation where) {
  if (x.ndim() < 2) throw ShapeError(op, "needs a matrix (at least 2 dimensions), got shape " + shape_str(x.shape()), where);
  if (x.dtype().is_bool()) throw DTypeError(op, "needs a number tensor, not bool", where);
}

// A float constant (rows, cols) on x's device in x's dtype, from row-major values
Tensor constant(const std::vector<float>& v, int64_t r, int64_t c, const Tensor& like) {
  return Tensor(v, {r, c}, like.device()).cast(like.dtype());
}

}  // namespace

std::pair<Tensor, Tensor> Tensor::qr(Loc where) const try {
  check_matrix(*this, "qr", where);
  Tensor r = cast(least_upper_float(dtype()), where);
  int64_t m = shape()[ndim() - 2], n = shape()[ndim() - 1];
  Tensor q = batched_eye(batch_of(r), m, r);
  Tensor row = Tensor::arange(0, static_cast<double>(m), 1, dtypes::int32, device(), where).reshape({m, 1});
  Tensor col = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32, device(), where).reshape({1, n});
  // reflector i maps column i's rows i.. onto beta e_i; LAPACK makes none for the last row (a 1-long column)
  for (int64_t i = 0; i < std::min(m - 1, n); i++) {
    Tensor x = cols(r, i, i + 1), alpha = rows(x, i, i + 1), below = rows(x, i + 1, m);
    Tensor sigma = below.square().sum(-2, true);
    Tensor active = sigma > 0;  // else H = I (tau = 0), as LAPACK: nothing below the diagonal to remove
    Tensor safe_norm = active.where(alpha.square() + sigma, 1.0).sqrt();  // no sqrt(0) in the gradient
    Tensor beta = (alpha >= 0).where(-safe_norm, safe_norm);
    Tensor tau = active.where((beta - alpha) / beta, 0.0);
    Tensor v = pad_rows(below / active.where(alpha - beta, 1.0), i + 1, 0) + (row == i).cast(r.dtype());
    r = r - tau * v.matmul(v.transpose(-2, -1).matmul(r));
    q = q - tau * q.matmul(v).matmul(v.transpose(-2, -1));
    // Where nothing is below the diagonal, H = I keeps R's sign, and a reflection's gradient would flip it: there the
    // gradient is the smooth branch's, to first order the rotation K = k e_i^T - e_i k^T with k = below / alpha,
    // R -= K R and Q += Q K. below is 0 there, so the values do not change (without it no gradient reached the
    // entries below the diagonal: an upper-triangular input's was wrong)
    Tensor k = pad_rows(active.where(0.0, below / (alpha == 0.0).where(1.0, alpha)), i + 1, 0);
    Tensor e_i = (row == i).cast(r.dtype());
    r = r - (k.matmul(rows(r, i, i + 1)) - e_i.matmul(k.transpose(-2, -1).matmul(r)));
    q = q + (q.matmul(k).matmul(e_i.transpose(-2, -1)) - q.matmul(e_i).matmul(k.transpose(-2, -1)));
    // column i is exactly beta e_i: R stays upper triangular to the bit, as LAPACK writes it
    Tensor in_col = col == i;
    r = (in_col & (row > i)).where(0.0, (in_col & (row == i)).where(active.where(beta, alpha), r));
  }
  return {q, r};
} catch (const Error& e) {
  tensor::rethrow_in(e, "qr", where);
}

namespace {

// Pairs of columns rotated together in each round of a sweep: every pair of 0..n-1 once per sweep, the pairs of a
// round disjoint (the circle method; for odd n a dummy player sits one column out each round).
std::vector<std::vector<std::pair<int64_t, int64_t>>> round_robin(int64_t n) {
  int64_t players = n + (n % 2);
  std::vector<int64_t> seat(static_cast<size_t>(players));
  std::iota(seat.begin(), seat.end(), 0);
  std::vector<std::vector<std::pair<int64_t, int64_t>>> rounds;
  for (int64_t r = 0; r + 1 < players; r++) {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (int64_t k = 0; k < players / 2; k++) {
      int64_t a = seat[static_cast<size_t>(k)], b = seat[static_cast<size_t>(players - 1 - k)];
      if (a < n && b < n) pairs.push_back({std::min(a, b), std::max(a, b)});
    }
    rounds.push_back(pairs);
    std::rotate(seat.begin() + 1, seat.end() - 1, seat.end());  // seat 0 stays, the others move one along
  }
  return rounds;
}

// One Jacobi round: columns p_k and q_k of u rotated so that they become orthogonal, and v's likewise. The
// selections are products with 0/1 matrices (exact); c and s come from the 2x2 Gram matrix [[a, g], [g, b]].
void rotate_pairs(Tensor& u, Tensor& v, const std::vector<std::pair<int64_t, int64_t>>& pairs, int64_t n) {
  int64_t h = static_cast<int64_t>(pairs.size());
  std::vector<float> ep(static_cast<size_t>(h * n), 0.f), eq = ep, idle(static_cast<size_t>(n), 1.f);
  for (int64_t k = 0; k < h; k++) {
    ep[static_cast<size_t>(k * n + pairs[static_cast<size_t>(k)].first)] = 1;
    eq[static_cast<size_t>(k * n + pairs[static_cast<size_t>(k)].second)] = 1;
    idle[static_cast<size_t>(pairs[static_cast<size_t>(k)].first)] = idle[static_cast<size_t>(pairs[static_cast<size_t>(k)].second)] = 0;
  }
  Tensor Ep = constant(ep, h, n, u), Eq = constant(eq, h, n, u), keep = constant(idle, 1, n, u);
  Tensor Ept = Ep.transpose(0, 1), Eqt = Eq.transpose(0, 1);
  Tensor up = u.matmul(Ept), uq = u.matmul(Eqt);  // (..., n, h)
  Tensor a = up.square().sum(-2, true), b = uq.square().sum(-2, true), g2 = (up * uq).sum(-2, true) * 2.0;
  // t = tan of the angle, the smaller root of t^2 + 2 zeta t - 1 = 0 with zeta = (b - a) / 2g, in a form that never
  // overflows: through r = 1 / zeta where |zeta| >= 1, else through zeta
  Tensor d = b - a, big = d.abs() >= g2.abs();
  Tensor rr = g2 / big.where(d, 1.0), z = d / big.where(1.0, g2);
  Tensor t_big = rr / ((rr.square() + 1.0).sqrt() + 1.0);
  Tensor t_small = (z >= 0).where(1.0, -1.0) / (z.abs() + (z.square() + 1.0).sqrt());
  Tensor t = (g2 == 0).where(0.0, big.where(t_big, t_small));
  Tensor c = (t.square() + 1.0).rsqrt(), s = c * t;
  auto turn = [&](const Tensor& x) {
    Tensor xp = x.matmul(Ept), xq = x.matmul(Eqt);
    return (c * xp - s * xq).matmul(Ep) + (s * xp + c * xq).matmul(Eq) + x * keep;
  };
  u = turn(u), v = turn(v);
}

// Sweeps of the one-sided Jacobi method; it converges quadratically once the columns are nearly orthogonal
constexpr int kJacobiSweeps = 10;

}  // namespace

std::tuple<Tensor, Tensor, Tensor> Tensor::svd(bool full_matrices, Loc where) const try {
  check_matrix(*this, "svd", where);
  int64_t m = shape()[ndim() - 2], n = shape()[ndim() - 1];
  if (m < n) {  // A^T = U S Vh  ->  A = Vh^T S U^T
    auto [u, s, vh] = transpose(-2, -1, where).svd(full_matrices, where);
    return {vh.transpose(-2, -1), s, u.transpose(-2, -1)};
  }
  auto [q, r] = qr(where);
  Shape batch = batch_of(q);
  Tensor u = rows(r, 0, n), v = batched_eye(batch, n, r);  // A = Q[:, :n] R[:n]; then R V = U S
  auto rounds = round_robin(n);
  for (int sweep = 0; sweep < kJacobiSweeps; sweep++)
    for (const auto& pairs : rounds) rotate_pairs(u, v, pairs, n);
  // singular values are the column norms, largest first; the columns follow them
  Tensor norms = u.square().sum(-2).sqrt();  // (..., n)
  Tensor order = norms.detach().argsort(-1, true);
  Shape sel = batch;
  sel.push_back(n), sel.push_back(n);
  Tensor cols_order = order.unsqueeze(-2).expand(sel);
  Tensor s = norms.gather(-1, order);
  u = u.gather(-1, cols_order), v = v.gather(-1, cols_order);
  // U's columns are u's normalized; QR completes the basis where a singular value is 0 (u's column is zero there)
  auto [q2, r2] = u.qr(where);
  Tensor diag = (r2 * batched_eye(batch, n, r2)).sum(-1);
  u = q2 * (diag < 0).where(-1.0, 1.0).unsqueeze(-2);
  Tensor vh = v.transpose(-2, -1);
  if (!full_matrices) return {cols(q, 0, n).matmul(u), s, vh};
  // full U = Q diag(u, I): u in the top-left block of an identity of size m
  std::vector<std::pair<int64_t, int64_t>> p(static_cast<size_t>(u.ndim()), {0, 0});
  p[p.size() - 2] = p[p.size() - 1] = {0, m - n};
  Tensor eye_m = batched_eye(batch, m, u), block = u.pad(p) + eye_m - batched_eye(batch, n, u).pad(p);
  return {q.matmul(block), s, vh};
} catch (const Error& e) {
  tensor::rethrow_in(e, "svd", where);
}

}  // namespace tg
