// DType, Device, Context, GlobalCounters and getenv: the settings and names the rest of the package reads.
#include <memory>

#include "bindings.h"
#include "tg/context.h"
#include "tg/counters.h"
#include "tg/device.h"

namespace tgpy {

namespace {

// tinygrad's names for the C types (DType.name) and the alias its repr uses (dtypes.float for float32)
struct Names {
  tg::DType dt;
  const char *c_name, *repr_name;
  int priority;
};
const std::vector<Names>& names() {
  using namespace tg::dtypes;
  static const std::vector<Names> n = {
      {bool_, "bool", "bool", 0},          {int8, "signed char", "char", 1},     {uint8, "unsigned char", "uchar", 2},
      {int16, "short", "short", 3},        {uint16, "unsigned short", "ushort", 4}, {int32, "int", "int", 5},
      {uint32, "unsigned int", "uint", 6}, {int64, "long", "long", 7},           {uint64, "unsigned long", "ulong", 8},
      {fp8e4m3, "float8_e4m3", "fp8e4m3", 10}, {fp8e5m2, "float8_e5m2", "fp8e5m2", 11},
      {fp8e4m3fnuz, "float8_e4m3fnuz", "fp8e4m3fnuz", 10}, {fp8e5m2fnuz, "float8_e5m2fnuz", "fp8e5m2fnuz", 11},
      {float16, "half", "half", 12},       {bfloat16, "__bf16", "bfloat16", 13}, {float32, "float", "float", 14},
      {float64, "double", "double", 15}};
  return n;
}
const Names* find(tg::DType dt) {
  for (const Names& n : names())
    if (n.dt == dt.scalar()) return &n;
  return nullptr;
}

// Settings pushed by one `with Context(...)`: one tg::Context each, popped in reverse order on exit.
class PyContext {
 public:
  explicit PyContext(py::dict kw) {
    for (auto [k, v] : kw) {
      std::string name = py::str(k);
      if (PyBool_Check(v.ptr()) || PyLong_Check(v.ptr())) settings_.emplace_back(name, to_int(v, name.c_str()));
      else if (py::isinstance<py::str>(v)) settings_.emplace_back(name, v.cast<std::string>());
      else throw py::type_error("Context(" + name + "=...) takes an int or a string");
    }
  }
  void enter() {
    if (!active_.empty()) throw py::value_error("this Context is already entered");
    for (const auto& [name, value] : settings_) {
      if (std::holds_alternative<int64_t>(value)) active_.push_back(std::make_unique<tg::Context>(std::initializer_list<tg::Context::Setting>{{name, std::get<int64_t>(value)}}));
      else active_.push_back(std::make_unique<tg::Context>(std::initializer_list<tg::Context::Setting>{{name, std::get<std::string>(value)}}));
    }
  }
  void exit() {
    while (!active_.empty()) active_.pop_back();
  }

 private:
  std::vector<std::pair<std::string, std::variant<int64_t, std::string>>> settings_;
  std::vector<std::unique_ptr<tg::Context>> active_;
};

}  // namespace

py::object dtype_object(tg::DType dt);

void init_dtype(py::module_& m) {
  py::class_<tg::DType> dt(m, "DType");
  dt.def_property_readonly("name", [](const tg::DType& d) -> std::string {
      const Names* n = find(d);
      return n && d.count() == 1 && !d.is_ptr() ? n->c_name : d.name();
    })
      .def_property_readonly("itemsize", &tg::DType::itemsize)
      .def_property_readonly("bitsize", &tg::DType::bits)
      .def_property_readonly("count", &tg::DType::count)
      .def_property_readonly("priority", [](const tg::DType& d) { const Names* n = find(d); return n ? n->priority : -1; })
      .def_property_readonly("fmt", [](const tg::DType& d) -> py::object {
        std::string f = d.count() == 1 ? dtype_format(d) : "";
        return f.empty() ? py::object(py::none()) : py::object(py::str(f));
      })
      .def("vec", [](const tg::DType& d, int n) {
        if (n < 1) throw py::value_error("vec needs a width of at least 1");
        return d.vec(n);
      }, py::arg("sz"))
      .def("scalar", [](const tg::DType& d) { return dtype_object(d.scalar()); })
      .def("base", [](const tg::DType& d) { return dtype_object(d.base()); })
      .def("ptr", [](const tg::DType& d) { return d.ptr(); })
      .def_property_readonly("min", [](const tg::DType& d) -> py::object {
        tg::ConstValue v = d.min();
        return d.is_float() ? py::object(py::float_(tg::const_to_double(v))) : d.is_bool() ? py::object(py::bool_(false))
               : d.is_unsigned() ? py::object(py::int_(0)) : py::object(py::int_(tg::const_to_int(v)));
      })
      .def_property_readonly("max", [](const tg::DType& d) -> py::object {
        tg::ConstValue v = d.max();
        if (d.is_float()) return py::float_(tg::const_to_double(v));
        if (d.is_bool()) return py::bool_(true);
        if (d.is_unsigned()) return py::int_(static_cast<uint64_t>(tg::const_to_int(v)));
        return py::int_(tg::const_to_int(v));
      })
      .def("__repr__", [](const tg::DType& d) {
        const Names* n = find(d);
        if (!n || d.is_ptr()) return "dtypes." + d.name();
        std::string r = std::string("dtypes.") + n->repr_name;
        return d.count() > 1 ? r + ".vec(" + std::to_string(d.count()) + ")" : r;
      })
      .def("__eq__", [](const tg::DType& a, py::handle b) {
        return py::isinstance<tg::DType>(b) && a == b.cast<tg::DType>();
      })
      .def("__ne__", [](const tg::DType& a, py::handle b) {
        return !(py::isinstance<tg::DType>(b) && a == b.cast<tg::DType>());
      })
      .def("__lt__", [](const tg::DType& a, const tg::DType& b) {
        const Names *x = find(a), *y = find(b);
        return std::make_tuple(x ? x->priority : -1, a.bits()) < std::make_tuple(y ? y->priority : -1, b.bits());
      })
      .def("__hash__", [](const tg::DType& d) {
        return static_cast<int64_t>(d.scalar_type()) * 1000003 + d.count() * 31 + static_cast<int>(d.addr_space());
      })
      .def("__reduce__", [](const tg::DType& d) {
        return py::make_tuple(py::module_::import("tinygrad.dtype").attr("to_dtype"), py::make_tuple(find(d) ? find(d)->repr_name : d.name()));
      });
  m.def("dtype_by_name", [](const std::string& name) { return dtype_object(dtype_by_name(name)); });
  m.def("to_dtype", [](py::handle h) -> py::object {
    std::optional<tg::DType> d = to_dtype(h);
    if (!d) throw py::type_error("dtype must not be None");
    return dtype_object(*d);
  });
  m.def("least_upper_dtype", [](py::args ds) {
    if (ds.size() == 0) throw py::type_error("least_upper_dtype needs at least one dtype");
    tg::DType out = ds[0].cast<tg::DType>();
    for (size_t i = 1; i < ds.size(); i++) out = tg::least_upper_dtype({out, ds[i].cast<tg::DType>()});
    return dtype_object(out);
  });
  // tinygrad.dtype's float_to_fp8 / fp8_to_float: the core's conversions (rounded once from the Python float)
  m.def("float_to_fp8", [](double x, const tg::DType& d) {
    if (!d.is_fp8()) throw py::value_error(d.name() + " is not an 8-bit float");
    return static_cast<int>(tg::double_to_fp8_bits(x, d));
  }, py::arg("x"), py::arg("dtype"));
  m.def("fp8_to_float", [](int64_t b, const tg::DType& d) {
    if (!d.is_fp8()) throw py::value_error(d.name() + " is not an 8-bit float");
    if (b < 0 || b > 255) throw py::value_error("an 8-bit float's code is 0 to 255, not " + std::to_string(b));
    return static_cast<double>(tg::fp8_bits_to_float(static_cast<uint8_t>(b), d));
  }, py::arg("x"), py::arg("dtype"));
  m.def("truncate", [](py::handle x, const tg::DType& d) -> py::object {
    tg::ConstValue v = PyBool_Check(x.ptr()) ? tg::ConstValue{x.ptr() == Py_True}
                       : PyLong_Check(x.ptr()) ? tg::ConstValue{x.cast<int64_t>()}
                                               : tg::ConstValue{x.cast<double>()};
    tg::ConstValue c = tg::cast_const(v, d);
    if (d.is_bool()) return py::bool_(std::get<bool>(c));
    if (d.is_float()) return py::float_(std::get<double>(c));
    if (d.is_unsigned()) return py::int_(std::get<uint64_t>(c));
    return py::int_(std::get<int64_t>(c));
  }, py::arg("x"), py::arg("dtype"));
  m.def("least_upper_float", [](const tg::DType& d) { return dtype_object(tg::least_upper_float(d)); });
  m.def("all_dtypes", [] {
    py::list out;
    for (const Names& n : names()) out.append(dtype_object(n.dt));
    return out;
  });

  py::class_<PyContext>(m, "_Context")
      .def(py::init<py::dict>())
      .def("enter", &PyContext::enter)
      .def("exit", &PyContext::exit);
  m.def("getenv_int", [](const std::string& k, int64_t d) { return tg::getenv_int(k, d); }, py::arg("key"), py::arg("default") = 0);
  m.def("getenv_str", [](const std::string& k, const std::string& d) { return tg::getenv_str(k, d); }, py::arg("key"),
        py::arg("default") = "");

  py::class_<tg::Device>(m, "_Device")
      .def_property_static("DEFAULT", [](py::object) { return tg::Device::default_device(); },
                           [](py::object, const std::string& d) { tg::Device::DEFAULT = d.empty() ? d : tg::Device::canonicalize(d); })
      .def_static("canonicalize", [](py::handle d) -> py::object {
        if (d.is_none()) return py::str(tg::Device::default_device());
        return py::str(tg::Device::canonicalize(py::str(d).cast<std::string>()));
      })
      .def_static("names", &tg::Device::names);

  py::class_<tg::GlobalCounters>(m, "GlobalCounters")
      .def_property_static("kernel_count", [](py::object) { return tg::GlobalCounters::kernel_count; },
                           [](py::object, int64_t v) { tg::GlobalCounters::kernel_count = v; })
      .def_property_static("global_ops", [](py::object) { return tg::GlobalCounters::global_ops; },
                           [](py::object, int64_t v) { tg::GlobalCounters::global_ops = v; })
      .def_property_static("global_mem", [](py::object) { return tg::GlobalCounters::global_mem; },
                           [](py::object, int64_t v) { tg::GlobalCounters::global_mem = v; })
      .def_property_static("time_sum_s", [](py::object) { return tg::GlobalCounters::time_sum_s; },
                           [](py::object, double v) { tg::GlobalCounters::time_sum_s = v; })
      .def_property_static("copy_count", [](py::object) { return tg::GlobalCounters::copy_count; }, nullptr)
      .def_property_static("mem_used", [](py::object) { return tg::GlobalCounters::mem_used; }, nullptr)
      .def_property_static("mem_peak", [](py::object) { return tg::GlobalCounters::mem_peak; }, nullptr)
      .def_static("reset", &tg::GlobalCounters::reset);
}

// The one Python object of each scalar dtype, so that `t.dtype is dtypes.float32` holds as in tinygrad.
py::object dtype_object(tg::DType dt) {
  static std::vector<py::object>* cache = [] {
    auto* c = new std::vector<py::object>();  // leaked on purpose: Python objects must not be freed after finalization
    for (int i = 0; i < tg::kNumValueScalarTypes; i++) c->push_back(py::cast(tg::DType(static_cast<tg::ScalarType>(i))));
    return c;
  }();
  if (dt.count() == 1 && !dt.is_ptr() && static_cast<int>(dt.scalar_type()) < tg::kNumValueScalarTypes)
    return (*cache)[static_cast<int>(dt.scalar_type())];
  return py::cast(dt);
}

}  // namespace tgpy
