// Shared pieces of the Python bindings (tinygrad._core): argument conversion from Python objects to the C++ API's
// types, and the init function of each area. Conversions raise TypeError/ValueError for a wrong Python value, so a
// bad call from Python is a Python exception, never a crash.
#pragma once
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "tg/tensor.h"

namespace tgpy {

namespace py = pybind11;
using tg::Tensor;

// A dtype given as a DType, a name ("float32", "half", "int"), or a numpy dtype / scalar type (its name).
// None gives nullopt; an unknown name raises AttributeError as tinygrad's getattr(dtypes, name) does.
std::optional<tg::DType> to_dtype(py::handle h);
tg::DType dtype_by_name(const std::string& name);
// None -> "" (the default device); "cpu" and the like pass through to the core (it canonicalizes); a tuple/list of
// names -> one comma-joined name (several devices).
std::string to_device(py::handle h);
// One integer (bool refused): Python int or anything with __index__.
int64_t to_int(py::handle h, const char* what);
// A shape from tinygrad's `*shape` varargs: f(2, 3), f((2, 3)) and f([2, 3]) are the same.
tg::Shape shape_from_args(const py::args& args, const char* op);
// A tuple/list of ints (or one int, as a 1-tuple when allow_int).
std::vector<int64_t> to_int_list(py::handle h, const char* what, bool allow_int = true);
// tinygrad's axis=None | int | tuple
tg::Axes to_axes(py::handle h);
// A Tensor, or a Python scalar made a weak 0-d tensor beside `like` (as tinygrad's ufix); nullopt for other types
std::optional<Tensor> to_operand(const Tensor& like, py::handle h);
// to_operand or a TypeError naming the op
Tensor operand_or_throw(const Tensor& like, py::handle h, const char* op);
// Any Python data tinygrad's Tensor() takes: scalars, (nested) lists and tuples, bytes, buffers (numpy arrays).
Tensor tensor_from_py(py::handle data, std::optional<tg::DType> dtype, const std::string& device);
// The bytes of a realized tensor as a bytearray, with the GIL released while the kernels run
py::bytearray tensor_bytes(const Tensor& t);
// The struct/memoryview format character of a dtype ("f", "e", "?" ...); bfloat16 has none (empty).
std::string dtype_format(tg::DType dt);
// The one Python object of each scalar dtype (identity comparisons hold: t.dtype is dtypes.float32).
py::object dtype_object(tg::DType dt);
// A shape as a Python tuple
py::tuple shape_tuple(const tg::Shape& s);

void init_errors(py::module_& m);
void init_dtype(py::module_& m);
void init_tensor(py::module_& m, py::class_<Tensor>& cls);
void init_tensor_ops(py::class_<Tensor>& cls);     // operators, elementwise math, reductions
void init_tensor_movement(py::class_<Tensor>& cls);  // movement and indexing
void init_tensor_nn(py::class_<Tensor>& cls);        // linear algebra, convolution, pooling, losses
// tg::Ints from an int or a tuple of ints
tg::Ints to_ints(py::handle h, const char* what);
// "mean", "sum", "none"
tg::Reduction to_reduction(const std::string& r);
std::optional<Tensor> opt_tensor(py::handle h);
void init_nn(py::module_& m);
// Symbolic sizes (symbolic.cpp): a Dim or an int as a Dim; a Dim as a Python object (an int when concrete); a
// tensor's shape with its symbolic sizes as Dims
tg::Dim to_dim(py::handle h, const char* what);
bool is_dim(py::handle h);
py::object dim_object(const tg::Dim& d);
py::tuple sym_shape_tuple(const Tensor& t);
void init_symbolic(py::module_& m);
void init_jit(py::module_& m);

}  // namespace tgpy
