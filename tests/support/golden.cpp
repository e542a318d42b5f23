#include "support/golden.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <tg/context.h>

#ifndef TG_GOLDEN_DIR
#error "TG_GOLDEN_DIR must name tests/golden"
#endif

namespace tg::testing {

DType dtype_from_name(const std::string& name) {
  for (DType d : dtypes::all())
    if (d.name() == name) return d;
  throw std::runtime_error("unknown dtype in golden file: " + name);
}

namespace {

GoldenTensor parse_tensor(std::istringstream& is) {
  GoldenTensor t;
  std::string dt, colon;
  size_t ndim;
  is >> dt >> ndim;
  t.dtype = dtype_from_name(dt);
  t.shape.resize(ndim);
  for (auto& d : t.shape) is >> d;
  is >> colon;
  std::string v;
  while (is >> v) {
    if (t.dtype.is_float()) t.floats.push_back(std::strtod(v.c_str(), nullptr));
    else if (v[0] == '-') t.ints.push_back(std::stoll(v));
    else t.ints.push_back(static_cast<int64_t>(std::stoull(v)));
  }
  return t;
}

std::map<std::string, std::vector<GoldenCase>> load(const std::string& file) {
  // $TG_GOLDEN_DIR: the tests built on one machine and run in another tree (tools/cuda_gpu_check.sh on a GPU machine)
  std::string path = getenv_str("TG_GOLDEN_DIR", TG_GOLDEN_DIR) + "/" + file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::map<std::string, std::vector<GoldenCase>> out;
  GoldenCase* cur = nullptr;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream is(line);
    std::string tag;
    is >> tag;
    if (tag == "case") {
      GoldenCase c;
      is >> c.op >> c.variant;
      out[c.op].push_back(c);
      cur = &out[c.op].back();
    } else if (tag == "args" && cur) {
      double a;
      while (is >> a) cur->args.push_back(a);
      if (!is.eof()) throw std::runtime_error(file + ": an argument of " + cur->op + "/" + cur->variant + " is not a number: " + line);
    } else if (tag == "in" && cur) {
      cur->inputs.push_back(parse_tensor(is));
    } else if (tag == "out" && cur) {
      cur->output = parse_tensor(is);
    } else if (tag == "grad" && cur) {
      size_t input;
      is >> input;
      cur->grads[input] = parse_tensor(is);
    }
  }
  return out;
}

}  // namespace

const std::map<std::string, std::vector<GoldenCase>>& golden_cases(const std::string& file) {
  static std::map<std::string, std::map<std::string, std::vector<GoldenCase>>> loaded;
  auto it = loaded.find(file);
  if (it == loaded.end()) it = loaded.emplace(file, load(file)).first;
  return it->second;
}

Tensor GoldenTensor::make() const {
  Tensor t;
  if (dtype.is_float()) t = Tensor(floats, shape);
  else if (dtype == dtypes::uint64) t = Tensor(std::vector<uint64_t>(ints.begin(), ints.end()), shape);
  else t = Tensor(ints, shape);
  return t.cast(dtype).contiguous().realize();
}

std::string compare(const Tensor& got, const GoldenTensor& want, double atol, double rtol) {
  std::ostringstream err;
  if (got.dtype() != want.dtype) err << "dtype " << got.dtype().name() << ", want " << want.dtype.name() << "; ";
  if (got.shape() != want.shape) {
    err << "shape differs; ";
    return err.str();
  }
  if (want.dtype.is_float()) {
    std::vector<double> v = got.cast(dtypes::float64).to_vector<double>();
    for (size_t i = 0; i < v.size(); i++) {
      double w = want.floats[i];
      bool ok = std::isnan(w) ? std::isnan(v[i]) : std::isinf(w) ? v[i] == w : std::fabs(v[i] - w) <= atol + rtol * std::fabs(w);
      if (!ok) {
        err << "element " << i << ": " << v[i] << ", want " << w << "; ";
        break;
      }
    }
  } else {
    std::vector<int64_t> v = got.dtype() == dtypes::uint64 ? [&] {
      auto u = got.to_vector<uint64_t>();
      return std::vector<int64_t>(u.begin(), u.end());
    }() : got.to_vector<int64_t>();
    for (size_t i = 0; i < v.size(); i++)
      if (v[i] != want.ints[i]) {
        err << "element " << i << ": " << v[i] << ", want " << want.ints[i] << "; ";
        break;
      }
  }
  return err.str();
}

}  // namespace tg::testing
