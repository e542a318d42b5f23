// tinygrad._core: the C++ core of tinygrad.cpp as a Python extension. The pure-Python package (python/tinygrad)
// gives it tinygrad's module layout and the signatures that are easier to spell in Python.
#include "bindings.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "tinygrad.cpp's C++ core (lazy tensors, autograd, fused generated kernels)";
  tgpy::init_errors(m);
  tgpy::init_dtype(m);
  tgpy::init_symbolic(m);
  pybind11::class_<tg::Tensor> cls(m, "Tensor", pybind11::dynamic_attr());
  tgpy::init_tensor(m, cls);
  tgpy::init_tensor_ops(cls);
  tgpy::init_nn(m);
  tgpy::init_jit(m);
}
