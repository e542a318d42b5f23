// Symbolic sizes, tinygrad's Variable and sint: Variable("i", 1, 10) is a Dim that is that variable, and
// .bind(3) gives the Dim a shape can hold (x.shrink(((0, 3), (0, vi))), x[:, :vi], x.reshape(vi, 4)). A Dim
// never becomes an int by itself: .val reads a bound one's value.
#include "bindings.h"
#include "tg/dim.h"

namespace tgpy {

tg::Dim to_dim(py::handle h, const char* what) {
  if (py::isinstance<tg::Dim>(h)) return h.cast<tg::Dim>();
  return tg::Dim(to_int(h, what));
}

bool is_dim(py::handle h) { return py::isinstance<tg::Dim>(h); }

py::object dim_object(const tg::Dim& d) { return d.is_symbolic() ? py::cast(d) : py::object(py::int_(d.min())); }

py::tuple sym_shape_tuple(const Tensor& t) {
  if (!t.is_symbolic()) return shape_tuple(t.shape());
  std::vector<tg::Dim> s = t.sym_shape();
  py::tuple out(s.size());
  for (size_t i = 0; i < s.size(); i++) out[i] = dim_object(s[i]);
  return out;
}

namespace {

tg::VariableUse variable_of(const tg::Dim& d, const char* op) {
  std::optional<tg::VariableUse> u = tg::as_variable(d);
  if (!u) throw py::value_error(std::string(op) + " needs a Variable, not the expression " + d.str());
  return *u;
}

// an int operand of floor division and modulo: sizes are divided only by positive integers
int64_t divisor(py::handle h, const char* op) {
  if (is_dim(h)) throw py::type_error(std::string(op) + " of a symbolic size by another is not supported");
  return to_int(h, op);
}

}  // namespace

void init_symbolic(py::module_& m) {
  py::class_<tg::Dim> cls(m, "Dim");
  m.def("Variable", [](const std::string& name, int64_t min_val, int64_t max_val) { return tg::Variable(name, min_val, max_val).unbound(); },
        py::arg("name"), py::arg("min_val"), py::arg("max_val"));
  cls.def("bind", [](const tg::Dim& d, int64_t v) {
        tg::VariableUse u = variable_of(d, "bind");
        if (u.value) throw py::value_error(u.var.name() + " is already bound (to " + std::to_string(*u.value) + ")");
        return dim_object(u.var.bind(v));
      }, py::arg("val"))
      .def("unbind", [](const tg::Dim& d) {
        tg::VariableUse u = variable_of(d, "unbind");
        if (!u.value) throw py::value_error(u.var.name() + " is not bound");
        return py::make_tuple(u.var.unbound(), *u.value);
      })
      .def_property_readonly("expr", [](const tg::Dim& d) { return variable_of(d, "expr").var.name(); })
      .def_property_readonly("val", [](const tg::Dim& d) { return d.value(); })
      .def_property_readonly("vmin", &tg::Dim::min)
      .def_property_readonly("vmax", &tg::Dim::max)
      .def("__repr__", &tg::Dim::str)
      .def("__hash__", [](const tg::Dim& d) { return static_cast<py::ssize_t>(d.hash()); })
      .def("__eq__", [](const tg::Dim& d, py::handle o) {
        return (is_dim(o) || PyIndex_Check(o.ptr())) && !PyBool_Check(o.ptr()) && d == to_dim(o, "==");
      })
      .def("__ne__", [](const tg::Dim& d, py::handle o) {
        return !((is_dim(o) || PyIndex_Check(o.ptr())) && !PyBool_Check(o.ptr()) && d == to_dim(o, "!="));
      })
      .def("__add__", [](const tg::Dim& a, py::handle b) { return dim_object(a + to_dim(b, "+")); })
      .def("__radd__", [](const tg::Dim& a, py::handle b) { return dim_object(to_dim(b, "+") + a); })
      .def("__sub__", [](const tg::Dim& a, py::handle b) { return dim_object(a - to_dim(b, "-")); })
      .def("__rsub__", [](const tg::Dim& a, py::handle b) { return dim_object(to_dim(b, "-") - a); })
      .def("__mul__", [](const tg::Dim& a, py::handle b) { return dim_object(a * to_dim(b, "*")); })
      .def("__rmul__", [](const tg::Dim& a, py::handle b) { return dim_object(to_dim(b, "*") * a); })
      .def("__neg__", [](const tg::Dim& a) { return dim_object(-a); })
      .def("__floordiv__", [](const tg::Dim& a, py::handle b) { return dim_object(a.idiv(divisor(b, "//"))); })
      .def("__mod__", [](const tg::Dim& a, py::handle b) { return dim_object(a.mod(divisor(b, "%"))); })
      .def("__bool__", [](const tg::Dim& d) -> bool {
        throw py::type_error("the truth of the symbolic size " + d.str() + " depends on its variables");
      });
}

}  // namespace tgpy
