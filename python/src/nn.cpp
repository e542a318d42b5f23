// The optimizers (tinygrad.nn.optim builds SGD, Adam, AdamW, LARS, LAMB on these), state-dict files
// (tinygrad.nn.state) and the MNIST reader (tinygrad.nn.datasets).
#include "bindings.h"
#include "tg/datasets.h"
#include "tg/optim.h"
#include "tg/state.h"

namespace tgpy {

void init_nn(py::module_& m) {
  using tg::optim::LAMB;
  using tg::optim::LARS;
  using tg::optim::Optimizer;
  py::class_<Optimizer>(m, "_Optimizer")
      .def("zero_grad", &Optimizer::zero_grad)
      .def("step", [](Optimizer& o) {
        py::gil_scoped_release release;
        o.step();
      })
      .def("schedule_step", &Optimizer::schedule_step)
      .def_readwrite("lr", &Optimizer::lr)
      .def_readonly("params", &Optimizer::params)
      .def_readonly("buffers", &Optimizer::buffers);
  py::class_<LARS, Optimizer>(m, "_LARS")
      .def(py::init([](const std::vector<Tensor>& params, double lr, double momentum, double weight_decay, bool nesterov, bool classic,
                       double tcoef, int ns_steps) {
             return new LARS(params, lr, momentum, weight_decay, nesterov, classic, tcoef, ns_steps);
           }),
           py::arg("params"), py::arg("lr"), py::arg("momentum"), py::arg("weight_decay"), py::arg("nesterov"), py::arg("classic"),
           py::arg("tcoef"), py::arg("ns_steps") = 0)
      .def_readwrite("ns_coefficients", &LARS::ns_coefficients)
      .def_readwrite("decoupled_wd", &LARS::decoupled_wd)
      .def_readonly("b", &LARS::b);
  py::class_<LAMB, Optimizer>(m, "_LAMB")
      .def(py::init([](const std::vector<Tensor>& params, double lr, double b1, double b2, double eps, double weight_decay, bool adam) {
             return new LAMB(params, lr, b1, b2, eps, weight_decay, adam);
           }),
           py::arg("params"), py::arg("lr"), py::arg("b1"), py::arg("b2"), py::arg("eps"), py::arg("weight_decay"), py::arg("adam"))
      .def_readonly("m", &LAMB::m)
      .def_readonly("v", &LAMB::v)
      .def_readonly("b1_t", &LAMB::b1_t)
      .def_readonly("b2_t", &LAMB::b2_t);

  m.def("safe_save", [](const std::map<std::string, Tensor>& d, const std::string& path, const std::map<std::string, std::string>& meta) {
    py::gil_scoped_release release;
    tg::safe_save(d, path, meta);
  }, py::arg("tensors"), py::arg("fn"), py::arg("metadata"));
  m.def("safe_load", [](const std::string& path, const std::string& device) { return tg::safe_load(path, device); }, py::arg("fn"),
        py::arg("device") = "");
  m.def("safe_load_metadata", [](const std::string& path) { return tg::safe_load_metadata(path); }, py::arg("fn"));
  m.def("torch_load", [](const std::string& path, const std::string& device) { return tg::torch_load(path, device); }, py::arg("fn"),
        py::arg("device") = "");
  m.def("load_npy", [](const std::string& path, const std::string& device) { return tg::load_npy(path, device); }, py::arg("fn"),
        py::arg("device") = "");
  m.def("mnist", [](const std::string& dir) {
    tg::datasets::MNIST d = tg::datasets::mnist(dir);
    return py::make_tuple(d.X_train, d.Y_train, d.X_test, d.Y_test);
  }, py::arg("dir") = "");
  m.attr("FASHION_MNIST_DIR") = tg::datasets::kFashionMnistDir;
}

}  // namespace tgpy
