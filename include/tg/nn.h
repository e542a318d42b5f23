// Neural network layers (tinygrad's nn): each holds its parameters as tensors, initialized as tinygrad's, and is
// called on a tensor. Modules list their state by name through state(), the C++ form of tinygrad's attribute walk,
// so tg::get_state_dict(model) gives "l1.weight", "layers.0.bias", ... (tg/state.h).
//
//   struct Net : tg::nn::Module {
//     tg::nn::Linear l1{784, 128}, l2{128, 10};
//     tg::Tensor operator()(const tg::Tensor& x) { return l2(l1(x).relu()); }
//     void state(const tg::nn::StateVisitor& v) override { v("l1", l1); v("l2", l2); }
//   };
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tg/tensor.h"

namespace tg::nn {

using Loc = SourceLocation;

class Module;

// Called with every state tensor of a module and its children, each under its dotted name. An undefined Tensor
// (an optional bias left out) is skipped.
class StateVisitor {
 public:
  using Fn = std::function<void(const std::string& name, Tensor& t)>;
  explicit StateVisitor(Fn f, std::string prefix = "") : f_(std::move(f)), prefix_(std::move(prefix)) {}
  void operator()(const std::string& name, Tensor& t) const {
    if (t.defined()) f_(prefix_ + name, t);
  }
  void operator()(const std::string& name, Module& child) const;  // the child's state under "name."
  template <class M> void operator()(const std::string& name, std::vector<M>& children) const {
    for (size_t i = 0; i < children.size(); i++) (*this)(name + "." + std::to_string(i), children[i]);
  }

 private:
  Fn f_;
  std::string prefix_;
};

class Module {
 public:
  virtual ~Module() = default;
  virtual void state(const StateVisitor& v) = 0;  // every tensor and child, by name, in a fixed order
};

inline void StateVisitor::operator()(const std::string& name, Module& child) const {
  child.state(StateVisitor(f_, prefix_ + name + "."));
}

// y = x @ weight.T + bias; weight (out, in) kaiming_uniform(a=sqrt(5)), bias uniform(+-1/sqrt(in)).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor operator()(const Tensor& x, Loc where = Loc::current()) const;
  void state(const StateVisitor& v) override { v("weight", weight), v("bias", bias); }
  Tensor weight, bias;
};

// Convolution over the last N dims (N = kernel_size.size(): 1 for Conv1d, 2 for Conv2d); weight
// (out, in / groups, *kernel) kaiming_uniform(a=sqrt(5)), bias uniform(+-1/sqrt(fan_in)).
class ConvNd : public Module {
 public:
  ConvNd(int64_t in_channels, int64_t out_channels, Ints kernel_size, size_t dims, Ints stride = 1, Ints padding = 0,
         Ints dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor operator()(const Tensor& x, Loc where = Loc::current()) const;
  void state(const StateVisitor& v) override { v("weight", weight), v("bias", bias); }
  Tensor weight, bias;
  Ints stride, padding, dilation;
  int64_t groups;
};
struct Conv1d : ConvNd {
  Conv1d(int64_t in, int64_t out, int64_t kernel_size, int64_t stride = 1, int64_t padding = 0, int64_t dilation = 1,
         int64_t groups = 1, bool bias = true)
      : ConvNd(in, out, kernel_size, 1, stride, padding, dilation, groups, bias) {}
};
struct Conv2d : ConvNd {
  Conv2d(int64_t in, int64_t out, Ints kernel_size, Ints stride = 1, Ints padding = 0, Ints dilation = 1,
         int64_t groups = 1, bool bias = true)
      : ConvNd(in, out, std::move(kernel_size), 2, std::move(stride), std::move(padding), std::move(dilation), groups, bias) {}
};

// Transposed convolution; weight (in, out / groups, *kernel), initialized as ConvNd's.
class ConvTransposeNd : public Module {
 public:
  ConvTransposeNd(int64_t in_channels, int64_t out_channels, Ints kernel_size, size_t dims, Ints stride = 1,
                  Ints padding = 0, Ints output_padding = 0, Ints dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor operator()(const Tensor& x, Loc where = Loc::current()) const;
  void state(const StateVisitor& v) override { v("weight", weight), v("bias", bias); }
  Tensor weight, bias;
  Ints stride, padding, output_padding, dilation;
  int64_t groups;
};
struct ConvTranspose1d : ConvTransposeNd {
  ConvTranspose1d(int64_t in, int64_t out, int64_t kernel_size, int64_t stride = 1, int64_t padding = 0,
                  int64_t output_padding = 0, int64_t dilation = 1, int64_t groups = 1, bool bias = true)
      : ConvTransposeNd(in, out, kernel_size, 1, stride, padding, output_padding, dilation, groups, bias) {}
};
struct ConvTranspose2d : ConvTransposeNd {
  ConvTranspose2d(int64_t in, int64_t out, Ints kernel_size, Ints stride = 1, Ints padding = 0, Ints output_padding = 0,
                  Ints dilation = 1, int64_t groups = 1, bool bias = true)
      : ConvTransposeNd(in, out, std::move(kernel_size), 2, std::move(stride), std::move(padding), std::move(output_padding),
                        std::move(dilation), groups, bias) {}
};

// Batch normalization over dim 1 (BatchNorm1d/2d/3d alike). Training (tg::TrainGuard): normalizes with the batch's
// statistics and updates running_mean / running_var (unbiased) with `momentum` (lazily: they realize with the next
// optimizer step or realize()); eval: the running statistics.
class BatchNorm : public Module {
 public:
  explicit BatchNorm(int64_t num_features, double eps = 1e-5, bool affine = true, bool track_running_stats = true,
                     double momentum = 0.1);
  Tensor operator()(const Tensor& x, Loc where = Loc::current());
  void state(const StateVisitor& v) override;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;
  double eps, momentum;
  bool track_running_stats;
};
using BatchNorm1d = BatchNorm;
using BatchNorm2d = BatchNorm;

// Normalizes over the last normalized_shape.size() dims, then weight * x + bias.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  Tensor operator()(const Tensor& x, Loc where = Loc::current()) const;
  void state(const StateVisitor& v) override { v("weight", weight), v("bias", bias); }
  Tensor weight, bias;
  Shape normalized_shape;
  double eps;
};
// LayerNorm over the channels of an NCHW tensor.
struct LayerNorm2d : LayerNorm {
  explicit LayerNorm2d(int64_t channels, double eps = 1e-5, bool elementwise_affine = true)
      : LayerNorm({channels}, eps, elementwise_affine) {}
  Tensor operator()(const Tensor& x, Loc where = Loc::current()) const;
};

// x / sqrt(mean(x^2, last dim) + eps) * weight.
class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6, bool elementwise_affine = true);
  Tensor operator()(const Tensor& x, Loc where = Loc::current()) const;
  void state(const StateVisitor& v) override { v("weight", weight); }
  Tensor weight;
  double eps;
};

// Normalizes each of num_groups channel groups over its channels and spatial dims; per-channel weight and bias.
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor operator()(const Tensor& x, Loc where = Loc::current()) const;
  void state(const StateVisitor& v) override { v("weight", weight), v("bias", bias); }
  Tensor weight, bias;
  int64_t num_groups;
  double eps;
};

// Normalizes each channel of each sample over its spatial dims.
class InstanceNorm : public Module {
 public:
  explicit InstanceNorm(int64_t num_features, double eps = 1e-5, bool affine = true);
  Tensor operator()(const Tensor& x, Loc where = Loc::current()) const;
  void state(const StateVisitor& v) override { v("weight", weight), v("bias", bias); }
  Tensor weight, bias;
  double eps;
};

// Rows of weight (vocab_size, embed_size), glorot_uniform, picked by integer indices of any shape (as weight[idx]:
// negative ones count from the end, ones out of range give zeros).
class Embedding : public Module {
 public:
  Embedding(int64_t vocab_size, int64_t embed_size);
  Tensor operator()(const Tensor& idx, Loc where = Loc::current()) const;
  void state(const StateVisitor& v) override { v("weight", weight); }
  Tensor weight;
  int64_t vocab_size, embed_size;
};

// One LSTM step: (h, c) from x (batch, input_size) and the previous (h, c) (zeros when not given). Gates i, f, g, o
// in PyTorch's order; weights uniform(+-1/sqrt(hidden_size)), biases zeros (tinygrad's).
class LSTMCell : public Module {
 public:
  LSTMCell(int64_t input_size, int64_t hidden_size, bool bias = true);
  std::pair<Tensor, Tensor> operator()(const Tensor& x, const std::pair<Tensor, Tensor>* hc = nullptr,
                                       Loc where = Loc::current()) const;
  void state(const StateVisitor& v) override { v("weight_ih", weight_ih), v("weight_hh", weight_hh), v("bias_ih", bias_ih), v("bias_hh", bias_hh); }
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;
};

// Zeroes elements with probability p under tg::TrainGuard (scaling the rest by 1 / (1 - p)); the identity otherwise.
class Dropout {
 public:
  explicit Dropout(double p = 0.5) : p(p) {}
  Tensor operator()(const Tensor& x, Loc where = Loc::current()) const { return x.dropout(p, where); }
  double p;
};

}  // namespace tg::nn
