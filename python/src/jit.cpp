// TinyJit's core (tg::JitFunction): a function from a list of tensors to a list of tensors, run, captured and
// replayed. tinygrad/engine/jit.py turns a Python function of any arguments into that form.
#include "bindings.h"
#include "tg/jit.h"

namespace tgpy {

void init_jit(py::module_& m) {
  py::class_<tg::JitFunction>(m, "_JitFunction")
      .def(py::init([](py::function fn) {
        // the core calls back with this call's inputs (realized) and bound variables; the Python function returns
        // the output tensors
        return new tg::JitFunction([fn](const std::vector<Tensor>& inputs, const std::vector<tg::Dim>& vars) {
          py::gil_scoped_acquire acquire;
          py::list vs;
          for (const tg::Dim& v : vars) vs.append(dim_object(v));
          py::object out = fn(inputs, vs);
          return out.cast<std::vector<Tensor>>();
        });
      }), py::arg("fn"))
      // kernels run (and, while capturing, compile) without the GIL; the Python function takes it back
      .def("__call__", [](tg::JitFunction& j, const std::vector<Tensor>& inputs, const std::vector<tg::Dim>& vars) {
        return j.call(inputs, vars);
      }, py::arg("inputs"), py::arg("vars"), py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("captured", &tg::JitFunction::captured)
      .def_property_readonly("kernel_count", &tg::JitFunction::kernel_count)
      .def("export_c", [](const tg::JitFunction& j, const std::string& c, const std::string& w) { j.export_c(c, w); }, py::arg("c_path"),
           py::arg("weights_path"))
      .def("reset", &tg::JitFunction::reset);
}

}  // namespace tgpy
