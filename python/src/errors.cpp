// tg::Error -> Python exceptions. tinygrad raises RuntimeError for most bad ops, IndexError for an axis or index out
// of range and ValueError or TypeError for some arguments; code in the wild catches any of them. Each kind of ours is
// a class that derives from the builtins tinygrad uses for it (ShapeError is a RuntimeError and a ValueError), so an
// `except` written for tinygrad catches ours. The message names the op without the C++ file:line: Python's
// traceback points at the user's line.
#include "bindings.h"

#include "tg/error.h"

namespace tgpy {

namespace {

PyObject* make_class(py::module_& m, const char* name, std::initializer_list<PyObject*> bases, const char* doc) {
  py::tuple b(bases.size());
  size_t i = 0;
  for (PyObject* base : bases) b[i++] = py::reinterpret_borrow<py::object>(base);
  std::string full = std::string("tinygrad.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(full.c_str(), doc, b.ptr(), nullptr);
  if (!cls) throw py::error_already_set();
  m.add_object(name, py::reinterpret_borrow<py::object>(cls));
  return cls;
}

PyObject *shape_error, *dtype_error, *argument_error, *index_error, *compile_error, *device_error, *internal_error;

// an axis, index or dimension out of range: Python's IndexError
bool is_index_message(const std::string& msg) {
  for (const char* s : {"out of range", "out of bounds", "too many indices", "single ellipsis", "does not match the indexed tensor"})
    if (msg.find(s) != std::string::npos) return true;
  return false;
}

}  // namespace

void init_errors(py::module_& m) {
  shape_error = make_class(m, "ShapeError", {PyExc_RuntimeError, PyExc_ValueError}, "shapes that do not fit the op");
  dtype_error = make_class(m, "DTypeError", {PyExc_RuntimeError, PyExc_TypeError}, "a dtype the op does not accept");
  argument_error = make_class(m, "ArgumentError", {PyExc_RuntimeError, PyExc_ValueError}, "a bad argument");
  index_error = make_class(m, "IndexOutOfRange", {PyExc_IndexError, PyExc_RuntimeError}, "an axis or index out of range");
  compile_error = make_class(m, "CompileError", {PyExc_RuntimeError}, "a generated kernel failed to compile");
  device_error = make_class(m, "DeviceError", {PyExc_RuntimeError}, "the device failed (allocation, launch, copy)");
  internal_error = make_class(m, "InternalError", {PyExc_RuntimeError}, "a bug in tinygrad.cpp");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tg::Error& e) {
      std::string msg = e.op().empty() ? e.message() : e.op() + ": " + e.message();
      PyObject* cls = internal_error;
      switch (e.kind()) {
        case tg::ErrorKind::Shape: cls = is_index_message(e.message()) ? index_error : shape_error; break;
        case tg::ErrorKind::DType: cls = dtype_error; break;
        case tg::ErrorKind::Argument: cls = is_index_message(e.message()) ? index_error : argument_error; break;
        case tg::ErrorKind::Compile: cls = compile_error; break;
        case tg::ErrorKind::Device: cls = device_error; break;
        case tg::ErrorKind::Internal: cls = internal_error; break;
      }
      PyErr_SetString(cls, msg.c_str());
    }
  });
}

}  // namespace tgpy
