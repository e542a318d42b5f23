// TinyJit's core (tg::JitFunction): a function from a list of tensors to a list of tensors, run, captured and
// replayed. tinygrad/engine/jit.py turns a Python function of any arguments into that form.
#include "bindings.h"
#include "tg/jit.h"

namespace tgpy {

void init_jit(py::module_& m) {
  py::class_<tg::JitFunction>(m, "_JitFunction")
      .def(py::init([](py::function fn) {
        // the core calls back with this call's inputs (realized); the Python function returns the output tensors
        return new tg::JitFunction([fn](const std::vector<Tensor>& inputs) {
          py::gil_scoped_acquire acquire;
          py::object out = fn(inputs);
          return out.cast<std::vector<Tensor>>();
        });
      }), py::arg("fn"))
      // kernels run (and, while capturing, compile) without the GIL; the Python function takes it back
      .def("__call__", [](tg::JitFunction& j, const std::vector<Tensor>& inputs) { return j.call(inputs); }, py::arg("inputs"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("captured", &tg::JitFunction::captured)
      .def_property_readonly("kernel_count", &tg::JitFunction::kernel_count)
      .def("export_c", [](const tg::JitFunction& j, const std::string& c, const std::string& w) { j.export_c(c, w); }, py::arg("c_path"),
           py::arg("weights_path"))
      .def("reset", &tg::JitFunction::reset);
}

}  // namespace tgpy
