// tg::mpi (include/tg/mpi.h): tensors combined across the processes of an MPI job, through host memory.
#include "tg/mpi.h"

#include <algorithm>
#include <cstring>

#include "runtime/mpi.h"

namespace tg::mpi {

namespace {

runtime::mpi::Op parse_op(const std::string& op, Loc where) {
  if (op == "sum") return runtime::mpi::Op::Sum;
  if (op == "max") return runtime::mpi::Op::Max;
  if (op == "min") return runtime::mpi::Op::Min;
  throw ArgumentError("allreduce", "op must be sum, max or min, not '" + op + "'", where);
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

// host data copied into a tensor of its own on `device` (realized: the host memory may go)
Tensor host_copy(void* data, const Shape& shape, DType dt, const std::string& device, Loc where) {
  return Tensor::from_blob(data, shape, dt, "CPU", where).clone().to(device).realize();
}

}  // namespace

bool launched() { return runtime::mpi::launched(); }
int rank() { return runtime::mpi::rank(); }
int size() { return runtime::mpi::size(); }

Tensor allreduce(const Tensor& x, const std::string& op, Loc where) {
  runtime::mpi::Op o = parse_op(op, where);
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
  bool half = x.dtype().is_half();
  Tensor wide = half ? x.cast(dtypes::float32) : x;
  std::vector<uint8_t> bytes = wide.to_bytes();
  runtime::mpi::allreduce(bytes.data(), static_cast<size_t>(wide.numel()), wide.dtype(), o, "allreduce");
  Tensor out = host_copy(bytes.data(), x.shape(), wide.dtype(), x.device(), where);
  return half ? out.cast(x.dtype()) : out;
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
  // one flat float32 buffer: every gradient, one collective, then each one back in its place
  Tensor::realize(grads);
  std::vector<Tensor> flat;
  for (const Tensor& g : grads) flat.push_back(g.cast(dtypes::float32).flatten().to("CPU"));
  std::vector<float> all = Tensor::cat(flat).to_vector<float>();
  runtime::mpi::allreduce(all.data(), all.size(), dtypes::float32, runtime::mpi::Op::Sum, "allreduce_gradients");
  float n = static_cast<float>(size());
  for (float& v : all) v /= n;
  // written into each gradient's own buffer: a TinyJit that computed the gradients, or one that reads them for the
  // optimizer's step, keeps using the same buffers
  size_t at = 0;
  for (Tensor& g : grads) {
    Tensor mean = host_copy(all.data() + at, g.shape(), dtypes::float32, g.device(), where);
    g.assign(mean.cast(g.dtype()), where).realize();
    at += static_cast<size_t>(g.numel());
  }
}

}  // namespace tg::mpi
