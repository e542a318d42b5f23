// Movement (zero-copy views) and indexing: tinygrad's `*args` shapes, None/-1 in a reshape, PyTorch-style flat pads,
// and Python's x[...] with ints, slices with steps, None, Ellipsis, lists and tensors.
#include <algorithm>
#include <cmath>

#include "bindings.h"

namespace tgpy {

namespace {

// f(2, 3) and f((2, 3)): the first argument alone when it is a tuple or list, else all of them
py::sequence argfix(py::handle first, const py::args& rest) {
  if (rest.size() == 0 && (PyTuple_Check(first.ptr()) || PyList_Check(first.ptr()))) return py::reinterpret_borrow<py::sequence>(first);
  py::list all;
  all.append(first);
  for (py::handle h : rest) all.append(h);
  return all;
}

// sizes for reshape/expand: ints and Dims, None as `none` (keep_dim, or -1 for expand)
std::vector<tg::Dim> dims_of(py::sequence s, int64_t none, const char* what) {
  std::vector<tg::Dim> out;
  for (py::handle h : s) out.push_back(h.is_none() ? tg::Dim(none) : to_dim(h, what));
  return out;
}

std::vector<int64_t> ints_of(py::sequence s, const char* what) {
  std::vector<int64_t> out;
  for (py::handle h : s) out.push_back(to_int(h, what));
  return out;
}

// (before, after) pairs for every dim from tinygrad's pad argument: a pair or None per dim, or PyTorch's flat
// (left, right, top, bottom, ...) for the last dims
std::vector<std::pair<int64_t, int64_t>> pad_pairs(const Tensor& t, py::handle padding) {
  if (!PyTuple_Check(padding.ptr()) && !PyList_Check(padding.ptr())) throw py::type_error("padding must be a tuple or list");
  py::sequence p = py::reinterpret_borrow<py::sequence>(padding);
  size_t nd = static_cast<size_t>(t.ndim());
  bool flat = p.size() == 0 || std::all_of(p.begin(), p.end(), [](py::handle h) { return PyIndex_Check(h.ptr()) && !PyBool_Check(h.ptr()); });
  std::vector<std::pair<int64_t, int64_t>> out(nd, {0, 0});
  if (flat) {
    if (p.size() % 2 != 0 || p.size() / 2 > nd)
      throw py::value_error("flat padding needs an even length of at most 2*ndim = " + std::to_string(2 * nd) + ", got " +
                            std::to_string(p.size()));
    for (size_t i = 0; i < p.size() / 2; i++) out[nd - 1 - i] = {to_int(p[2 * i], "padding"), to_int(p[2 * i + 1], "padding")};
    return out;
  }
  if (p.size() != nd) throw py::value_error("padding needs one (before, after) pair or None per dimension (" + std::to_string(nd) + ")");
  for (size_t i = 0; i < nd; i++) {
    if (p[i].is_none()) continue;
    std::vector<int64_t> pair = to_int_list(p[i], "padding", false);
    if (pair.size() != 2) throw py::value_error("each padding entry is a (before, after) pair");
    out[i] = {pair[0], pair[1]};
  }
  return out;
}

tg::Index index_of(const Tensor& like, py::handle h) {
  if (h.is_none()) return tg::newaxis;
  if (h.ptr() == Py_Ellipsis) return tg::ellipsis;
  if (py::isinstance<Tensor>(h)) {  // integers select, bools mask; tinygrad's IndexError for anything else
    const Tensor& t = h.cast<const Tensor&>();
    if (!t.dtype().is_int() && !t.dtype().is_bool())
      throw py::index_error("tensor indices must be integers or bools, not " + t.dtype().name());
    return tg::Index(t);
  }
  if (PySlice_Check(h.ptr())) {
    auto bound = [](py::handle b) -> std::optional<int64_t> {
      if (b.is_none()) return std::nullopt;
      if (py::isinstance<Tensor>(b)) {
        const Tensor& t = b.cast<const Tensor&>();
        if (t.ndim() != 0 || !t.dtype().is_int()) throw py::type_error("a slice bound must be an int or a 0-d integer tensor, not a tensor of shape " + py::str(sym_shape_tuple(t)).cast<std::string>());
        return t.item<int64_t>();
      }
      return to_int(b, "slice index");
    };
    PySliceObject* s = reinterpret_cast<PySliceObject*>(h.ptr());
    std::optional<int64_t> step = bound(s->step);
    return tg::Slice(bound(s->start), bound(s->stop), step.value_or(1));
  }
  if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) {  // a list of bools is a mask, else a list of integers
    py::sequence s = py::reinterpret_borrow<py::sequence>(h);
    bool all_bool = s.size() > 0 && std::all_of(s.begin(), s.end(), [](py::handle x) { return PyBool_Check(x.ptr()); });
    for (py::handle x : s)
      if (PyFloat_Check(x.ptr())) throw py::index_error("list indices must be integers or bools, not float");
    return tg::Index(tensor_from_py(h, all_bool ? tg::dtypes::bool_ : tg::dtypes::int32, like.device()));
  }
  if (PyBool_Check(h.ptr())) throw py::index_error("a bool is not a valid index (use a bool tensor as a mask)");
  if (!PyIndex_Check(h.ptr()))
    throw py::index_error("only integers, slices, None, Ellipsis, lists and tensors are valid indices, not " +
                          py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>());
  return tg::Index(to_int(h, "index"));
}

// tinygrad's rule: a tuple is several indices; a list of ints is one (advanced) index; anything else is one index
std::vector<tg::Index> indices_of(const Tensor& t, py::handle key) {
  std::vector<tg::Index> out;
  bool list_of_ints = PyList_Check(key.ptr()) && std::all_of(py::reinterpret_borrow<py::list>(key).begin(),
                                                                 py::reinterpret_borrow<py::list>(key).end(),
                                                                 [](py::handle h) { return PyLong_Check(h.ptr()); });
  if (PyTuple_Check(key.ptr()) || (PyList_Check(key.ptr()) && !list_of_ints)) {
    for (py::handle h : py::reinterpret_borrow<py::sequence>(key)) out.push_back(index_of(t, h));
  } else {
    out.push_back(index_of(t, key));
  }
  return out;
}

// x[:, :vi] and the like: a key of slices (step 1) and at most one Ellipsis where a bound is a Dim, as a shrink;
// nullopt when no bound is symbolic
std::optional<Tensor> symbolic_slice(const Tensor& t, py::handle key) {
  py::list parts;
  if (PyTuple_Check(key.ptr())) parts = py::list(py::reinterpret_borrow<py::tuple>(key));
  else parts.append(key);
  bool symbolic = false;
  for (py::handle h : parts)
    if (PySlice_Check(h.ptr())) {
      PySliceObject* s = reinterpret_cast<PySliceObject*>(h.ptr());
      symbolic = symbolic || is_dim(s->start) || is_dim(s->stop);
    }
  if (!symbolic) return std::nullopt;
  std::vector<tg::Dim> full = t.sym_shape();
  std::vector<std::pair<tg::Dim, tg::Dim>> r;
  size_t at = 0, given = 0;
  for (py::handle h : parts) given += h.ptr() != Py_Ellipsis;
  for (py::handle h : parts) {
    if (h.ptr() == Py_Ellipsis) {
      for (size_t k = 0; k + given < full.size(); k++, at++) r.push_back({0, full[at]});
      continue;
    }
    PySliceObject* s = PySlice_Check(h.ptr()) ? reinterpret_cast<PySliceObject*>(h.ptr()) : nullptr;
    if (!s || !(s->step == Py_None || (PyLong_Check(s->step) && PyLong_AsLong(s->step) == 1)))
      throw py::index_error("a symbolic slice bound goes only with other slices of step 1 (and an Ellipsis)");
    if (at >= full.size()) throw py::index_error("too many indices for " + std::to_string(full.size()) + " dimensions");
    tg::Dim begin = s->start == Py_None ? tg::Dim(0) : to_dim(s->start, "slice");
    tg::Dim end = s->stop == Py_None ? full[at] : to_dim(s->stop, "slice");
    if ((!begin.is_symbolic() && begin.min() < 0) || (!end.is_symbolic() && end.min() < 0))
      throw py::index_error("negative bounds are not supported beside a symbolic one");
    r.push_back({begin, end});
    at++;
  }
  for (; at < full.size(); at++) r.push_back({0, full[at]});
  return t.shrink(r);
}

}  // namespace

void init_tensor_movement(py::class_<Tensor>& cls) {
  cls.def("reshape", [](const Tensor& t, py::handle shape, py::args rest) { return t.reshape(dims_of(argfix(shape, rest), tg::keep_dim, "reshape")); },
          py::arg("shape"))
      .def("view", [](const Tensor& t, py::handle shape, py::args rest) { return t.reshape(dims_of(argfix(shape, rest), tg::keep_dim, "view")); },
           py::arg("shape"))
      .def("permute", [](const Tensor& t, py::handle order, py::args rest) { return t.permute(ints_of(argfix(order, rest), "permute")); },
           py::arg("order"))
      .def("expand", [](const Tensor& t, py::handle shape, py::args rest) { return t.expand(dims_of(argfix(shape, rest), -1, "expand")); },
           py::arg("shape"))
      .def("repeat", [](const Tensor& t, py::handle r, py::args rest) { return t.repeat(ints_of(argfix(r, rest), "repeat")); },
           py::arg("repeats"))
      .def("flip", [](const Tensor& t, py::handle axis, py::args rest) { return t.flip(tg::Axes(ints_of(argfix(axis, rest), "flip"))); },
           py::arg("axis"))
      .def("shrink_to", [](const Tensor& t, py::handle shape, py::args rest) {
        std::vector<int64_t> s;
        for (py::handle h : argfix(shape, rest)) s.push_back(h.is_none() ? tg::keep_dim : to_int(h, "shrink_to"));
        return t.shrink_to(s);
      }, py::arg("shape"))
      .def("pad", [](const Tensor& t, py::handle padding, const std::string& mode, double value) {
        std::vector<std::pair<int64_t, int64_t>> p = pad_pairs(t, padding);
        if (mode == "constant") return t.pad(p, value);
        if (mode == "reflect") return t.pad(p, tg::PadMode::reflect, value);
        if (mode == "replicate") return t.pad(p, tg::PadMode::replicate, value);
        if (mode == "circular") return t.pad(p, tg::PadMode::circular, value);
        // tinygrad's kind for a mode it does not have
        PyErr_SetString(PyExc_NotImplementedError, ("mode='" + mode + "' is not supported: 'constant', 'reflect', 'replicate' or 'circular'").c_str());
        throw py::error_already_set();
      }, py::arg("padding"), py::arg("mode") = "constant", py::arg("value") = 0.0)
      .def("shrink", [](const Tensor& t, py::handle arg) {
        if (!PyTuple_Check(arg.ptr()) && !PyList_Check(arg.ptr())) throw py::type_error("shrink takes a tuple of (begin, end) or None");
        py::sequence s = py::reinterpret_borrow<py::sequence>(arg);
        if (static_cast<int64_t>(s.size()) != t.ndim())
          throw py::value_error("shrink needs one (begin, end) or None per dimension (" + std::to_string(t.ndim()) + ")");
        std::vector<tg::Dim> full = t.sym_shape();
        std::vector<std::pair<tg::Dim, tg::Dim>> r;
        for (size_t i = 0; i < s.size(); i++) {
          if (s[i].is_none()) { r.push_back({0, full[i]}); continue; }
          if (!PyTuple_Check(s[i].ptr()) && !PyList_Check(s[i].ptr())) throw py::type_error("each shrink entry is a (begin, end) pair or None");
          py::sequence p = py::reinterpret_borrow<py::sequence>(s[i]);
          if (p.size() != 2) throw py::value_error("each shrink entry is a (begin, end) pair");
          r.push_back({to_dim(p[0], "shrink"), to_dim(p[1], "shrink")});
        }
        return t.shrink(r);
      }, py::arg("arg"))
      .def("transpose", [](const Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); }, py::arg("dim0") = 1, py::arg("dim1") = 0)
      .def_property_readonly("T", [](const Tensor& t) { return t.T(); })
      .def("flatten", [](const Tensor& t, int64_t s, int64_t e) { return t.flatten(s, e); }, py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def("unflatten", [](const Tensor& t, int64_t d, py::handle sizes) { return t.unflatten(d, to_int_list(sizes, "sizes", false)); },
           py::arg("dim"), py::arg("sizes"))
      .def("squeeze", [](const Tensor& t, py::handle dim) { return dim.is_none() ? t.squeeze() : t.squeeze(to_int(dim, "dim")); },
           py::arg("dim") = py::none())
      .def("unsqueeze", [](const Tensor& t, int64_t d) { return t.unsqueeze(d); }, py::arg("dim"))
      .def("repeat_interleave", [](const Tensor& t, int64_t r, py::handle dim) {
        return t.repeat_interleave(r, dim.is_none() ? std::nullopt : std::optional(to_int(dim, "dim")));
      }, py::arg("repeats"), py::arg("dim") = py::none())
      .def("cat", [](const Tensor& t, py::args others, int64_t dim) {
        std::vector<Tensor> ts{t};
        for (py::handle h : others) ts.push_back(h.cast<Tensor>());
        return Tensor::cat(ts, dim);
      }, py::kw_only(), py::arg("dim") = 0)
      .def("stack", [](const Tensor& t, py::args others, int64_t dim) {
        std::vector<Tensor> ts{t};
        for (py::handle h : others) ts.push_back(h.cast<Tensor>());
        return Tensor::stack(ts, dim);
      }, py::kw_only(), py::arg("dim") = 0)
      .def("split", [](const Tensor& t, py::handle sizes, int64_t dim) {
        if (PyTuple_Check(sizes.ptr()) || PyList_Check(sizes.ptr())) return t.split(to_int_list(sizes, "sizes", false), dim);
        return t.split(to_int(sizes, "sizes"), dim);
      }, py::arg("sizes"), py::arg("dim") = 0)
      .def("chunk", [](const Tensor& t, int64_t chunks, int64_t dim) { return t.chunk(chunks, dim); }, py::arg("chunks"), py::arg("dim") = 0)
      .def("roll", [](const Tensor& t, py::handle shifts, py::handle dims) {
        std::vector<int64_t> s = to_int_list(shifts, "shifts");
        std::vector<int64_t> d;
        if (dims.is_none()) {  // no dims: roll the flattened tensor
          return t.flatten().roll(s, {0}).reshape(t.shape());
        }
        d = to_int_list(dims, "dims");
        return t.roll(s, d);
      }, py::arg("shifts"), py::arg("dims") = py::none())
      .def("triu", [](const Tensor& t, int64_t d) { return t.triu(d); }, py::arg("diagonal") = 0)
      .def("tril", [](const Tensor& t, int64_t d) { return t.tril(d); }, py::arg("diagonal") = 0)
      .def("diagonal", [](const Tensor& t, int64_t o, int64_t a, int64_t b) { return t.diagonal(o, a, b); }, py::arg("offset") = 0,
           py::arg("dim1") = 0, py::arg("dim2") = 1)
      .def("diag", [](const Tensor& t) { return t.diag(); })
      .def("unfold", [](const Tensor& t, int64_t d, int64_t size, int64_t step) { return t.unfold(d, size, step); }, py::arg("dim"),
           py::arg("size"), py::arg("step"))
      .def("rearrange", [](const Tensor& t, const std::string& f, py::kwargs sizes) {
        std::vector<std::pair<std::string, int64_t>> s;
        for (auto [k, v] : sizes) s.push_back({py::str(k), to_int(v, "size")});
        return t.rearrange(f, s);
      }, py::arg("formula"));

  // ---- indexing ----
  cls.def("__getitem__", [](const Tensor& t, py::handle key) {
        if (std::optional<Tensor> r = symbolic_slice(t, key)) return *r;
        return t.getitem(indices_of(t, key));
      })
      .def("__setitem__", [](Tensor& t, py::handle key, py::handle value) {
        std::vector<tg::Index> idx = indices_of(t, key);
        if (py::isinstance<Tensor>(value)) return t.setitem(idx, value.cast<Tensor>());
        if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr()) || PyObject_CheckBuffer(value.ptr()))
          return t.setitem(idx, tensor_from_py(value, t.dtype(), t.device()));
        if (!PyNumber_Check(value.ptr())) throw py::type_error("setitem takes a Tensor, a number or a list");
        t.setitem(idx, value.cast<double>());
      })
      .def("__delitem__", [](const Tensor&, py::handle) { throw py::type_error("Tensor does not support deleting items"); })
      .def("gather", [](const Tensor& t, int64_t dim, const Tensor& index) { return t.gather(dim, index); }, py::arg("dim"), py::arg("index"))
      .def("scatter", [](const Tensor& t, int64_t dim, const Tensor& index, py::handle src, py::handle reduce) {
        if (reduce.is_none()) {
          if (py::isinstance<Tensor>(src)) return t.scatter(dim, index, src.cast<Tensor>());
          return t.scatter(dim, index, src.cast<double>());
        }
        // tinygrad's checks, before the core's: reduce is 'add' or 'multiply', and only with a scalar src
        std::string r = py::str(reduce).cast<std::string>();
        if (!py::isinstance<py::str>(reduce) || (r != "add" && r != "multiply"))
          throw py::type_error("reduce=" + py::repr(reduce).cast<std::string>() + " must be one of None, 'multiply', or 'add'");
        if (py::isinstance<Tensor>(src)) throw py::type_error("scatter with reduce takes a scalar src; for a Tensor src use scatter_reduce");
        return t.scatter(dim, index, src.cast<double>(), r);
      }, py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce") = py::none())
      .def("scatter_reduce", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                                bool include_self) { return t.scatter_reduce(dim, index, src, reduce, include_self); },
           py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce"), py::arg("include_self") = true)
      .def("masked_select", [](const Tensor& t, const Tensor& mask, py::handle size, double fill) {
        if (size.is_none()) return t.masked_select(mask);
        return t.masked_select(mask, to_int(size, "size"), fill);
      }, py::arg("mask"), py::arg("size") = py::none(), py::arg("fill_value") = 0)
      .def("nonzero", [](const Tensor& t, py::handle size, double fill) {
        if (size.is_none()) return t.nonzero();
        // the indices stay integers: a float fill_value is truncated, as tinygrad's cast to the int dtype
        return t.nonzero(to_int(size, "size"), static_cast<int64_t>(std::trunc(fill)));
      }, py::arg("size") = py::none(), py::arg("fill_value") = 0)
      .def("one_hot", [](const Tensor& t, int64_t n) {
        if (n < 0) throw py::value_error("num_classes must be non-negative, got " + std::to_string(n));  // tinygrad infers none
        return t.one_hot(n);
      }, py::arg("num_classes"))
      .def("sort", [](const Tensor& t, int64_t dim, bool desc) { return t.sort(dim, desc); }, py::arg("dim") = -1, py::arg("descending") = false)
      .def("argsort", [](const Tensor& t, int64_t dim, bool desc) { return t.argsort(dim, desc); }, py::arg("dim") = -1,
           py::arg("descending") = false)
      .def("topk", [](const Tensor& t, int64_t k, int64_t dim, bool largest, bool sorted) { return t.topk(k, dim, largest, sorted); },
           py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true, py::arg("sorted_") = true);
}

}  // namespace tgpy
