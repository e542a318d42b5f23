// Linear algebra, convolution, pooling, normalization, attention and losses with tinygrad's keyword arguments.
#include "bindings.h"

namespace tgpy {

tg::Ints to_ints(py::handle h, const char* what) {
  if (PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) return tg::Ints(to_int_list(h, what, false));
  return tg::Ints(to_int(h, what));
}

namespace {

std::optional<tg::Ints> opt_ints(py::handle h, const char* what) {
  if (h.is_none()) return std::nullopt;
  return to_ints(h, what);
}

}  // namespace

void init_tensor_nn(py::class_<Tensor>& cls) {
  cls.def("matmul", [](const Tensor& a, const Tensor& b, bool reverse, py::handle dtype) {
        std::optional<tg::DType> d = to_dtype(dtype);
        const Tensor &l = reverse ? b : a, &r = reverse ? a : b;
        return d ? l.matmul(r, *d) : l.matmul(r);
      }, py::arg("x"), py::arg("reverse") = false, py::arg("dtype") = py::none())
      .def("dot", [](const Tensor& a, const Tensor& w, py::handle dtype) {
        std::optional<tg::DType> d = to_dtype(dtype);
        return d ? a.dot(w, *d) : a.dot(w);
      }, py::arg("w"), py::arg("dtype") = py::none())
      .def("linear", [](const Tensor& x, const Tensor& w, py::handle bias, py::handle dtype) {
        std::optional<tg::DType> d = to_dtype(dtype);
        return d ? x.linear(w, opt_tensor(bias), *d) : x.linear(w, opt_tensor(bias));
      }, py::arg("weight"), py::arg("bias") = py::none(), py::arg("dtype") = py::none())
      .def_static("einsum", [](const std::string& formula, py::args operands, py::handle dtype) {
        std::vector<Tensor> ops;
        // einsum(f, a, b) and einsum(f, [a, b]) are the same
        if (operands.size() == 1 && (PyList_Check(operands[0].ptr()) || PyTuple_Check(operands[0].ptr())))
          for (py::handle h : py::reinterpret_borrow<py::sequence>(operands[0])) ops.push_back(h.cast<Tensor>());
        else
          for (py::handle h : operands) ops.push_back(h.cast<Tensor>());
        std::optional<tg::DType> d = to_dtype(dtype);
        return d ? Tensor::einsum(formula, ops, *d) : Tensor::einsum(formula, ops);
      }, py::arg("formula"), py::kw_only(), py::arg("dtype") = py::none())
      .def("conv2d", [](const Tensor& x, const Tensor& w, py::handle bias, int64_t groups, py::handle stride, py::handle dilation,
                        py::handle padding, py::handle dtype) {
        if (!dtype.is_none()) return x.conv2d(w.cast(*to_dtype(dtype)), opt_tensor(bias), groups, to_ints(stride, "stride"),
                                              to_ints(dilation, "dilation"), to_ints(padding, "padding"));
        return x.conv2d(w, opt_tensor(bias), groups, to_ints(stride, "stride"), to_ints(dilation, "dilation"), to_ints(padding, "padding"));
      }, py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1, py::arg("dilation") = 1,
         py::arg("padding") = 0, py::arg("dtype") = py::none())
      .def("conv_transpose2d", [](const Tensor& x, const Tensor& w, py::handle bias, int64_t groups, py::handle stride,
                                  py::handle dilation, py::handle padding, py::handle output_padding) {
        return x.conv_transpose2d(w, opt_tensor(bias), groups, to_ints(stride, "stride"), to_ints(dilation, "dilation"),
                                  to_ints(padding, "padding"), to_ints(output_padding, "output_padding"));
      }, py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1, py::arg("dilation") = 1,
         py::arg("padding") = 0, py::arg("output_padding") = 0)
      .def("avg_pool2d", [](const Tensor& x, py::handle k, py::handle stride, py::handle dilation, py::handle padding, bool ceil_mode,
                            bool count_include_pad) {
        return x.avg_pool2d(to_ints(k, "kernel_size"), opt_ints(stride, "stride"), to_ints(dilation, "dilation"),
                            to_ints(padding, "padding"), ceil_mode, count_include_pad);
      }, py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(), py::arg("dilation") = 1,
         py::arg("padding") = 0, py::arg("ceil_mode") = false, py::arg("count_include_pad") = true)
      .def("max_pool2d", [](const Tensor& x, py::handle k, py::handle stride, py::handle dilation, py::handle padding, bool ceil_mode,
                            bool return_indices) -> py::object {
        if (return_indices)
          return py::cast(x.max_pool2d_with_indices(to_ints(k, "kernel_size"), opt_ints(stride, "stride"), to_ints(dilation, "dilation"),
                                                    to_ints(padding, "padding"), ceil_mode));
        return py::cast(x.max_pool2d(to_ints(k, "kernel_size"), opt_ints(stride, "stride"), to_ints(dilation, "dilation"),
                                     to_ints(padding, "padding"), ceil_mode));
      }, py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(), py::arg("dilation") = 1,
         py::arg("padding") = 0, py::arg("ceil_mode") = false, py::arg("return_indices") = false)
      .def("max_unpool2d", [](const Tensor& x, const Tensor& idx, py::handle k, py::handle stride, py::handle dilation,
                              py::handle padding, py::handle output_size) {
        std::optional<tg::Shape> os;
        if (!output_size.is_none()) os = to_int_list(output_size, "output_size", false);
        return x.max_unpool2d(idx, to_ints(k, "kernel_size"), opt_ints(stride, "stride"), to_ints(dilation, "dilation"),
                              to_ints(padding, "padding"), os);
      }, py::arg("indices"), py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(), py::arg("dilation") = 1,
         py::arg("padding") = 0, py::arg("output_size") = py::none())
      .def("adaptive_avg_pool2d", [](const Tensor& x, py::handle size) { return x.adaptive_avg_pool2d(to_ints(size, "output_size")); },
           py::arg("output_size"))
      .def("interpolate", [](const Tensor& x, py::handle size, const std::string& mode, bool align_corners) {
        return x.interpolate(to_int_list(size, "size", false), mode, align_corners);
      }, py::arg("size"), py::arg("mode") = "linear", py::arg("align_corners") = false)
      .def("dropout", [](const Tensor& x, double p) {
        if (p < 0 || p > 1) throw py::value_error("dropout probability must be in [0, 1], got " + std::to_string(p));
        return x.dropout(p);
      }, py::arg("p") = 0.5)
      .def("layernorm", [](const Tensor& x, py::handle axis, double eps) { return x.layernorm(to_axes(axis), eps); },
           py::arg("axis") = -1, py::arg("eps") = 1e-5)
      .def("normalize", [](const Tensor& x, double p, int64_t dim, double eps) { return x.normalize(p, dim, eps); },
           py::arg("p") = 2.0, py::arg("dim") = 1, py::arg("eps") = 1e-12)
      .def("batchnorm", [](const Tensor& x, py::handle w, py::handle b, const Tensor& mean, const Tensor& invstd, py::handle axis) {
        return x.batchnorm(opt_tensor(w), opt_tensor(b), mean, invstd, to_axes(axis));
      }, py::arg("weight"), py::arg("bias"), py::arg("mean"), py::arg("invstd"), py::arg("axis") = 1)
      .def("scaled_dot_product_attention", [](const Tensor& q, const Tensor& k, const Tensor& v, py::handle mask, double p,
                                              bool causal, bool gqa) {
        return q.scaled_dot_product_attention(k, v, opt_tensor(mask), p, causal, gqa);
      }, py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(), py::arg("dropout_p") = 0.0,
         py::arg("is_causal") = false, py::arg("enable_gqa") = false)
      .def("sparse_categorical_crossentropy", [](const Tensor& x, const Tensor& Y, int64_t ignore_index, double ls, const std::string& r) {
        return x.sparse_categorical_crossentropy(Y, ignore_index, ls, to_reduction(r));
      }, py::arg("Y"), py::arg("ignore_index") = -1, py::arg("label_smoothing") = 0.0, py::arg("reduction") = "mean")
      .def("cross_entropy", [](const Tensor& x, const Tensor& Y, const std::string& r, double ls) {
        return x.cross_entropy(Y, to_reduction(r), ls);
      }, py::arg("Y"), py::arg("reduction") = "mean", py::arg("label_smoothing") = 0.0)
      .def("binary_crossentropy", [](const Tensor& x, const Tensor& Y, const std::string& r) {
        return x.binary_crossentropy(Y, to_reduction(r));
      }, py::arg("Y"), py::arg("reduction") = "mean")
      .def("binary_crossentropy_logits", [](const Tensor& x, const Tensor& Y, const std::string& r, py::handle pos_weight) {
        if (pos_weight.is_none()) return x.binary_crossentropy_logits(Y, to_reduction(r));
        return x.binary_crossentropy_logits(Y, pos_weight.cast<Tensor>(), to_reduction(r));
      }, py::arg("Y"), py::arg("reduction") = "mean", py::arg("pos_weight") = py::none())
      .def("nll_loss", [](const Tensor& x, const Tensor& Y, py::handle weight, py::handle ignore_index, const std::string& r) {
        int64_t ii = ignore_index.is_none() ? -100 : to_int(ignore_index, "ignore_index");
        return x.nll_loss(Y, opt_tensor(weight), ii, to_reduction(r));
      }, py::arg("Y"), py::arg("weight") = py::none(), py::arg("ignore_index") = py::none(), py::arg("reduction") = "mean")
      .def("qr", [](const Tensor& x) { return x.qr(); })
      .def("svd", [](const Tensor& x, bool full) { return x.svd(full); }, py::arg("full_matrices") = true);
}

}  // namespace tgpy
