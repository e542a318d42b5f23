// Python values -> the C++ API's argument types, and Python data (scalars, nested lists, bytes, buffers such as
// numpy arrays) -> tensors. Every wrong value raises a Python TypeError or ValueError here, before the core sees it.
#include <algorithm>
#include <cctype>
#include <cstring>

#include "bindings.h"
#include "tg/device.h"

namespace tgpy {

namespace {

bool is_bool(py::handle h) { return PyBool_Check(h.ptr()); }
bool is_int(py::handle h) { return PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr()); }
bool is_float(py::handle h) { return PyFloat_Check(h.ptr()); }

std::string type_name(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")); }

}  // namespace

int64_t to_int(py::handle h, const char* what) {
  if (is_bool(h) || is_float(h) || !PyIndex_Check(h.ptr()))
    throw py::type_error(std::string(what) + " must be an int, not " + type_name(h));
  PyObject* idx = PyNumber_Index(h.ptr());
  if (!idx) throw py::error_already_set();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
  Py_DECREF(idx);
  if (overflow) throw py::value_error(std::string(what) + " does not fit in 64 bits");
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

std::vector<int64_t> to_int_list(py::handle h, const char* what, bool allow_int) {
  if (allow_int && !PyList_Check(h.ptr()) && !PyTuple_Check(h.ptr())) return {to_int(h, what)};
  if (!PyList_Check(h.ptr()) && !PyTuple_Check(h.ptr()))
    throw py::type_error(std::string(what) + " must be a tuple or list of ints, not " + type_name(h));
  std::vector<int64_t> out;
  for (py::handle x : py::reinterpret_borrow<py::sequence>(h)) out.push_back(to_int(x, what));
  return out;
}

tg::Shape shape_from_args(const py::args& args, const char* op) {
  if (args.size() == 1 && (PyList_Check(args[0].ptr()) || PyTuple_Check(args[0].ptr())))
    return to_int_list(args[0], op, false);
  tg::Shape s;
  for (py::handle x : args) s.push_back(to_int(x, op));
  return s;
}

tg::Axes to_axes(py::handle h) {
  if (h.is_none()) return tg::Axes();
  if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) return tg::Axes(to_int_list(h, "axis", false));
  return tg::Axes(to_int(h, "axis"));
}

tg::DType dtype_by_name(const std::string& raw) {
  if (raw == "default_float") return tg::dtypes::default_float();
  if (raw == "default_int") return tg::dtypes::default_int();
  if (std::optional<tg::DType> dt = tg::dtype_from_name(raw)) return *dt;
  throw py::attribute_error("dtypes has no attribute '" + raw + "'");
}

std::optional<tg::DType> to_dtype(py::handle h) {
  if (h.is_none()) return std::nullopt;
  if (py::isinstance<tg::DType>(h)) return h.cast<tg::DType>();
  if (py::isinstance<py::str>(h)) return dtype_by_name(h.cast<std::string>());
  // numpy's dtype objects and scalar types (np.float32, np.dtype("int8")), torch's dtypes: by their name
  if (py::hasattr(h, "name") && py::isinstance<py::str>(h.attr("name"))) return dtype_by_name(h.attr("name").cast<std::string>());
  if (PyType_Check(h.ptr())) {
    if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return tg::dtypes::default_float();
    if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return tg::dtypes::default_int();
    if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return tg::dtypes::bool_;
    return dtype_by_name(h.attr("__name__").cast<std::string>());
  }
  // tinygrad's kind: it looks any other value up as a name (getattr(dtypes, dtype.lower()))
  throw py::attribute_error("dtype must be a DType or a dtype name, not " + type_name(h));
}

std::string to_device(py::handle h) {
  if (h.is_none()) return "";
  if (py::isinstance<py::str>(h)) return h.cast<std::string>();
  if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) {
    std::string out;
    for (py::handle d : py::reinterpret_borrow<py::sequence>(h)) {
      if (!py::isinstance<py::str>(d)) throw py::type_error("device names must be strings, not " + type_name(d));
      out += (out.empty() ? "" : ",") + d.cast<std::string>();
    }
    return out;
  }
  throw py::type_error("device must be a string, a tuple of strings or None, not " + type_name(h));
}

std::optional<Tensor> to_operand(const Tensor& like, py::handle h) {
  if (py::isinstance<Tensor>(h)) return h.cast<const Tensor&>();
  if (is_bool(h)) return like.scalar_like(h.cast<bool>());
  if (is_int(h)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (overflow) {  // beyond int64: only an unsigned 64-bit value can still hold it
      unsigned long long u = PyLong_AsUnsignedLongLong(h.ptr());
      if (PyErr_Occurred()) {
        PyErr_Clear();
        throw py::value_error("Python int " + py::str(h).cast<std::string>() + " is too large for any dtype");
      }
      return like.scalar_like(static_cast<uint64_t>(u));
    }
    return like.scalar_like(static_cast<int64_t>(v));
  }
  if (is_float(h)) return like.scalar_like(PyFloat_AsDouble(h.ptr()));
  // numpy scalars and 0-d arrays, lists: a tensor of their own dtype
  if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()) || PyObject_CheckBuffer(h.ptr()))
    return tensor_from_py(h, std::nullopt, like.device());
  return std::nullopt;
}

Tensor operand_or_throw(const Tensor& like, py::handle h, const char* op) {
  std::optional<Tensor> t = to_operand(like, h);
  if (!t) throw py::type_error(std::string(op) + ": unsupported operand type " + type_name(h));
  return *t;
}

std::string dtype_format(tg::DType dt) {
  using namespace tg::dtypes;
  static const std::vector<std::pair<tg::DType, const char*>> fmts = {
      {bool_, "?"}, {int8, "b"},   {uint8, "B"},   {int16, "h"},   {uint16, "H"},  {int32, "i"},  {uint32, "I"},
      {int64, "q"}, {uint64, "Q"}, {float16, "e"}, {float32, "f"}, {float64, "d"}};
  for (const auto& [d, f] : fmts)
    if (d == dt) return f;
  return "";
}

namespace {

// the dtype of a buffer's struct format ("<f", "=i", "l", "?")
std::optional<tg::DType> dtype_of_format(std::string f, ssize_t itemsize) {
  using namespace tg::dtypes;
  if (!f.empty() && (f[0] == '<' || f[0] == '=' || f[0] == '@' || f[0] == '!' || f[0] == '>')) {
    if (f[0] == '>' || f[0] == '!') return std::nullopt;  // big-endian data: not this machine's order
    f = f.substr(1);
  }
  if (f.size() != 1) return std::nullopt;
  switch (f[0]) {
    case '?': return bool_;
    case 'b': return int8;
    case 'B': return uint8;
    case 'e': return float16;
    case 'f': return float32;
    case 'd': return float64;
    case 'h': case 'i': case 'l': case 'q':
      return itemsize == 1 ? int8 : itemsize == 2 ? int16 : itemsize == 4 ? int32 : itemsize == 8 ? std::optional(int64) : std::nullopt;
    case 'H': case 'I': case 'L': case 'Q':
      return itemsize == 1 ? uint8 : itemsize == 2 ? uint16 : itemsize == 4 ? uint32 : itemsize == 8 ? std::optional(uint64) : std::nullopt;
    default: return std::nullopt;
  }
}

template <class T> Tensor typed(const std::vector<uint8_t>& bytes, const tg::Shape& shape, const std::string& dev) {
  return Tensor(std::span<const T>(reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)), shape, dev);
}

// Row-major bytes of `dt` -> a tensor of exactly that dtype (16-bit floats through their bits).
Tensor from_bytes(const std::vector<uint8_t>& b, tg::DType dt, const tg::Shape& shape, const std::string& dev) {
  using namespace tg::dtypes;
  if (dt == bool_) return typed<bool>(b, shape, dev);
  if (dt == int8) return typed<int8_t>(b, shape, dev);
  if (dt == uint8) return typed<uint8_t>(b, shape, dev);
  if (dt == int16) return typed<int16_t>(b, shape, dev);
  if (dt == uint16) return typed<uint16_t>(b, shape, dev);
  if (dt == int32) return typed<int32_t>(b, shape, dev);
  if (dt == uint32) return typed<uint32_t>(b, shape, dev);
  if (dt == int64) return typed<int64_t>(b, shape, dev);
  if (dt == uint64) return typed<uint64_t>(b, shape, dev);
  if (dt == float32) return typed<float>(b, shape, dev);
  if (dt == float64) return typed<double>(b, shape, dev);
  if (dt == float16 || dt == bfloat16) return typed<uint16_t>(b, shape, dev).bitcast(dt);
  if (dt.is_fp8()) return typed<uint8_t>(b, shape, dev).bitcast(dt);
  throw py::type_error("cannot make a tensor of dtype " + dt.name() + " from host data");
}

Tensor from_buffer(py::handle data, std::optional<tg::DType> dtype, const std::string& dev) {
  py::buffer_info info = py::reinterpret_borrow<py::buffer>(data).request();
  std::optional<tg::DType> dt = dtype_of_format(info.format, info.itemsize);
  if (!dt) throw py::type_error("cannot make a tensor from a buffer of format '" + info.format + "'");
  tg::Shape shape(info.shape.begin(), info.shape.end());
  size_t n = 1;
  for (int64_t s : shape) n *= static_cast<size_t>(s);
  std::vector<uint8_t> bytes(n * static_cast<size_t>(info.itemsize));
  // gather the elements row-major through the strides (a transposed or sliced numpy array is not contiguous)
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t i = 0; i < n; i++) {
    ssize_t off = 0;
    for (size_t d = 0; d < shape.size(); d++) off += idx[d] * info.strides[d];
    std::memcpy(bytes.data() + i * info.itemsize, static_cast<const uint8_t*>(info.ptr) + off, info.itemsize);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  Tensor t = from_bytes(bytes, *dt, shape, dev);
  return dtype && *dtype != *dt ? t.cast(*dtype) : t;
}

// A nested list walked once: its shape (from the first element at each depth, checked for every element) and its
// leaves, with the kinds seen (bool < int < float, tinygrad's inference for lists).
struct ListData {
  tg::Shape shape;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  bool any_float = false, any_int = false, leaves_done = false;
  std::vector<py::handle> leaves;
};

void walk(py::handle h, size_t depth, ListData& d) {
  bool seq = PyList_Check(h.ptr()) || PyTuple_Check(h.ptr());
  if (!d.leaves_done && depth == d.shape.size() && seq) {  // still learning the shape along the first elements
    d.shape.push_back(static_cast<int64_t>(PySequence_Fast_GET_SIZE(h.ptr())));
  }
  if (seq) {
    if (depth >= d.shape.size() || static_cast<int64_t>(PySequence_Fast_GET_SIZE(h.ptr())) != d.shape[depth])
      throw py::value_error("setting an array element with a sequence: the list is ragged (inhomogeneous shape)");
    PyObject** items = PySequence_Fast_ITEMS(h.ptr());
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(h.ptr()); i++) walk(items[i], depth + 1, d);
    if (PySequence_Fast_GET_SIZE(h.ptr()) == 0) d.leaves_done = true;
    return;
  }
  d.leaves_done = true;
  if (depth != d.shape.size())
    throw py::value_error("setting an array element with a sequence: the list is ragged (inhomogeneous shape)");
  if (is_float(h)) d.any_float = true;
  else if (is_int(h)) d.any_int = true;
  else if (!is_bool(h)) {
    // numpy scalars and 0-d tensors inside a list count by their kind
    if (py::isinstance<Tensor>(h) || !PyNumber_Check(h.ptr()))
      throw py::type_error("cannot make a tensor from a list holding " + type_name(h));
    if (PyIndex_Check(h.ptr())) d.any_int = true;
    else d.any_float = true;
  }
  d.leaves.push_back(h);
}

Tensor from_list(py::handle data, std::optional<tg::DType> dtype, const std::string& dev) {
  using namespace tg::dtypes;
  ListData d;
  walk(data, 0, d);
  tg::DType inferred = d.any_float || (!d.any_int && d.leaves.empty()) ? default_float() : d.any_int ? default_int() : bool_;
  tg::DType target = dtype.value_or(inferred);
  size_t n = d.leaves.size();
  if (d.any_float || target.is_float()) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; i++) {
      v[i] = PyFloat_AsDouble(d.leaves[i].ptr());
      if (v[i] == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    }
    if (target == float32) return Tensor(std::vector<float>(v.begin(), v.end()), d.shape, dev);
    if (target == float16 || target == bfloat16) {  // rounded once, here: a cast through float32 rounds twice
      std::vector<uint16_t> bits(n);
      for (size_t i = 0; i < n; i++) bits[i] = target == float16 ? tg::double_to_half_bits(v[i]) : tg::double_to_bf16_bits(v[i]);
      return Tensor(bits, d.shape, dev).bitcast(target);
    }
    if (target.is_fp8()) {
      std::vector<uint8_t> bits(n);
      for (size_t i = 0; i < n; i++) bits[i] = tg::double_to_fp8_bits(v[i], target);
      return Tensor(bits, d.shape, dev).bitcast(target);
    }
    Tensor t(v, d.shape, dev);
    return target == float64 ? t : t.cast(target);
  }
  if (d.any_int || target.is_int()) {
    std::vector<int64_t> v(n);
    for (size_t i = 0; i < n; i++) {
      if (is_bool(d.leaves[i])) { v[i] = d.leaves[i].ptr() == Py_True; continue; }
      PyObject* idx = PyNumber_Index(d.leaves[i].ptr());
      if (!idx) throw py::error_already_set();
      int overflow = 0;
      long long x = PyLong_AsLongLongAndOverflow(idx, &overflow);
      if (overflow) {  // past int64: as uint64 (wrapping like a cast) or an OverflowError
        unsigned long long u = PyLong_AsUnsignedLongLongMask(idx);
        Py_DECREF(idx);
        if (PyErr_Occurred()) throw py::error_already_set();
        if (target != uint64) throw py::value_error("Python int too large for " + target.name());
        x = static_cast<long long>(u);
      } else {
        Py_DECREF(idx);
      }
      v[i] = x;
    }
    if (target == int32) {
      bool fits = std::all_of(v.begin(), v.end(), [](int64_t x) { return x >= INT32_MIN && x <= INT32_MAX; });
      if (fits) return Tensor(std::vector<int32_t>(v.begin(), v.end()), d.shape, dev);
    }
    Tensor t(v, d.shape, dev);
    return target == int64 ? t : t.cast(target);
  }
  std::vector<bool> v(n);
  for (size_t i = 0; i < n; i++) v[i] = d.leaves[i].ptr() == Py_True;
  Tensor t(v, d.shape, dev);
  return target == bool_ ? t : t.cast(target);
}

}  // namespace

Tensor tensor_from_py(py::handle data, std::optional<tg::DType> dtype, const std::string& dev) {
  using namespace tg::dtypes;
  if (py::isinstance<Tensor>(data)) {
    Tensor t = data.cast<const Tensor&>();
    if (!dev.empty() && t.device() != tg::Device::canonicalize(dev)) t = t.to(dev);
    return dtype && *dtype != t.dtype() ? t.cast(*dtype) : t;
  }
  if (data.is_none()) return Tensor(0.0, dtype.value_or(default_float()), dev);
  if (is_bool(data)) return Tensor(data.ptr() == Py_True, dtype.value_or(bool_), dev);
  if (is_int(data)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(data.ptr(), &overflow);
    if (overflow) {
      unsigned long long u = PyLong_AsUnsignedLongLong(data.ptr());
      if (PyErr_Occurred()) {
        PyErr_Clear();
        throw py::value_error("Python int " + py::str(data).cast<std::string>() + " is too large for any dtype");
      }
      return Tensor(static_cast<uint64_t>(u), dtype.value_or(uint64), dev);
    }
    return Tensor(static_cast<int64_t>(v), dtype.value_or(default_int()), dev);
  }
  if (is_float(data)) return Tensor(PyFloat_AsDouble(data.ptr()), dtype.value_or(default_float()), dev);
  if (PyBytes_Check(data.ptr()) || PyByteArray_Check(data.ptr())) {
    std::string s = PyBytes_Check(data.ptr()) ? data.cast<std::string>()
                                              : std::string(PyByteArray_AsString(data.ptr()), PyByteArray_Size(data.ptr()));
    std::vector<uint8_t> b(s.begin(), s.end());
    tg::DType dt = dtype.value_or(uint8);
    if (b.size() % dt.itemsize() != 0)
      throw py::value_error(std::to_string(b.size()) + " bytes are not a whole number of " + dt.name() + " elements");
    return from_bytes(b, dt, {static_cast<int64_t>(b.size() / dt.itemsize())}, dev);
  }
  if (PyList_Check(data.ptr()) || PyTuple_Check(data.ptr())) return from_list(data, dtype, dev);
  if (PyObject_CheckBuffer(data.ptr())) return from_buffer(data, dtype, dev);
  // other numbers (numpy scalars without the buffer protocol, Fractions): by their kind
  if (PyIndex_Check(data.ptr())) return Tensor(to_int(data, "data"), dtype.value_or(default_int()), dev);
  if (PyFloat_Check(data.ptr()) || PyNumber_Check(data.ptr())) {
    double v = PyFloat_AsDouble(data.ptr());
    if (v == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    return Tensor(v, dtype.value_or(default_float()), dev);
  }
  throw py::type_error("can't create Tensor from " + py::repr(data).cast<std::string>() + " with type " + type_name(data));
}

py::bytearray tensor_bytes(const Tensor& t) {
  std::vector<uint8_t> b;
  {
    py::gil_scoped_release release;  // kernels may run: other Python threads go on meanwhile
    b = t.to_bytes();
  }
  return py::bytearray(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace tgpy
