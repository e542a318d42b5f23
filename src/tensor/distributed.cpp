// tg::mpi (include/tg/mpi.h): tensors combined across the processes of an MPI job, through host memory.
#include "tg/mpi.h"

#include <algorithm>

#include "runtime/mpi.h"
#include "tensor/tensor_impl.h"

namespace tg::mpi {

namespace {

void check_op(const std::string& op, Loc where) {
  if (!runtime::mpi::op_named(op)) throw ArgumentError("allreduce", "op must be sum, max or min, not '" + op + "'", where);
}

// the ranks must agree on what they combine: a header (number of dims, dtype, dims) compared by its max and min
// over the ranks
void check_same_everywhere(const std::vector<int64_t>& header, const std::string& what, const std::string& mine, Loc where) {
  std::vector<int64_t> hi = header, lo = header;
  runtime::mpi::allreduce(hi.data(), hi.size(), dtypes::int64, runtime::mpi::Op::Max, what);
  runtime::mpi::allreduce(lo.data(), lo.size(), dtypes::int64, runtime::mpi::Op::Min, what);
  if (hi == lo) return;
  auto dims = [](const std::vector<int64_t>& h) {
    std::string s = "(";
    for (int64_t i = 0; i < h[0] && i + 2 < static_cast<int64_t>(h.size()); i++) s += (i ? ", " : "") + std::to_string(h[i + 2]);
    return s + ")";
  };
  throw ArgumentError(what, "the ranks disagree: rank " + std::to_string(rank()) + " has " + mine + "; across the ranks the dims range from " +
                                dims(lo) + " to " + dims(hi),
                      where);
}

// The lazy node (an op of the graph: scheduled as an item of its own, replayed by TinyJit); its gradient, of a sum,
// is the gradient's sum over the ranks
Tensor allreduce_node(const Tensor& x, const std::string& op, Loc where) {
  return tensor::wrap(uop::UOp::make(uop::Ops::ALLREDUCE, x.dtype(), {x.uop()}, uop::Arg(op)), x.device(), where);
}

}  // namespace

bool launched() { return runtime::mpi::launched(); }
int rank() { return runtime::mpi::rank(); }
int size() { return runtime::mpi::size(); }

Tensor allreduce(const Tensor& x, const std::string& op, Loc where) {
  check_op(op, where);
  if (!launched()) return x;
  // header: ndim, dtype, dims (at most 16: a longer shape is compared by its first 16 and its element count)
  std::vector<int64_t> header{x.ndim(), static_cast<int64_t>(std::hash<std::string>{}(x.dtype().name()) & 0xffffff)};
  std::string shape = "(";
  for (size_t i = 0; i < x.shape().size(); i++) {
    if (i < 16) header.push_back(x.shape()[i]);
    shape += (i ? ", " : "") + std::to_string(x.shape()[i]);
  }
  header.resize(18, 0);
  header.push_back(x.numel());
  check_same_everywhere(header, "allreduce", "shape " + shape + ") of " + x.dtype().name(), where);
  if (!x.dtype().is_half() && !x.dtype().is_fp8()) return allreduce_node(x, op, where);
  return allreduce_node(x.cast(dtypes::float32), op, where).cast(x.dtype());
}

void allreduce_gradients(const std::vector<Tensor>& params, Loc where) {
  if (!launched()) return;
  std::vector<Tensor> grads;
  std::vector<int64_t> header;  // which parameters have a gradient, and their sizes
  for (const Tensor& p : params) {
    header.push_back(p.grad().defined() ? p.numel() : -1);
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  check_same_everywhere(header, "allreduce_gradients", std::to_string(grads.size()) + " gradients of " + std::to_string(params.size()) + " parameters", where);
  if (grads.empty()) return;
  // one flat float32 buffer per device: every gradient, one collective, then each one back in its place, all of it
  // in the graph (a TinyJit around the whole step replays the collective)
  std::vector<std::string> devices;
  for (const Tensor& g : grads)
    if (std::find(devices.begin(), devices.end(), g.device()) == devices.end()) devices.push_back(g.device());
  std::vector<Tensor> assigned;
  for (const std::string& d : devices) {
    std::vector<Tensor> flat, mine;
    for (const Tensor& g : grads)
      if (g.device() == d) flat.push_back(g.cast(dtypes::float32).flatten()), mine.push_back(g);
    Tensor mean = allreduce_node(flat.size() == 1 ? flat[0] : Tensor::cat(flat), "sum", where) / static_cast<double>(size());
    // written into each gradient's own buffer: a TinyJit that computed the gradients, or one that reads them for
    // the optimizer's step, keeps using the same buffers
    int64_t at = 0;
    for (Tensor& g : mine) {
      Tensor part = mean.shrink({{at, at + g.numel()}}).reshape(g.shape()).cast(g.dtype());
      assigned.push_back(g.assign(part, where));
      at += g.numel();
    }
  }
  Tensor::realize(assigned);
}

}  // namespace tg::mpi
