// The recurrent ops: RNN, GRU and LSTM, unrolled over the sequence (its length is known from the input's shape) into
// one lazy graph, so the whole sequence realizes as a few kernels. Directions forward, reverse and bidirectional;
// layouts 0 (sequence first) and 1 (batch first); sequence_lens (a batch entry past its length keeps its state and
// gives zeros, as ONNX's reference); activations by name with their alpha/beta; clip; LSTM's peepholes and
// input_forget; GRU's linear_before_reset.
#include <functional>

#include "onnx/ops.h"
#include "tensor/helpers.h"

namespace tg::onnx {

namespace {

using Act = std::function<Tensor(const Tensor&)>;

// ONNX's activation list for recurrent ops; alpha/beta are consumed in order by the activations that take them.
std::vector<Act> activations(OpContext& c, std::vector<std::string> defaults, int64_t dirs) {
  std::vector<std::string> names = c.attr_strings("activations", std::vector<std::string>{});
  if (names.empty())
    for (int64_t d = 0; d < dirs; d++) names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() != defaults.size() * u(dirs))
    c.fail("activations needs " + std::to_string(defaults.size() * u(dirs)) + " names (" + std::to_string(defaults.size()) + " per direction), it has " + std::to_string(names.size()));
  std::vector<double> alphas = c.attr_floats("activation_alpha", std::vector<double>{}), betas = c.attr_floats("activation_beta", std::vector<double>{});
  size_t ai = 0, bi = 0;
  auto alpha = [&](double def) { return ai < alphas.size() ? alphas[ai++] : def; };
  auto beta = [&](double def) { return bi < betas.size() ? betas[bi++] : def; };
  std::vector<Act> out;
  for (const std::string& n : names) {
    std::string l;
    for (char ch : n) l += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (l == "relu") out.push_back([](const Tensor& x) { return x.relu(); });
    else if (l == "tanh") out.push_back([](const Tensor& x) { return x.tanh(); });
    else if (l == "sigmoid") out.push_back([](const Tensor& x) { return x.sigmoid(); });
    else if (l == "softsign") out.push_back([](const Tensor& x) { return x.softsign(); });
    else if (l == "softplus") out.push_back([](const Tensor& x) { return x.softplus(); });
    else if (l == "leakyrelu") { double a = alpha(0.01); out.push_back([a](const Tensor& x) { return x.leaky_relu(a); }); }
    else if (l == "thresholdedrelu") { double a = alpha(1.0); out.push_back([a](const Tensor& x) { return x.gt(x.scalar_like(a)).where(x, x.zeros_like()); }); }
    else if (l == "elu") { double a = alpha(1.0); out.push_back([a](const Tensor& x) { return x.elu(a); }); }
    else if (l == "hardsigmoid") { double a = alpha(0.2), b = beta(0.5); out.push_back([a, b](const Tensor& x) { return x.hardsigmoid(a, b); }); }
    else if (l == "affine") { double a = alpha(1.0), b = beta(0.0); out.push_back([a, b](const Tensor& x) { return x.mul(a).add(b); }); }
    else if (l == "scaledtanh") { double a = alpha(1.0), b = beta(1.0); out.push_back([a, b](const Tensor& x) { return x.mul(b).tanh().mul(a); }); }
    else c.fail("activation '" + n + "' is not one ONNX defines for recurrent ops");
  }
  return out;
}

// What the three ops share: the input as (seq, batch, input), the weights per direction, the masks of sequence_lens.
struct Recurrence {
  int64_t seq = 0, batch = 0, hidden = 0, dirs = 1, gates = 1;
  bool batch_first = false, reverse_only = false;
  std::optional<double> clip;
  Tensor x;                        // (seq, batch, input)
  std::optional<Tensor> lens;      // (batch,) int64
  std::vector<Tensor> valid;       // per step: (batch, 1) bool, when lens is given
};

Recurrence setup(OpContext& c, int64_t gates) {
  Recurrence r;
  r.gates = gates;
  std::string dir = c.attr_string("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional") c.fail("direction must be forward, reverse or bidirectional, it is '" + dir + "'");
  r.dirs = dir == "bidirectional" ? 2 : 1;
  r.reverse_only = dir == "reverse";
  r.batch_first = c.attr_int("layout", 0) != 0;
  if (c.has_attr("clip")) {
    double cl = c.attr_float("clip");
    if (!(cl > 0)) c.fail("clip must be positive");
    r.clip = cl;
  }
  Tensor x = c.in(0);
  c.need_float(x, "X");
  if (x.ndim() != 3) c.fail_shape("X must be 3-d, it is " + tensor::shape_str(x.shape()));
  r.x = r.batch_first ? x.transpose(0, 1) : x;
  r.seq = r.x.shape()[0];
  r.batch = r.x.shape()[1];
  const Tensor &w = c.in(1), &rw = c.in(2);
  int64_t in = r.x.shape()[2];
  if (w.ndim() != 3 || w.shape()[0] != r.dirs || w.shape()[1] % gates != 0 || w.shape()[2] != in)
    c.fail_shape("W must be (" + std::to_string(r.dirs) + ", " + std::to_string(gates) + "*hidden, " + std::to_string(in) + "), it is " + tensor::shape_str(w.shape()));
  r.hidden = w.shape()[1] / gates;
  if (c.has_attr("hidden_size") && c.attr_int("hidden_size") != r.hidden)
    c.fail_shape("hidden_size is " + std::to_string(c.attr_int("hidden_size")) + " but W holds " + std::to_string(r.hidden));
  if (rw.shape() != Shape{r.dirs, gates * r.hidden, r.hidden})
    c.fail_shape("R must be (" + std::to_string(r.dirs) + ", " + std::to_string(gates * r.hidden) + ", " + std::to_string(r.hidden) + "), it is " + tensor::shape_str(rw.shape()));
  if (c.has(4)) {
    Tensor l = c.in(4).cast(dtypes::int64);
    if (l.shape() != Shape{r.batch}) c.fail_shape("sequence_lens must be (" + std::to_string(r.batch) + ",), it is " + tensor::shape_str(l.shape()));
    for (int64_t v : l.to_vector<int64_t>())
      if (v < 0 || v > r.seq) c.fail("sequence_lens holds " + std::to_string(v) + ", outside [0, " + std::to_string(r.seq) + "]");
    r.lens = l;
    for (int64_t t = 0; t < r.seq; t++) r.valid.push_back(l.gt(l.scalar_like(t)).reshape({r.batch, 1}));
  }
  return r;
}

// A (dirs, n) or absent per-direction vector input, for direction d.
std::optional<Tensor> per_dir(OpContext& c, size_t i, int64_t d, int64_t n, const char* what, int64_t dirs) {
  if (!c.has(i)) return std::nullopt;
  const Tensor& v = c.in(i);
  if (v.shape() != Shape{dirs, n}) c.fail_shape(std::string(what) + " must be (" + std::to_string(dirs) + ", " + std::to_string(n) + "), it is " + tensor::shape_str(v.shape()));
  return v[{d}];
}

// The initial state input i for direction d: (batch, hidden), zeros when absent.
Tensor initial(OpContext& c, const Recurrence& r, size_t i, int64_t d, const char* what) {
  if (!c.has(i)) return Tensor::zeros({r.batch, r.hidden}, r.x.dtype(), r.x.device());
  const Tensor& h = c.in(i);
  if (h.shape() != Shape{r.dirs, r.batch, r.hidden})
    c.fail_shape(std::string(what) + " must be (" + std::to_string(r.dirs) + ", " + std::to_string(r.batch) + ", " + std::to_string(r.hidden) + "), it is " + tensor::shape_str(h.shape()));
  return h[{d}];
}

// For sequence_lens with a reverse direction: step t of batch entry b is time len[b] - 1 - t (and back again, the
// same map). Returns that index, clamped to 0 where it is negative (past the length), shaped (seq, batch, 1), and
// where it is valid.
std::pair<Tensor, Tensor> reversed_time(const Recurrence& r, const std::string& device) {
  Tensor t = Tensor::arange(0, static_cast<double>(r.seq), 1, dtypes::int64, device).reshape({r.seq, 1});
  Tensor idx = r.lens->reshape({1, r.batch}).sub(1).sub(t);
  Tensor ok = idx.ge(idx.zeros_like());
  return {ok.where(idx, idx.zeros_like()).reshape({r.seq, r.batch, 1}), ok.reshape({r.seq, r.batch, 1})};
}

// X in the order direction d reads it: reversed per batch entry within its length for the reverse direction.
Tensor ordered(const Recurrence& r, const Tensor& x, bool reverse) {
  if (!reverse) return x;
  if (!r.lens) return x.flip(0);
  Tensor idx = reversed_time(r, x.device()).first;  // steps past the length read anything: they are masked
  return x.gather(0, idx.expand({r.seq, r.batch, x.shape()[2]}));
}

// Runs `cell` over the steps of every direction; returns Y (layout-dependent) and the final states.
// cell(d, x_t, state) -> new state (state[0] is the hidden state).
std::vector<Value> unroll(const Recurrence& r, std::vector<std::vector<Tensor>> init,
                          const std::function<std::vector<Tensor>(int64_t, const Tensor&, const std::vector<Tensor>&)>& cell) {
  std::vector<Tensor> ys;
  std::vector<std::vector<Tensor>> finals;
  for (int64_t d = 0; d < r.dirs; d++) {
    bool reverse = r.reverse_only || d == 1;
    Tensor xs = ordered(r, r.x, reverse);
    std::vector<Tensor> state = init[u(d)], steps;
    for (int64_t t = 0; t < r.seq; t++) {
      std::vector<Tensor> next = cell(d, xs[{t}], state);
      if (r.lens) {
        for (size_t k = 0; k < next.size(); k++) next[k] = r.valid[u(t)].where(next[k], state[k]);
        steps.push_back(r.valid[u(t)].where(next[0], next[0].zeros_like()));
      } else {
        steps.push_back(next[0]);
      }
      state = next;
    }
    Tensor y = r.seq ? Tensor::stack(steps, 0) : Tensor::zeros({0, r.batch, r.hidden}, r.x.dtype(), r.x.device());
    if (reverse) {
      if (r.lens) {
        auto [idx, ok] = reversed_time(r, y.device());  // back to time order, zeros past the length
        y = y.gather(0, idx.expand({r.seq, r.batch, r.hidden}));
        y = ok.where(y, y.zeros_like());
      } else {
        y = y.flip(0);
      }
    }
    ys.push_back(y);
    finals.push_back(state);
  }
  Tensor y = Tensor::stack(ys, 1);  // (seq, dirs, batch, hidden)
  std::vector<Value> out;
  out.emplace_back(r.batch_first ? y.permute({2, 0, 1, 3}) : y);
  for (size_t k = 0; k < finals[0].size(); k++) {
    std::vector<Tensor> per;
    for (auto& f : finals) per.push_back(f[k]);
    Tensor s = Tensor::stack(per, 0);  // (dirs, batch, hidden)
    out.emplace_back(r.batch_first ? s.transpose(0, 1) : s);
  }
  return out;
}

// x @ W^T + h @ R^T + Wb + Rb for one direction, split into its gates.
struct Weights {
  Tensor w, r;                 // (gates*hidden, input), (gates*hidden, hidden)
  std::optional<Tensor> wb, rb;  // (gates*hidden,)
};

Weights weights(OpContext& c, const Recurrence& r, int64_t d) {
  Weights k{c.in(1)[{d}], c.in(2)[{d}], std::nullopt, std::nullopt};
  if (auto b = per_dir(c, 3, d, 2 * r.gates * r.hidden, "B", r.dirs)) {
    std::vector<Tensor> halves = b->chunk(2, 0);
    k.wb = halves[0];
    k.rb = halves[1];
  }
  return k;
}

Tensor clipped(const Recurrence& r, const Tensor& v) { return r.clip ? v.clip(-*r.clip, *r.clip) : v; }

}  // namespace

void register_rnn_ops(OpTable& t) {
  t["RNN"] = [](OpContext& c) {
    Recurrence r = setup(c, 1);
    std::vector<Act> f = activations(c, {"Tanh"}, r.dirs);
    std::vector<Weights> ws;
    std::vector<std::vector<Tensor>> init;
    for (int64_t d = 0; d < r.dirs; d++) ws.push_back(weights(c, r, d)), init.push_back({initial(c, r, 5, d, "initial_h")});
    return unroll(r, init, [&](int64_t d, const Tensor& x, const std::vector<Tensor>& s) {
      const Weights& k = ws[u(d)];
      Tensor v = x.matmul(k.w.T()).add(s[0].matmul(k.r.T()));
      if (k.wb) v = v.add(*k.wb).add(*k.rb);
      return std::vector<Tensor>{f[u(d)](clipped(r, v))};
    });
  };
  t["GRU"] = [](OpContext& c) {
    Recurrence r = setup(c, 3);
    std::vector<Act> f = activations(c, {"Sigmoid", "Tanh"}, r.dirs);
    bool linear_before_reset = c.attr_int("linear_before_reset", 0) != 0;
    std::vector<Weights> ws;
    std::vector<std::vector<Tensor>> init;
    for (int64_t d = 0; d < r.dirs; d++) ws.push_back(weights(c, r, d)), init.push_back({initial(c, r, 5, d, "initial_h")});
    return unroll(r, init, [&](int64_t d, const Tensor& x, const std::vector<Tensor>& s) {
      const Weights& k = ws[u(d)];
      const Act &sig = f[u(2 * d)], &g = f[u(2 * d + 1)];
      const Tensor& h = s[0];
      std::vector<Tensor> xw = x.matmul(k.w.T()).chunk(3, 1), wr = k.r.chunk(3, 0);  // gates z, r, h
      std::vector<Tensor> wb = k.wb ? k.wb->chunk(3, 0) : std::vector<Tensor>{}, rb = k.rb ? k.rb->chunk(3, 0) : std::vector<Tensor>{};
      auto bias = [&](Tensor v, size_t gi) { return k.wb ? v.add(wb[gi]).add(rb[gi]) : v; };
      Tensor z = sig(clipped(r, bias(xw[0].add(h.matmul(wr[0].T())), 0)));
      Tensor rs = sig(clipped(r, bias(xw[1].add(h.matmul(wr[1].T())), 1)));
      Tensor hh;
      if (linear_before_reset) {
        Tensor hr = h.matmul(wr[2].T());
        if (k.rb) hr = hr.add(rb[2]);
        hh = xw[2].add(rs.mul(hr));
        if (k.wb) hh = hh.add(wb[2]);
      } else {
        hh = bias(xw[2].add(rs.mul(h).matmul(wr[2].T())), 2);
      }
      hh = g(clipped(r, hh));
      return std::vector<Tensor>{z.scalar_like(1).sub(z).mul(hh).add(z.mul(h))};
    });
  };
  t["LSTM"] = [](OpContext& c) {
    Recurrence r = setup(c, 4);
    std::vector<Act> f = activations(c, {"Sigmoid", "Tanh", "Tanh"}, r.dirs);
    bool couple = c.attr_int("input_forget", 0) != 0;
    std::vector<Weights> ws;
    std::vector<std::optional<Tensor>> peep;
    std::vector<std::vector<Tensor>> init;
    for (int64_t d = 0; d < r.dirs; d++) {
      ws.push_back(weights(c, r, d));
      peep.push_back(per_dir(c, 7, d, 3 * r.hidden, "P", r.dirs));
      init.push_back({initial(c, r, 5, d, "initial_h"), initial(c, r, 6, d, "initial_c")});
    }
    return unroll(r, init, [&](int64_t d, const Tensor& x, const std::vector<Tensor>& s) {
      const Weights& k = ws[u(d)];
      const Act &sig = f[u(3 * d)], &g = f[u(3 * d + 1)], &h_act = f[u(3 * d + 2)];
      const Tensor &h = s[0], &cprev = s[1];
      Tensor v = x.matmul(k.w.T()).add(h.matmul(k.r.T()));
      if (k.wb) v = v.add(*k.wb).add(*k.rb);
      std::vector<Tensor> gi = v.chunk(4, 1);  // gates i, o, f, c
      std::vector<Tensor> p = peep[u(d)] ? peep[u(d)]->chunk(3, 0) : std::vector<Tensor>{};  // i, o, f
      Tensor i = sig(clipped(r, p.empty() ? gi[0] : gi[0].add(p[0].mul(cprev))));
      Tensor fg = couple ? i.scalar_like(1).sub(i) : sig(clipped(r, p.empty() ? gi[2] : gi[2].add(p[2].mul(cprev))));
      Tensor cc = g(clipped(r, gi[3]));
      Tensor cn = fg.mul(cprev).add(i.mul(cc));
      Tensor o = sig(clipped(r, p.empty() ? gi[1] : gi[1].add(p[1].mul(cn))));
      return std::vector<Tensor>{o.mul(h_act(cn)), cn};
    });
  };
}

}  // namespace tg::onnx
