// Embedding and LSTMCell.
#include <cmath>

#include "nn/nn_impl.h"
#include "tensor/helpers.h"
#include "tg/nn.h"

namespace tg::nn {

Embedding::Embedding(int64_t vocab_size, int64_t embed_size) : vocab_size(vocab_size), embed_size(embed_size) {
  weight = Tensor::glorot_uniform({vocab_size, embed_size}).requires_grad_();
}

Tensor Embedding::operator()(const Tensor& idx, Loc where) const try {
  if (!idx.dtype().is_int()) throw DTypeError("Embedding", "indices must be integers, not " + idx.dtype().name(), where);
  // the table's rows by tensor indexing: its one-hot sum compiles to a read of the picked rows (fold_gathers)
  return weight.getitem({Index(idx)}, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "Embedding", where);
}

LSTMCell::LSTMCell(int64_t input_size, int64_t hidden_size, bool bias) {
  double stdv = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  weight_ih = Tensor::uniform({hidden_size * 4, input_size}, -stdv, stdv).requires_grad_();
  weight_hh = Tensor::uniform({hidden_size * 4, hidden_size}, -stdv, stdv).requires_grad_();
  if (bias) bias_ih = Tensor::zeros({hidden_size * 4}).requires_grad_(), bias_hh = Tensor::zeros({hidden_size * 4}).requires_grad_();
}

std::pair<Tensor, Tensor> LSTMCell::operator()(const Tensor& x, const std::pair<Tensor, Tensor>* hc, Loc where) const try {
  if (x.ndim() != 2 || x.shape()[1] != weight_ih.shape()[1])
    throw ShapeError("LSTMCell", "expects x of shape (batch, " + std::to_string(weight_ih.shape()[1]) + "), got " +
                                     tensor::shape_str(x.shape()), where);
  Tensor h, c;
  if (hc) h = hc->first, c = hc->second;
  else h = c = Tensor::zeros({x.shape()[0], weight_hh.shape()[1]}, x.dtype(), x.device());
  Tensor gates = x.linear(weight_ih.T(where), detail::if_defined(bias_ih), where)
                     .add(h.linear(weight_hh.T(where), detail::if_defined(bias_hh), where), where);
  std::vector<Tensor> g = gates.chunk(4, 1, where);
  Tensor new_c = g[1].sigmoid(where).mul(c, where).add(g[0].sigmoid(where).mul(g[2].tanh(where), where), where);
  Tensor new_h = g[3].sigmoid(where).mul(new_c.tanh(where), where);
  return {new_h, new_c};
} catch (const Error& e) {
  tensor::rethrow_in(e, "LSTMCell", where);
}

}  // namespace tg::nn
