// tg::Error -> Python exceptions. tinygrad raises RuntimeError for most bad ops, IndexError for an axis or index out
// of range and ValueError or TypeError for some arguments; code in the wild catches any of them. Each kind of ours is
// a class that derives from the builtins tinygrad uses for it (ShapeError is a RuntimeError and a ValueError), so an
// `except` written for tinygrad catches ours. The message names the op without the C++ file:line: Python's
// traceback points at the user's line.
#include "bindings.h"

#include <chrono>

#include "tg/error.h"
#include "tg/interrupt.h"

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

// Ctrl-C during a long realize (run with the GIL released): Python's handler only notes the signal, so the core asks
// between kernels. Taking the GIL can wait for another busy Python thread, so it is asked at most every 20 ms, and
// only on the main thread, where Python runs its signal handlers.
unsigned long main_thread_ident = 0;  // threading.main_thread().ident, read at import

void check_signals() {
  if (PyThread_get_thread_ident() != main_thread_ident) return;
  using Clock = std::chrono::steady_clock;
  thread_local Clock::time_point next{};
  Clock::time_point now = Clock::now();
  if (now < next) return;
  next = now + std::chrono::milliseconds(20);
  if (!Py_IsInitialized() || _Py_IsFinalizing()) return;
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // the handler's exception: KeyboardInterrupt
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
  main_thread_ident = py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  tg::set_interrupt_check(check_signals);
  // the check must not call into an interpreter that is shutting down
  py::module_::import("atexit").attr("register")(py::cpp_function([] { tg::set_interrupt_check(nullptr); }));
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
