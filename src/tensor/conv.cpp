// Convolutions and pooling, built on one movement-only helper: pool() views the last dims of x as sliding
// windows, (..., o_1..o_n, k_1..k_n), without copying. conv = windows * weight summed; pools = windows reduced.
#include <algorithm>

#include "schedule/schedule.h"
#include "tensor/custom_grad.h"

namespace tg {

using tensor::shape_str;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

namespace {

// for a >= 0, b > 0 (a + b - 1 would overflow for a stride near INT64_MAX)
int64_t ceildiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

// no size or amount of a convolution or pool can be larger than a tensor: checked up front, the size math after
// stays in int64
void check_in_range(const std::vector<int64_t>& x, const char* what, const char* op, SourceLocation where) {
  for (int64_t v : x)
    if (v > tensor::kMaxElements || v < -tensor::kMaxElements)
      throw ArgumentError(op, std::string(what) + " " + tensor::list_str(x) + " is larger than any tensor", where);
}

// One value per spatial dim from an Ints that holds one value or n of them.
std::vector<int64_t> per_dim(const Ints& v, size_t n, const char* what, const char* op, SourceLocation where) {
  const auto& x = v.values();
  check_in_range(x, what, op, where);
  if (x.size() == 1) return std::vector<int64_t>(n, x[0]);
  if (x.size() != n)
    throw ArgumentError(op, std::string(what) + " " + tensor::list_str(x) + " needs 1 or " + std::to_string(n) + " values", where);
  return x;
}

// (before, after) per spatial dim from padding given as one value, one per dim, or PyTorch's flat form
// (last dim first: left, right, top, bottom, ...)
Pairs pads_of(const Ints& padding, size_t n, const char* op, SourceLocation where) {
  const auto& p = padding.values();
  Pairs out(n);
  if (p.size() == 2 * n) {
    check_in_range(p, "padding", op, where);
    for (size_t i = 0; i < n; i++) out[n - 1 - i] = {p[2 * i], p[2 * i + 1]};
  } else {
    std::vector<int64_t> v = per_dim(padding, n, "padding", op, where);
    for (size_t i = 0; i < n; i++) out[i] = {v[i], v[i]};
  }
  return out;
}

void check_positive(const std::vector<int64_t>& v, const char* what, const char* op, SourceLocation where) {
  for (int64_t x : v)
    if (x <= 0) throw ArgumentError(op, std::string(what) + " must be positive, got " + tensor::list_str(v), where);
}

std::string pads_str(const Pairs& p) {
  std::string out;
  for (const auto& [b, a] : p) out += (out.empty() ? "" : ", ") + std::to_string(b) + "/" + std::to_string(a);
  return "(" + out + ")";
}

// The windows of a convolution fit: each dilated window within the padded input, and the views pool() makes (at
// most (k, 2i + d) per spatial dim, i padded) within a tensor's limit. In 128 bits: every int64 argument is legal.
void check_windows(const Shape& in, const std::vector<int64_t>& k, const std::vector<int64_t>& d, const Pairs& p,
                   const char* op, SourceLocation where) {
  size_t n = k.size(), lead = in.size() - n;
  __int128 tiled = 1;
  for (size_t j = 0; j < lead; j++) tiled *= in[j];
  for (size_t j = 0; j < n; j++) {
    __int128 span = static_cast<__int128>(d[j]) * (k[j] - 1) + 1;
    __int128 padded = static_cast<__int128>(in[lead + j]) + p[j].first + p[j].second;
    if (span > padded)
      throw ShapeError(op, "the window (kernel " + tensor::list_str(k) + ", dilation " + tensor::list_str(d) + ") is larger than the input " +
                               shape_str(in) + " padded by " + pads_str(p), where);
    __int128 view = k[j] * (2 * padded + d[j]);
    if (tiled != 0 && (view > tensor::kMaxElements || tiled * view > tensor::kMaxElements))
      throw ShapeError(op, "the windows of input " + shape_str(in) + " padded by " + pads_str(p) + " with kernel " + tensor::list_str(k) +
                               " and dilation " + tensor::list_str(d) + " are larger than any tensor", where);
    tiled *= view;
  }
}

// Sliding windows over the k.size() dims before the last `trail`: (..., i..., t...) -> (..., o..., k..., t...),
// o = ceil((i - d(k-1)) / s). The trailing dims ride along (channels-last windows keep the channel innermost).
Tensor pool(const Tensor& x, const std::vector<int64_t>& k, const std::vector<int64_t>& s, const std::vector<int64_t>& d,
            const char* op, SourceLocation where, size_t trail = 0) {
  size_t n = k.size(), lead = x.ndim() - n - trail;
  Shape keep(x.shape().begin(), x.shape().begin() + static_cast<int64_t>(lead));
  Shape tail(x.shape().end() - static_cast<int64_t>(trail), x.shape().end());
  auto spatial = x.shape().begin() + static_cast<int64_t>(lead);
  std::vector<int64_t> i(spatial, spatial + static_cast<int64_t>(n)), o(n);
  for (size_t j = 0; j < n; j++) {
    if (static_cast<__int128>(d[j]) * (k[j] - 1) + 1 > i[j])  // in 128 bits: any positive sizes are legal arguments
      throw ShapeError(op, "the window (kernel " + tensor::list_str(k) + ", dilation " + tensor::list_str(d) + ") is larger than the input " +
                               shape_str(x.shape()), where);
    o[j] = ceildiv(i[j] - d[j] * (k[j] - 1), s[j]);
  }
  auto box = [&](const std::vector<std::pair<int64_t, int64_t>>& inner) {
    Pairs b;
    for (int64_t v : keep) b.push_back({0, v});
    b.insert(b.end(), inner.begin(), inner.end());
    for (int64_t v : tail) b.push_back({0, v});
    return b;
  };
  auto shape_with = [&](const std::vector<int64_t>& inner) {
    Shape s2 = keep;
    s2.insert(s2.end(), inner.begin(), inner.end());
    s2.insert(s2.end(), tail.begin(), tail.end());
    return s2;
  };
  // the permutation's trailing part: the t dims stay last, after 2n dims (o and k in some order)
  auto with_tail = [&](std::vector<int64_t> perm) {
    for (size_t j = 0; j < trail; j++) perm.push_back(static_cast<int64_t>(lead + 2 * n + j));
    return perm;
  };
  std::vector<int64_t> perm;
  for (size_t j = 0; j < lead; j++) perm.push_back(static_cast<int64_t>(j));
  bool simple = true;
  for (size_t j = 0; j < n; j++) simple = simple && k[j] <= s[j] && d[j] == 1;
  if (simple) {
    // windows do not overlap: cut to o*s, split each dim into (o, s), keep the first k of each s
    Pairs grow(x.ndim(), {0, 0}), cut, first_k;
    std::vector<int64_t> split;
    for (size_t j = 0; j < n; j++) {
      grow[lead + j] = {0, std::max<int64_t>(0, o[j] * s[j] - i[j])};
      cut.push_back({0, o[j] * s[j]});
      split.insert(split.end(), {o[j], s[j]});
      first_k.insert(first_k.end(), {{0, o[j]}, {0, k[j]}});
    }
    Tensor r = x.pad(grow, 0, where).shrink(box(cut), where).reshape(shape_with(split), where).shrink(box(first_k), where);
    for (size_t j = 0; j < n; j++) perm.push_back(static_cast<int64_t>(lead + 2 * j));
    for (size_t j = 0; j < n; j++) perm.push_back(static_cast<int64_t>(lead + 2 * j + 1));
    return r.permute(with_tail(perm), where);
  }
  // overlapping or dilated windows: tile each dim so that row w of a (k, L) reshape, L = i*f + d, starts at
  // element w*d (w*L = w*d mod i); then position p of row w is element p + w*d, and taking p = 0, s, 2s ...
  // gives window w of every output.
  std::vector<int64_t> reps(lead, 1), tiled, rows, cols, stride_split;
  Pairs to_rows, to_cols, first;
  for (size_t j = 0; j < n; j++) {
    int64_t f = o[j] * s[j] > i[j] + d[j] ? 2 : 1, L = i[j] * f + d[j];
    reps.push_back(ceildiv(k[j] * L, i[j]));
    to_rows.push_back({0, k[j] * L});
    rows.insert(rows.end(), {k[j], L});
    to_cols.insert(to_cols.end(), {{0, k[j]}, {0, o[j] * s[j]}});
    stride_split.insert(stride_split.end(), {k[j], o[j], s[j]});
    first.insert(first.end(), {{0, k[j]}, {0, o[j]}, {0, 1}});
    cols.insert(cols.end(), {k[j], o[j]});
  }
  reps.resize(x.ndim(), 1);
  Tensor r = x.repeat(reps, where).shrink(box(to_rows), where).reshape(shape_with(rows), where);
  r = r.shrink(box(to_cols), where).reshape(shape_with(stride_split), where).shrink(box(first), where).reshape(shape_with(cols), where);
  for (size_t j = 0; j < n; j++) perm.push_back(static_cast<int64_t>(lead + 2 * j + 1));
  for (size_t j = 0; j < n; j++) perm.push_back(static_cast<int64_t>(lead + 2 * j));
  return r.permute(with_tail(perm), where);
}

// Padding for pooling with ceil_mode: PyTorch's output size, with the last window starting inside the input or
// the left padding; the extra right padding that makes pool() produce it.
Pairs pool_pads(const Shape& in, const std::vector<int64_t>& k, const std::vector<int64_t>& s, const std::vector<int64_t>& d,
                const Pairs& pads, bool ceil_mode) {
  Pairs out = pads;
  size_t n = k.size();
  for (size_t j = 0; j < n; j++) {
    int64_t i = in[in.size() - n + j], span = d[j] * (k[j] - 1) + 1, total = i + pads[j].first + pads[j].second;
    if (!ceil_mode || total < span) continue;
    int64_t o = ceildiv(total - span, s[j]) + 1;
    if ((o - 1) * s[j] >= i + pads[j].first) o--;
    out[j].second += std::max<int64_t>(0, (o - 1) * s[j] + span - total);
  }
  return out;
}

Pairs full_pads(const Tensor& x, const Pairs& spatial) {
  Pairs p(x.ndim() - spatial.size(), {0, 0});
  p.insert(p.end(), spatial.begin(), spatial.end());
  return p;
}

// r + bias over the channels, dim 1
Tensor add_bias(const Tensor& r, const std::optional<Tensor>& bias, SourceLocation where) {
  if (!bias) return r;
  Shape bshape(r.ndim(), 1);
  bshape[1] = r.shape()[1];
  return r.add(bias->reshape(bshape, where), where);
}

// t read through a small contiguous copy laid out with dim d innermost (same shape as t)
Tensor stored_with_dim_innermost(const Tensor& t, int64_t d, SourceLocation where) {
  std::vector<int64_t> to_inner, to_outer(static_cast<size_t>(t.ndim()));
  for (int64_t j = 0; j < t.ndim(); j++)
    if (j != d) to_inner.push_back(j);
  to_inner.push_back(d);
  for (size_t j = 0; j < to_inner.size(); j++) to_outer[static_cast<size_t>(to_inner[j])] = static_cast<int64_t>(j);
  return t.permute(to_inner, where).contiguous(where).permute(to_outer, where);
}

// A conv weight (C_out, ...) read through a small copy laid out with the output channel innermost (same shape)
Tensor output_channel_innermost(const Tensor& weight, SourceLocation where) { return stored_with_dim_innermost(weight, 0, where); }

// A conv weight of kStreamedWeight elements or more that fewer than kFewPixels output pixels share (over the batch)
// is streamed from memory: stored as (C_out/32, ..., 32), each block of kChannelBlock output channels reads one
// contiguous run instead of 128 bytes of every row. The kernel then loops over blocks and a block's channels as two
// dims, which blocks its registers worse: with many pixels the conv is bound by its FMAs, hence kFewPixels. The
// constants: bench/onnx_models.sh resnet50 mobilenet_v2 (batches 1 and 8).
constexpr int64_t kChannelBlock = 32, kStreamedWeight = int64_t{1} << 18, kFewPixels = 64;
Tensor output_channel_blocks(const Tensor& weight, SourceLocation where) {
  Shape split{weight.shape()[0] / kChannelBlock, kChannelBlock};
  split.insert(split.end(), weight.shape().begin() + 1, weight.shape().end());
  return stored_with_dim_innermost(weight.reshape(split, where), 1, where);
}

// The windows of x (N, C, i...) read channels-last: x stored as (N, i..., C) (by the kernel that computes it, which
// then loops in that order: Grouping::loop_order; a realized NCHW x is copied), zero-padded by `p`, windowed
// with the channel as a trailing dim, and seen as (N, C, o..., k...). A kernel reducing them loads a vector of
// channels per window position under one gate per pixel at the padding, and stores NCHW. Over NCHW the only vector is
// a row of 4 to 56 pixels under a gate per column at the padding, or none (a stride-2 row of 13).
Tensor channels_last_windows(const Tensor& x, const std::vector<int64_t>& k, const std::vector<int64_t>& s,
                             const std::vector<int64_t>& d, const Pairs& p, const char* op, SourceLocation where) {
  int64_t n = static_cast<int64_t>(k.size());
  std::vector<int64_t> to_last{0}, c_first{0, 2 * n + 1};
  for (int64_t j = 0; j < n; j++) to_last.push_back(2 + j);
  to_last.push_back(1);
  for (int64_t j = 0; j < 2 * n; j++) c_first.push_back(1 + j);
  Pairs pads{{0, 0}};
  pads.insert(pads.end(), p.begin(), p.end());
  pads.push_back({0, 0});
  Tensor xl = x.permute(to_last, where).contiguous(where).pad(pads, 0, where);  // (N, i..., C)
  return pool(xl, k, s, d, op, where, 1).permute(c_first, where);
}

// A depthwise convolution (one input and one output channel per group: weight (C, 1, k...)) over channels-last
// windows, so that its kernel has a vector of channels (bench/onnx_models.sh mobilenet_v2).
Tensor depthwise_channels_last(const Tensor& x, const Tensor& weight, const std::vector<int64_t>& k,
                               const std::vector<int64_t>& s, const std::vector<int64_t>& d, const Pairs& p,
                               SourceLocation where) {
  int64_t n = static_cast<int64_t>(k.size()), c = weight.shape()[0];
  Tensor win = channels_last_windows(x, k, s, d, p, "conv2d", where);  // (N, C, o..., k...)
  // the weight with the channel innermost: a vector of channels per window position too
  std::vector<int64_t> summed;
  for (int64_t j = 0; j < n; j++) summed.push_back(2 + n + j);
  Shape wb{1, c};
  wb.insert(wb.end(), static_cast<size_t>(n), 1);
  wb.insert(wb.end(), k.begin(), k.end());
  Tensor w = output_channel_innermost(weight, where).reshape(wb, where);
  return tensor::exact_products(win, w, where).sum(summed, false, where).cast(win.dtype(), where);
}

}  // namespace

Tensor Tensor::conv2d(const Tensor& weight, const std::optional<Tensor>& bias, int64_t groups, Ints stride, Ints dilation,
                      Ints padding, Loc where) const try {
  if (weight.ndim() < 3 || ndim() != weight.ndim())
    throw ShapeError("conv2d", "input " + shape_str(shape()) + " and weight " + shape_str(weight.shape()) +
                                   " must be (N, C_in, spatial...) and (C_out, C_in/groups, kernel...)", where);
  size_t n = static_cast<size_t>(weight.ndim() - 2);
  int64_t cout = weight.shape()[0], cin = weight.shape()[1];
  if (groups <= 0 || shape()[1] != groups * cin || cout % groups != 0)
    throw ShapeError("conv2d", "input " + shape_str(shape()) + " has " + std::to_string(shape()[1]) + " channels; weight " +
                                   shape_str(weight.shape()) + " with groups=" + std::to_string(groups) + " expects " +
                                   std::to_string(groups * cin) + (cout % std::max<int64_t>(groups, 1) ? " and C_out divisible by groups" : ""), where);
  if (bias && (bias->ndim() != 1 || bias->shape()[0] != cout))
    throw ShapeError("conv2d", "bias " + shape_str(bias->shape()) + " must be (" + std::to_string(cout) + ",)", where);
  std::vector<int64_t> s = per_dim(stride, n, "stride", "conv2d", where), d = per_dim(dilation, n, "dilation", "conv2d", where);
  check_positive(s, "stride", "conv2d", where), check_positive(d, "dilation", "conv2d", where);
  std::vector<int64_t> k(weight.shape().begin() + 2, weight.shape().end());
  Pairs p = pads_of(padding, n, "conv2d", where);
  check_windows(shape(), k, d, p, "conv2d", where);
  // a computed input (relu(x + b), a normalized and pooled activation) is stored first: the conv reads each element
  // once per window position, and scalar math per read competes with the FMAs (./build/bin/tg_bench conv)
  bool window = std::any_of(k.begin(), k.end(), [](int64_t v) { return v > 1; });
  if (window && cin == 1 && cout == groups && groups > 1)
    return add_bias(depthwise_channels_last(*this, weight, k, s, d, p, where), bias, where);
  Tensor input = window && !schedule::is_realized_form(uop()) ? contiguous(where) : *this;
  Tensor x = input.pad(full_pads(input, p), 0, where);
  Tensor win = pool(x, k, s, d, "conv2d", where);  // (N, C, o..., k...)
  int64_t bs = shape()[0], rcout = cout / groups;
  Shape o(win.shape().begin() + 2, win.shape().begin() + 2 + static_cast<int64_t>(n));
  // the output channels: one dim, or blocks of kChannelBlock for a weight read from memory (output_channel_blocks)
  int64_t pixels = bs;
  for (int64_t v : o) pixels *= v;
  bool blocked = rcout % kChannelBlock == 0 && rcout > kChannelBlock && weight.numel() >= kStreamedWeight && pixels < kFewPixels;
  Shape channels = blocked ? Shape{rcout / kChannelBlock, kChannelBlock} : Shape{rcout};
  size_t nc = channels.size();
  // (N, g, cin, 1.., o..., k...) -> (N, g, channels..., o..., cin, k...) against weight (1, g, channels..., 1..., cin, k...)
  Shape grouped{bs, groups, cin}, spread{bs, groups, cin};
  grouped.insert(grouped.end(), nc, 1), spread.insert(spread.end(), channels.begin(), channels.end());
  for (int64_t v : o) grouped.push_back(v), spread.push_back(v);
  for (int64_t v : k) grouped.push_back(v), spread.push_back(v);
  std::vector<int64_t> perm{0, 1};
  for (size_t j = 0; j < nc + n; j++) perm.push_back(static_cast<int64_t>(3 + j));
  perm.push_back(2);
  for (size_t j = 0; j < n; j++) perm.push_back(static_cast<int64_t>(3 + nc + n + j));
  Tensor xw = win.reshape(grouped, where).expand(spread, where).permute(perm, where);
  Shape wshape{1, groups};
  wshape.insert(wshape.end(), channels.begin(), channels.end());
  wshape.insert(wshape.end(), n, 1);
  wshape.push_back(cin);
  for (int64_t v : k) wshape.push_back(v);
  std::vector<int64_t> summed;
  for (size_t j = 0; j <= n; j++) summed.push_back(static_cast<int64_t>(2 + nc + n + j));
  // the weight with the output channel innermost: the kernel can then load a vector of output channels per
  // (cin, k...) position and broadcast the input to it (codegen's VECTOR opt)
  Tensor wt = blocked ? output_channel_blocks(weight, where) : output_channel_innermost(weight, where);
  Tensor wr = wt.reshape(wshape, where);
  Tensor prod = tensor::exact_products(xw, wr, where);
  Shape out{bs, cout};
  out.insert(out.end(), o.begin(), o.end());
  Tensor r = prod.sum(summed, false, where).cast(least_upper_dtype({xw.dtype(), wr.dtype()}), where).reshape(out, where);
  // a plain stride-1 convolution differentiates as convolutions (dx a transposed one): the derivative of the window
  // gather above would write every window's gradient to an unfolded buffer and sum it back (tinygrad's way)
  bool symmetric = std::all_of(p.begin(), p.end(), [](const auto& q) { return q.first == q.second && q.first >= 0; });
  bool unit = std::all_of(s.begin(), s.end(), [](int64_t v) { return v == 1; }) && std::all_of(d.begin(), d.end(), [](int64_t v) { return v == 1; });
  if (groups == 1 && symmetric && unit && r.dtype().is_float() && !Tensor::no_grad) {
    std::vector<int64_t> per_dim_pad;
    for (const auto& q : p) per_dim_pad.push_back(q.first);
    r = tensor::with_gradient_rule(r, tensor::GradRule::conv, {input, weight}, per_dim_pad);
  } else if (!Tensor::no_grad) {
    // the gradient through the window gather: realized channels-last, so its kernels read the output gradient with
    // the channel innermost, as a vector. A gradient rule rather than contiguous_backward between two permutes: the
    // forward value stays the reduce itself, which the kernel then stores NCHW (no copy out of a permuted view)
    std::vector<int64_t> last{0};
    for (size_t j = 0; j < n; j++) last.push_back(static_cast<int64_t>(2 + j));
    last.push_back(1);
    r = tensor::with_gradient_rule(r, tensor::GradRule::stored_permuted, {r}, last);
  }
  // not made contiguous here: the bias and the activation that follow fuse into the conv kernel's store when the
  // next layer stores its input (a window conv, a pool) or the model's output is read
  return add_bias(r, bias, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "conv2d", where);
}

Tensor Tensor::conv_transpose2d(const Tensor& weight, const std::optional<Tensor>& bias, int64_t groups, Ints stride,
                                Ints dilation, Ints padding, Ints output_padding, Loc where) const try {
  if (weight.ndim() < 3 || ndim() != weight.ndim())
    throw ShapeError("conv_transpose2d", "input " + shape_str(shape()) + " and weight " + shape_str(weight.shape()) +
                                             " must be (N, C_in, spatial...) and (C_in, C_out/groups, kernel...)", where);
  size_t n = static_cast<size_t>(weight.ndim() - 2);
  if (groups <= 0 || weight.shape()[0] != shape()[1] || weight.shape()[0] % groups != 0)
    throw ShapeError("conv_transpose2d", "input " + shape_str(shape()) + " has " + std::to_string(shape()[1]) + " channels; weight " +
                                             shape_str(weight.shape()) + " with groups=" + std::to_string(groups) + " expects " +
                                             std::to_string(weight.shape()[0]), where);
  std::vector<int64_t> s = per_dim(stride, n, "stride", "conv_transpose2d", where);
  std::vector<int64_t> d = per_dim(dilation, n, "dilation", "conv_transpose2d", where);
  std::vector<int64_t> p = per_dim(padding, n, "padding", "conv_transpose2d", where);
  std::vector<int64_t> op = per_dim(output_padding, n, "output_padding", "conv_transpose2d", where);
  check_positive(s, "stride", "conv_transpose2d", where), check_positive(d, "dilation", "conv_transpose2d", where);
  for (size_t j = 0; j < n; j++)
    if (op[j] < 0 || op[j] >= std::max(s[j], d[j]))
      throw ArgumentError("conv_transpose2d", "output_padding must be smaller than stride or dilation, got " + tensor::list_str(op), where);
  // weight (cin, cout/g, k...) -> (g, cin/g, cout/g, k...) -> (cout, cin/g, k...) with the kernel flipped
  int64_t cin = weight.shape()[0], rcout = weight.shape()[1];
  std::vector<int64_t> k(weight.shape().begin() + 2, weight.shape().end()), spatial;
  for (size_t j = 0; j < n; j++)  // the input spread by the stride, and the full padding (k-1)*d, stay in int64
    if (static_cast<__int128>(shape()[2 + j]) * s[j] > tensor::kMaxElements ||
        static_cast<__int128>(k[j] - 1) * d[j] > tensor::kMaxElements)
      throw ShapeError("conv_transpose2d", "input " + shape_str(shape()) + " with stride " + tensor::list_str(s) + ", kernel " +
                                               tensor::list_str(k) + " and dilation " + tensor::list_str(d) + " is larger than any tensor", where);
  Shape wg{groups, cin / groups, rcout};
  wg.insert(wg.end(), k.begin(), k.end());
  for (size_t j = 0; j < n; j++) spatial.push_back(static_cast<int64_t>(3 + j));
  Shape wf{groups * rcout, cin / groups};
  wf.insert(wf.end(), k.begin(), k.end());
  Tensor w = weight.reshape(wg, where).transpose(1, 2, where).flip(spatial, where).reshape(wf, where);
  // the input with s-1 zeros between elements: (i) -> (i, 1) -> pad to (i, s) -> i*s, cut to (i-1)*s + 1
  Tensor x = *this;
  for (size_t j = 0; j < n; j++) {
    if (s[j] == 1) continue;
    int64_t ax = static_cast<int64_t>(2 + j), i = x.shape()[ax];
    Pairs grow(x.ndim() + 1, {0, 0}), cut;
    grow[ax + 1] = {0, s[j] - 1};
    Shape flat = x.shape();
    flat[ax] = i * s[j];
    x = x.unsqueeze(ax + 1, where).pad(grow, 0, where).reshape(flat, where);
    for (int64_t q = 0; q < x.ndim(); q++) cut.push_back({0, q == ax ? std::max<int64_t>(0, (i - 1) * s[j] + 1) : x.shape()[q]});
    x = x.shrink(cut, where);
  }
  // full padding (k-1)*d minus the user's padding on each side, plus output_padding at the end
  std::vector<int64_t> flat;
  for (size_t j = n; j-- > 0;) {
    int64_t full = (k[j] - 1) * d[j] - p[j];
    flat.insert(flat.end(), {full, full + op[j]});
  }
  return x.conv2d(w, bias, groups, 1, d, flat, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "conv_transpose2d", where);
}

namespace {

struct PoolArgs {
  std::vector<int64_t> k, s, d;
  Pairs pads;
};

PoolArgs pool_args(const Tensor& x, const Ints& kernel, const std::optional<Ints>& stride, const Ints& dilation, const Ints& padding,
                   const char* op, SourceLocation where) {
  if (kernel.values().empty()) throw ArgumentError(op, "kernel_size is empty: a pool needs at least one window dimension", where);
  size_t n = kernel.scalar() ? 2 : kernel.values().size();
  if (x.ndim() < static_cast<int64_t>(n))
    throw ShapeError(op, "input " + shape_str(x.shape()) + " has fewer dimensions than the kernel " + tensor::list_str(kernel.values()), where);
  PoolArgs a;
  a.k = per_dim(kernel, n, "kernel_size", op, where);
  a.s = stride ? per_dim(*stride, n, "stride", op, where) : a.k;
  a.d = per_dim(dilation, n, "dilation", op, where);
  check_positive(a.k, "kernel_size", op, where), check_positive(a.s, "stride", op, where), check_positive(a.d, "dilation", op, where);
  a.pads = pads_of(padding, n, op, where);
  for (size_t j = 0; j < n; j++)  // a window no tensor can hold (so that the size math below stays in int64)
    if (static_cast<__int128>(a.d[j]) * (a.k[j] - 1) + 1 > tensor::kMaxElements)
      throw ShapeError(op, "the window (kernel " + tensor::list_str(a.k) + ", dilation " + tensor::list_str(a.d) +
                               ") is larger than any input " + shape_str(x.shape()), where);
  for (size_t j = 0; j < n; j++)
    if (a.pads[j].first < 0 || a.pads[j].second < 0 ||
        2 * static_cast<__int128>(std::max(a.pads[j].first, a.pads[j].second)) > static_cast<__int128>(a.d[j]) * (a.k[j] - 1) + 1)
      throw ArgumentError(op, "padding should be at most half the window (kernel " + tensor::list_str(a.k) + ")", where);
  return a;
}

std::vector<int64_t> last_axes(size_t n) {
  std::vector<int64_t> ax;
  for (size_t j = 0; j < n; j++) ax.push_back(-static_cast<int64_t>(n - j));
  return ax;
}

}  // namespace

Tensor Tensor::avg_pool2d(Ints kernel_size, std::optional<Ints> stride, Ints dilation, Ints padding, bool ceil_mode,
                          bool count_include_pad, Loc where) const try {
  PoolArgs a = pool_args(*this, kernel_size, stride, dilation, padding, "avg_pool2d", where);
  Pairs total = pool_pads(shape(), a.k, a.s, a.d, a.pads, ceil_mode);
  Tensor x = cast(least_upper_float(dtype()), where);
  Tensor sums = pool(x.pad(full_pads(x, total), 0, where), a.k, a.s, a.d, "avg_pool2d", where).sum(last_axes(a.k.size()), false, where);
  // the divisor: how many counted elements each window covers (the user's padding counts when asked to)
  Shape spatial(shape().end() - static_cast<int64_t>(a.k.size()), shape().end());
  Tensor ones = Tensor::ones(spatial, x.dtype(), device(), where);
  if (count_include_pad) ones = ones.pad(a.pads, 1, where);
  Pairs rest = total;
  if (count_include_pad)
    for (size_t j = 0; j < rest.size(); j++) rest[j] = {0, total[j].second - a.pads[j].second};
  Tensor counts = pool(ones.pad(rest, 0, where), a.k, a.s, a.d, "avg_pool2d", where).sum(last_axes(a.k.size()), false, where);
  return sums.div(counts, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "avg_pool2d", where);
}

Tensor Tensor::max_pool2d(Ints kernel_size, std::optional<Ints> stride, Ints dilation, Ints padding, bool ceil_mode,
                          Loc where) const try {
  PoolArgs a = pool_args(*this, kernel_size, stride, dilation, padding, "max_pool2d", where);
  Pairs total = pool_pads(shape(), a.k, a.s, a.d, a.pads, ceil_mode);
  // padded with the dtype's lowest value, so padding never wins
  Tensor x = pad(full_pads(*this, total), const_to_double(dtype().min()), where);
  return pool(x, a.k, a.s, a.d, "max_pool2d", where).max(last_axes(a.k.size()), false, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "max_pool2d", where);
}

std::pair<Tensor, Tensor> Tensor::max_pool2d_with_indices(Ints kernel_size, std::optional<Ints> stride, Ints dilation, Ints padding,
                                                          bool ceil_mode, Loc where) const try {
  PoolArgs a = pool_args(*this, kernel_size, stride, dilation, padding, "max_pool2d_with_indices", where);
  Pairs total = pool_pads(shape(), a.k, a.s, a.d, a.pads, ceil_mode);
  std::vector<int64_t> axes = last_axes(a.k.size());
  Tensor windows = pool(pad(full_pads(*this, total), const_to_double(dtype().min()), where), a.k, a.s, a.d, "max_pool2d_with_indices", where);
  Tensor values = windows.max(axes, true, where);
  // each element's flat index in its plane, counted down so the max over a window's maxima is its first one
  Shape plane(shape().end() - static_cast<int64_t>(a.k.size()), shape().end());
  int64_t n = tensor::prod(plane);
  Tensor down = Tensor::arange(static_cast<double>(n), 0, -1, dtypes::int32, device(), where).reshape(plane, where);
  Tensor idx = pool(down.pad(total, 0, where), a.k, a.s, a.d, "max_pool2d_with_indices", where);
  Tensor hit = windows == values;
  if (dtype().is_float()) hit = hit | (windows.isnan() & values.isnan());  // a NaN is the maximum (its first one)
  Tensor first = hit.where(idx, 0).max(axes, false, where);
  Shape out = values.shape();
  out.resize(out.size() - a.k.size());
  return {values.reshape(out, where), first.scalar_like(static_cast<int>(n), where) - first};
} catch (const Error& e) {
  tensor::rethrow_in(e, "max_pool2d_with_indices", where);
}

Tensor Tensor::max_unpool2d(const Tensor& indices, Ints kernel_size, std::optional<Ints> stride, Ints dilation, Ints padding,
                            std::optional<Shape> output_size, Loc where) const try {
  PoolArgs a = pool_args(*this, kernel_size, stride, dilation, padding, "max_unpool2d", where);
  size_t n = a.k.size();
  if (indices.shape() != shape())
    throw ShapeError("max_unpool2d", "indices " + shape_str(indices.shape()) + " for values " + shape_str(shape()), where);
  if (!indices.dtype().is_int()) throw DTypeError("max_unpool2d", "indices must be integers, not " + indices.dtype().name(), where);
  Shape lead(shape().begin(), shape().end() - static_cast<int64_t>(n)), spatial;
  if (output_size) {
    if (output_size->size() < n)
      throw ShapeError("max_unpool2d", "output_size " + shape_str(*output_size) + " has fewer than " + std::to_string(n) + " dimensions", where);
    spatial.assign(output_size->end() - static_cast<int64_t>(n), output_size->end());
  } else {  // the input size of the pool that made this (the inverse of its output size)
    for (size_t j = 0; j < n; j++)
      spatial.push_back((shape()[lead.size() + j] - 1) * a.s[j] - a.pads[j].first - a.pads[j].second + a.d[j] * (a.k[j] - 1) + 1);
  }
  int64_t plane = tensor::prod(spatial), count = tensor::prod(Shape(shape().begin() + static_cast<int64_t>(lead.size()), shape().end()));
  Shape flat = lead, column = lead;
  flat.insert(flat.end(), {1, count}), column.insert(column.end(), {plane, 1});
  // out[p] = the pooled value whose index is p; overlapping windows can name one index twice (the same value): the
  // last one is written, as PyTorch's loop does
  Tensor slot = Tensor::arange(0, static_cast<double>(plane), 1, dtypes::int64, device(), where).reshape({plane, 1}, where);
  Tensor hit = indices.cast(dtypes::int64, where).reshape(flat, where) == slot;
  Tensor j = Tensor::arange(0, static_cast<double>(count), 1, dtypes::int32, device(), where);
  Tensor chosen = hit & (j == hit.where(j, -1).max(-1, true, where));
  Tensor r = chosen.where(reshape(flat, where), zeros_like().reshape(flat, where)).sum(-1, false, where).cast(dtype(), where);
  Shape out = lead;
  out.insert(out.end(), spatial.begin(), spatial.end());
  // each value's gradient is the output's at its index, even where two windows name one index (PyTorch's)
  return tensor::with_gradient_rule(r.reshape(out, where), tensor::GradRule::unpool, {*this, indices}, {static_cast<int64_t>(n)});
} catch (const Error& e) {
  tensor::rethrow_in(e, "max_unpool2d", where);
}

Tensor Tensor::unfold(int64_t dim, int64_t size, int64_t step, Loc where) const try {
  int64_t d = tensor::normalize_axis(dim, ndim(), "unfold", where);
  if (size < 0 || step <= 0)
    throw ArgumentError("unfold", "needs size >= 0 and step > 0, got size " + std::to_string(size) + ", step " + std::to_string(step), where);
  if (ndim() == 0) return reshape({1}, where).unfold(0, size, step, where).squeeze(0, where);  // PyTorch: a 0-d is one window
  if (size > shape()[d])
    throw ShapeError("unfold", "size " + std::to_string(size) + " is larger than dimension " + std::to_string(d) + " of " + shape_str(shape()), where);
  if (size == 0) {  // PyTorch: n + 1 empty windows, a view of none of x's elements (its gradient is x's zeros)
    Shape out = shape();
    out[d] = shape()[d] / step + 1;
    out.push_back(0);
    std::vector<std::pair<int64_t, int64_t>> none;
    for (int64_t i = 0; i < ndim(); i++) none.push_back({0, i == d ? 0 : shape()[i]});
    return shrink(none, where).reshape(out, where);
  }
  // the dim moved last, windowed (..., n) -> (..., windows, size), and the windows moved back to dim
  Tensor w = pool(transpose(d, -1, where), {size}, {step}, {1}, "unfold", where);
  return w.transpose(d, -2, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "unfold", where);
}

namespace tensor {

// out = conv(x, w), stride 1: dx = conv_transpose(g, w), dw = conv(x^T, g^T)^T
std::vector<Tensor> conv_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>& pad) {
  Tensor x = source_of(u, 1), w = source_of(u, 2);
  // both convolutions read g, each element k^2 times: computed once. Stored NCHW: the windows of a channels-last view
  // reach memory through div/mod index math (the view stack does not merge)
  Tensor gc = g.contiguous();
  Tensor dx = gc.conv_transpose2d(w, std::nullopt, 1, 1, 1, pad);
  Tensor dw = x.transpose(0, 1).conv2d(gc.transpose(0, 1), std::nullopt, 1, 1, 1, pad).transpose(0, 1);
  return {Tensor(), dx, dw};
}

// g stored in the order `perm` (contiguous there), read back in the value's order; to src 1, the value itself
std::vector<Tensor> stored_permuted_gradient(const uop::UOp&, const Tensor& g, const std::vector<int64_t>& perm) {
  std::vector<int64_t> back(perm.size());
  for (size_t i = 0; i < perm.size(); i++) back[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return {Tensor(), g.permute(perm).contiguous().permute(back)};
}

// max_unpool2d: d values = g gathered at each value's index of its output plane (the last n dims)
std::vector<Tensor> unpool_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>& n) {
  Tensor values = source_of(u, 1), indices = source_of(u, 2);
  Tensor flat_g = g.flatten(g.ndim() - n[0], -1), flat_i = indices.flatten(indices.ndim() - n[0], -1).cast(dtypes::int64);
  return {Tensor(), flat_g.gather(-1, flat_i).reshape(values.shape()), Tensor()};
}

}  // namespace tensor

}  // namespace tg
