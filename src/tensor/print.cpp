// Printing a tensor's values as numpy's str() does: common width, shortest digits, summarized when large.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>

#include "tensor/tensor_impl.h"

namespace tg {

namespace {

constexpr size_t kLineWidth = 75, kThreshold = 1000, kEdgeItems = 3;
constexpr int kPrecision = 8;

// fewest digits (at most kPrecision) that read back as the same value in the tensor's precision
int digits_needed(double v, bool single, char fmt) {
  char buf[64];
  for (int p = 0; p < kPrecision; p++) {
    std::snprintf(buf, sizeof buf, fmt == 'f' ? "%.*f" : "%.*e", p, v);
    double back = std::strtod(buf, nullptr);
    if (single ? static_cast<float>(back) == static_cast<float>(v) : back == v) return p;
  }
  return kPrecision;
}

std::vector<std::string> format_floats(const std::vector<double>& vals, bool single) {
  double max_abs = 0, min_abs = INFINITY;
  for (double v : vals)
    if (std::isfinite(v) && v != 0) max_abs = std::max(max_abs, std::fabs(v)), min_abs = std::min(min_abs, std::fabs(v));
  bool sci = max_abs >= 1e8 || (min_abs < 1e-4) || (max_abs / min_abs > 1e3 && min_abs != INFINITY);
  int prec = 0;
  for (double v : vals)
    if (std::isfinite(v)) prec = std::max(prec, digits_needed(v, single, sci ? 'e' : 'f'));
  std::vector<std::string> out;
  size_t int_w = 0, frac_w = 0;
  char buf[64];
  for (double v : vals) {
    if (std::isnan(v)) out.push_back("nan");
    else if (std::isinf(v)) out.push_back(v < 0 ? "-inf" : "inf");
    else if (sci) {
      std::snprintf(buf, sizeof buf, "%.*e", prec, v);
      std::string s = buf;
      if (prec == 0) s.insert(s.find('e'), ".");  // 1.e-05, as numpy writes it
      out.push_back(s);
    } else {
      // positional: as many digits as the value needs, trailing zeros dropped but the point kept
      std::snprintf(buf, sizeof buf, "%.*f", digits_needed(v, single, 'f'), v);
      std::string s = buf;
      if (s.find('.') == std::string::npos) s += ".";
      out.push_back(s);
    }
    const std::string& s = out.back();
    size_t dot = s.find('.');
    if (!sci && dot != std::string::npos) int_w = std::max(int_w, dot), frac_w = std::max(frac_w, s.size() - dot - 1);
  }
  // align the points: pad the integer part on the left and the fraction on the right
  size_t width = 0;
  for (std::string& s : out) {
    size_t dot = s.find('.');
    if (!sci && dot != std::string::npos) s = std::string(int_w - dot, ' ') + s + std::string(frac_w - (s.size() - dot - 1), ' ');
    width = std::max(width, s.size());
  }
  for (std::string& s : out) s = std::string(width - s.size(), ' ') + s;
  return out;
}

template <class T> std::vector<std::string> format_plain(const std::vector<T>& vals) {
  std::vector<std::string> out;
  size_t width = 0;
  for (const T& v : vals) {
    if constexpr (std::is_same_v<T, bool>) out.push_back(v ? "True" : "False");
    else out.push_back(std::to_string(v));
    width = std::max(width, out.back().size());
  }
  for (std::string& s : out) s = std::string(width - s.size(), ' ') + s;
  return out;
}

struct Printer {
  const Shape& shape;
  const std::vector<std::string>& items;
  bool summarize;
  std::string out;

  // the block of dimension `dim` starting at flat position `base`; `indent` is the column it starts at
  void block(size_t dim, int64_t base, size_t indent) {
    if (dim == shape.size()) {
      out += items[base];
      return;
    }
    // the elements per step of this dimension (none to step over when it is empty: (0, 2^62, 2^62) is legal)
    int64_t n = shape[dim], inner = n ? tensor::prod(Shape(shape.begin() + static_cast<int64_t>(dim) + 1, shape.end())) : 0;
    out += "[";
    size_t line_start = out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1;
    bool last_dim = dim + 1 == shape.size();
    std::string sep = last_dim ? " " : std::string(shape.size() - dim - 1, '\n') + std::string(indent + 1, ' ');
    for (int64_t i = 0; i < n; i++) {
      if (summarize && n > 2 * static_cast<int64_t>(kEdgeItems) && i == static_cast<int64_t>(kEdgeItems)) {
        out += last_dim ? "..." : "...";
        out += sep;
        i = n - kEdgeItems;
      }
      if (last_dim) {
        const std::string& w = items[base + i];
        // wrap long rows at numpy's 75 columns
        size_t col = out.size() - line_start;
        if (i > 0 && col + w.size() + (i + 1 == n ? shape.size() : 0) > kLineWidth) {
          while (!out.empty() && out.back() == ' ') out.pop_back();
          out += "\n" + std::string(indent + 1, ' ');
          line_start = out.size() - indent - 1;
        }
        out += w;
      } else {
        block(dim + 1, base + i * inner, indent + 1);
      }
      if (i + 1 < n) out += sep;
    }
    out += "]";
  }
};

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  DType dt = t.dtype();
  std::vector<std::string> items;
  if (dt.is_float()) items = format_floats(t.to_vector<double>(), dt != dtypes::float64);
  else if (dt.is_bool()) items = format_plain(t.to_vector<bool>());
  else if (dt.is_unsigned()) items = format_plain(t.to_vector<uint64_t>());
  else items = format_plain(t.to_vector<int64_t>());
  if (t.ndim() == 0) return os << items[0];
  if (t.numel() == 0) return os << "[]";  // numpy's null array, whatever the shape: (2^62, 0) has nothing to list
  Printer p{t.shape(), items, static_cast<size_t>(t.numel()) > kThreshold, ""};
  p.block(0, 0, 0);
  return os << p.out;
}

}  // namespace tg
