// The Tensor class: construction from Python data, properties, autograd, realizing and reading values, and the
// static creation functions in their plain C++ form (tinygrad/tensor.py adds the `*shape, **kwargs` signatures).
#include <sstream>

#include "bindings.h"
#include "tg/device.h"

namespace tgpy {

py::tuple shape_tuple(const tg::Shape& s) {
  py::tuple t(s.size());
  for (size_t i = 0; i < s.size(); i++) t[i] = py::int_(s[i]);
  return t;
}

namespace {

// A Python scalar of a one-element tensor's value: int, float or bool as tinygrad's item()
py::object item_of(const Tensor& t) {
  if (t.numel() != 1)
    throw py::value_error("item() needs a tensor with one element, not shape " + py::str(shape_tuple(t.shape())).cast<std::string>());
  tg::DType dt = t.dtype();
  py::gil_scoped_release release;
  if (dt.is_float()) {
    double v = t.cast(tg::dtypes::float64).item<double>();
    py::gil_scoped_acquire acquire;
    return py::float_(v);
  }
  if (dt.is_bool()) {
    bool v = t.item<bool>();
    py::gil_scoped_acquire acquire;
    return py::bool_(v);
  }
  if (dt == tg::dtypes::uint64) {
    uint64_t v = t.item<uint64_t>();
    py::gil_scoped_acquire acquire;
    return py::int_(v);
  }
  int64_t v = t.cast(tg::dtypes::int64).item<int64_t>();
  py::gil_scoped_acquire acquire;
  return py::int_(v);
}

}  // namespace

std::optional<Tensor> opt_tensor(py::handle h) {
  if (h.is_none()) return std::nullopt;
  if (!py::isinstance<Tensor>(h)) throw py::type_error("expected a Tensor or None");
  return h.cast<Tensor>();
}

namespace {
tg::DType dt_or(py::handle h, tg::DType d) { return to_dtype(h).value_or(d); }

}  // namespace

void init_tensor(py::module_& m, py::class_<Tensor>& cls) {
  cls.def(py::init([](py::handle data, py::handle device, py::handle dtype) {
            return tensor_from_py(data, to_dtype(dtype), to_device(device));
          }),
          py::arg("data") = py::none(), py::arg("device") = py::none(), py::arg("dtype") = py::none());

  // ---- properties ----
  cls.def_property_readonly("shape", [](const Tensor& t) { return sym_shape_tuple(t); })
      .def_property_readonly("dtype", [](const Tensor& t) { return dtype_object(t.dtype()); })
      .def_property_readonly("device", [](const Tensor& t) -> py::object {
        std::vector<std::string> devs = t.devices();
        if (devs.size() == 1) return py::str(devs[0]);
        py::tuple out(devs.size());
        for (size_t i = 0; i < devs.size(); i++) out[i] = py::str(devs[i]);
        return out;
      })
      .def_property_readonly("ndim", &Tensor::ndim)
      .def("numel", &Tensor::numel)
      .def("element_size", &Tensor::element_size)
      .def("nbytes", &Tensor::nbytes)
      .def("is_floating_point", &Tensor::is_floating_point)
      .def("size", [](const Tensor& t, py::handle dim) -> py::object {
        py::tuple s = sym_shape_tuple(t);
        if (dim.is_none()) return s;
        int64_t d = to_int(dim, "dim");
        if (d < -t.ndim() || d >= t.ndim())
          throw py::index_error("dim " + std::to_string(d) + " is out of range for " + std::to_string(t.ndim()) + " dimensions");
        return s[static_cast<size_t>(d < 0 ? d + t.ndim() : d)];
      }, py::arg("dim") = py::none())
      .def("__len__", [](const Tensor& t) {
        if (t.ndim() == 0) throw py::type_error("len() of a 0-d tensor");
        return t.sym_shape()[0].concrete("len");
      })
      .def("__hash__", [](py::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); })  // identity, as tinygrad
      // tinygrad's: `if t:` and `t in [...]` are mistakes; t.item() says which value is meant
      .def("__bool__", [](const Tensor&) -> bool { throw py::type_error("__bool__ on Tensor is not defined"); })
      .def("__repr__", [](const Tensor& t) {
        std::ostringstream s;
        s << "<Tensor " << (t.is_realized() ? "realized " : "") << "shape=" << py::str(sym_shape_tuple(t)).cast<std::string>()
          << " dtype=" << py::repr(dtype_object(t.dtype())).cast<std::string>() << " on " << t.device()
          << " with grad " << (t.grad().defined() ? "set" : "None") << ">";
        return s.str();
      });

  // ---- autograd: requires_grad's three states (None, False, True) live in tinygrad/tensor.py ----
  cls.def_property_readonly("_requires_grad", &Tensor::requires_grad)
      .def("_set_requires_grad", [](Tensor& t, bool on) { t.requires_grad_(on); })
      .def_property("grad", [](const Tensor& t) -> py::object {
        Tensor g = t.grad();
        return g.defined() ? py::cast(g) : py::none();
      }, [](Tensor& t, py::handle g) {
        if (g.is_none()) return void(t.zero_grad());
        Tensor gt = operand_or_throw(t, g, "grad");
        if (gt.shape() != t.shape())
          throw py::value_error("grad shape must match tensor shape, " + py::str(shape_tuple(gt.shape())).cast<std::string>() +
                                " != " + py::str(shape_tuple(t.shape())).cast<std::string>());
        t.set_grad(gt);
      })
      // tinygrad's: every live float tensor in the graph gets its .grad, not only those that require one
      .def("backward", [](Tensor& t, py::handle gradient) -> Tensor& {
        std::optional<Tensor> g;
        if (!gradient.is_none()) g = operand_or_throw(t, gradient, "backward");
        return t.backward_all(g);
      }, py::arg("gradient") = py::none(), py::return_value_policy::reference_internal)
      .def("gradient", [](const Tensor& t, py::args targets, py::handle gradient) {
        std::vector<Tensor> ts;
        for (py::handle h : targets) ts.push_back(h.cast<Tensor>());
        std::optional<Tensor> g;
        if (!gradient.is_none()) g = operand_or_throw(t, gradient, "gradient");
        return t.gradient(ts, g);
      }, py::kw_only(), py::arg("gradient") = py::none())
      .def("detach", [](const Tensor& t) { return t.detach(); })
      .def("contiguous", [](const Tensor& t) { return t.contiguous(); })
      .def("contiguous_backward", [](const Tensor& t) { return t.contiguous_backward(); })
      .def("clone", [](const Tensor& t, py::handle device) {
        Tensor c = t.clone();
        return device.is_none() ? c : c.to(to_device(device));
      }, py::arg("device") = py::none());

  // ---- realizing, reading, writing ----
  cls.def("realize", [](py::object self, py::args others) {
        std::vector<Tensor> ts{self.cast<Tensor>()};
        for (py::handle h : others) ts.push_back(h.cast<Tensor>());
        py::gil_scoped_release release;
        Tensor::realize(ts);
        return self;
      })
      .def_static("realize_all", [](const std::vector<Tensor>& ts) {
        py::gil_scoped_release release;
        Tensor::realize(ts);
      })
      .def("is_realized", &Tensor::is_realized)
      .def("_bytes", [](const Tensor& t) { return tensor_bytes(t); })
      .def("item", &item_of)
      .def("assign", [](py::object self, py::handle x) {
        Tensor& t = self.cast<Tensor&>();
        Tensor v = operand_or_throw(t, x, "assign");
        if (v.shape() != t.shape() && v.numel() == 1) v = v.reshape(tg::Shape{}).expand(t.shape());  // a scalar fills
        t.assign(v);
        return self;
      }, py::arg("x"))
      // this Python object becomes a handle to x (tinygrad's to_ and shard_, which change the device in place)
      .def("_become", [](py::object self, const Tensor& x) {
        self.cast<Tensor&>() = x;
        return self;
      }, py::arg("x"))
      .def("replace", [](py::object self, const Tensor& x) {
        self.cast<Tensor&>().replace(x);
        return self;
      }, py::arg("x"))
      .def("to", [](const Tensor& t, py::handle device) {
        if (device.is_none()) return t;
        if (PyTuple_Check(device.ptr()) || PyList_Check(device.ptr())) {  // several devices: a copy on each
          std::vector<std::string> devs;
          for (py::handle d : py::reinterpret_borrow<py::sequence>(device)) devs.push_back(to_device(d));
          return t.to(devs);
        }
        return t.to(to_device(device));
      }, py::arg("device"))
      .def("shard", [](const Tensor& t, std::vector<std::string> devices, py::handle axis) {
        std::optional<int64_t> a;
        if (!axis.is_none()) a = to_int(axis, "axis");
        return t.shard(devices, a);
      }, py::arg("devices"), py::arg("axis") = py::none());

  // ---- modes: class attributes, as tinygrad's Tensor.training and Tensor.no_grad ----
  cls.def_property_static("training", [](py::object) { return Tensor::training; },
                          [](py::object, bool v) { Tensor::training = v; })
      .def_property_static("no_grad", [](py::object) { return Tensor::no_grad; },
                           [](py::object, bool v) { Tensor::no_grad = v; });

  // ---- creation, plain forms: tinygrad/tensor.py wraps them in tinygrad's signatures ----
  cls.def_static("_empty", [](const tg::Shape& s, py::handle dt, py::handle dev) {
        return Tensor::empty(s, dt_or(dt, tg::dtypes::default_float()), to_device(dev));
      })
      .def_static("_full", [](const tg::Shape& s, py::handle value, py::handle dt, py::handle dev) {
        // the fill value's kind gives the dtype when none is given (full(..., 3) is int32, as tinygrad's)
        Tensor v = tensor_from_py(value, to_dtype(dt), to_device(dev));
        if (v.ndim() != 0) throw py::type_error("full's fill_value must be a scalar");
        return v.reshape(tg::Shape(s.size(), 1)).expand(s).contiguous();
      })
      .def_static("_const", [](const tg::Shape& s, py::handle value, py::handle dt, py::handle dev) {
        Tensor v = tensor_from_py(value, to_dtype(dt), to_device(dev));
        if (v.ndim() != 0) throw py::type_error("fill_value must be a scalar");
        return v.reshape(tg::Shape(s.size(), 1)).expand(s);
      })
      .def_static("_arange", [](double start, double stop, double step, py::handle dt, py::handle dev) {
        return Tensor::arange(start, stop, step, to_dtype(dt), to_device(dev));
      })
      .def_static("_rand", [](const tg::Shape& s, py::handle dt, py::handle dev) {
        return Tensor::rand(s, dt_or(dt, tg::dtypes::default_float()), to_device(dev));
      })
      .def_static("_randn", [](const tg::Shape& s, py::handle dt, py::handle dev) {
        return Tensor::randn(s, dt_or(dt, tg::dtypes::default_float()), to_device(dev));
      })
      .def_static("_randint", [](const tg::Shape& s, int64_t low, int64_t high, py::handle dt, py::handle dev) {
        return Tensor::randint(s, low, high, dt_or(dt, tg::dtypes::int32), to_device(dev));
      })
      .def_static("_normal", [](const tg::Shape& s, double mean, double std, py::handle dt, py::handle dev) {
        return Tensor::normal(s, mean, std, dt_or(dt, tg::dtypes::default_float()), to_device(dev));
      })
      .def_static("_uniform", [](const tg::Shape& s, double low, double high, py::handle dt, py::handle dev) {
        return Tensor::uniform(s, low, high, dt_or(dt, tg::dtypes::default_float()), to_device(dev));
      })
      .def_static("_init", [](const std::string& kind, const tg::Shape& s, double a, py::handle dt, py::handle dev) {
        tg::DType d = dt_or(dt, tg::dtypes::default_float());
        std::string device = to_device(dev);
        if (kind == "scaled_uniform") return Tensor::scaled_uniform(s, d, device);
        if (kind == "glorot_uniform") return Tensor::glorot_uniform(s, d, device);
        if (kind == "kaiming_uniform") return Tensor::kaiming_uniform(s, a, d, device);
        if (kind == "kaiming_normal") return Tensor::kaiming_normal(s, a, d, device);
        throw py::value_error("unknown initialization " + kind);
      })
      .def_static("_eye", [](int64_t n, int64_t m, py::handle dt, py::handle dev) {
        return Tensor::eye(n, m, dt_or(dt, tg::dtypes::default_float()), to_device(dev));
      })
      .def_static("_linspace", [](double start, double stop, int64_t steps, py::handle dt, py::handle dev) {
        return Tensor::linspace(start, stop, steps, dt_or(dt, tg::dtypes::default_float()), to_device(dev));
      })
      .def_static("_randperm", [](int64_t n, py::handle dt, py::handle dev) {
        return Tensor::randperm(n, dt_or(dt, tg::dtypes::int32), to_device(dev));
      })
      .def_static("from_blob", [](uintptr_t ptr, py::handle shape, py::handle dtype, py::handle device) {
        if (ptr == 0) throw py::value_error("from_blob needs a non-null pointer");
        return Tensor::from_blob(reinterpret_cast<void*>(ptr), to_int_list(shape, "shape"), dt_or(dtype, tg::dtypes::float32),
                                 to_device(device));
      }, py::arg("ptr"), py::arg("shape"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none())
      .def_static("manual_seed", [](int64_t seed) { Tensor::manual_seed(static_cast<uint64_t>(seed)); }, py::arg("seed") = 0)
      .def("multinomial", [](const Tensor& t, int64_t n, bool replacement) { return t.multinomial(n, replacement); },
           py::arg("num_samples") = 1, py::arg("replacement") = false);
  (void)m;

}

}  // namespace tgpy
