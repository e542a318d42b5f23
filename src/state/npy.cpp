// numpy's .npy files (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html): the magic
// "\x93NUMPY", a version (1.0: a 2-byte header length; 2.0 and 3.0: 4 bytes), then a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline so that the data starts 64-byte aligned, then the data. Little-endian data in
// C order is mapped and copied to the device on first use, as safe_load does; big-endian data is byte-swapped and
// Fortran order becomes a transposed view.
#include <algorithm>
#include <bit>
#include <cstring>

#include "runtime/buffer_uop.h"
#include "state/file_io.h"
#include "tensor/helpers.h"
#include "tg/state.h"

namespace tg {

static_assert(std::endian::native == std::endian::little, "npy's '<' data is read as it lies; so is this code");

namespace {

constexpr char kMagic[] = "\x93NUMPY";

// numpy's type letter and size for each dtype ('|' where one byte has no order)
const std::pair<const char*, DType> kDescr[] = {
    {"b1", dtypes::bool_},  {"i1", dtypes::int8},   {"u1", dtypes::uint8},   {"i2", dtypes::int16},
    {"u2", dtypes::uint16}, {"i4", dtypes::int32},  {"u4", dtypes::uint32},  {"i8", dtypes::int64},
    {"u8", dtypes::uint64}, {"f2", dtypes::float16}, {"f4", dtypes::float32}, {"f8", dtypes::float64},
};

struct Header {
  DType dtype = dtypes::float32;
  bool big_endian = false, fortran = false;
  Shape shape;
};

// The header dict: the three keys numpy writes, in any order; anything else is an error
Header parse_header(std::string_view text, const std::string& path, SourceLocation where) {
  auto bad = [&](const std::string& msg) {
    return ArgumentError("load_npy", path + ": " + msg + " in the header " + std::string(text.substr(0, 200)), where);
  };
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) i++;
  };
  auto expect = [&](char c) {
    skip();
    if (i >= text.size() || text[i] != c) throw bad(std::string("expected '") + c + "'");
    i++;
  };
  auto quoted = [&] {
    skip();
    if (i >= text.size() || (text[i] != '\'' && text[i] != '"')) throw bad("expected a quoted string");
    char q = text[i++];
    size_t end = text.find(q, i);
    if (end == std::string_view::npos) throw bad("an unterminated string");
    std::string s(text.substr(i, end - i));
    i = end + 1;
    return s;
  };
  Header h;
  bool seen_descr = false, seen_order = false, seen_shape = false;
  expect('{');
  for (;;) {
    skip();
    if (i < text.size() && text[i] == '}') break;
    std::string key = quoted();
    expect(':');
    skip();
    if (key == "descr") {
      std::string d = quoted();
      if (d.size() < 3 || (d[0] != '<' && d[0] != '>' && d[0] != '|' && d[0] != '='))
        throw bad("descr '" + d + "' is not a plain numeric type (structured and object arrays are not tensors)");
      const DType* found = nullptr;
      for (const auto& [code, dt] : kDescr)
        if (d.substr(1) == code) found = &dt;
      if (!found) throw bad("descr '" + d + "' is a dtype tinygrad.cpp does not have");
      h.dtype = *found;
      h.big_endian = d[0] == '>' && found->itemsize() > 1;
      seen_descr = true;
    } else if (key == "fortran_order") {
      if (text.substr(i, 4) == "True") h.fortran = true, i += 4;
      else if (text.substr(i, 5) == "False") h.fortran = false, i += 5;
      else throw bad("fortran_order is not True or False");
      seen_order = true;
    } else if (key == "shape") {
      expect('(');
      for (;;) {
        skip();
        if (i < text.size() && text[i] == ')') break;
        size_t start = i;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') i++;
        if (i == start || i - start > 18) throw bad("a shape entry is not a non-negative integer");
        h.shape.push_back(std::stoll(std::string(text.substr(start, i - start))));
        skip();
        if (i < text.size() && text[i] == ',') i++;
      }
      i++;
      seen_shape = true;
    } else {
      throw bad("an unknown key '" + key + "'");
    }
    skip();
    if (i < text.size() && text[i] == ',') i++;
  }
  if (!seen_descr || !seen_order || !seen_shape) throw bad("descr, fortran_order or shape is missing");
  return h;
}

}  // namespace

Tensor load_npy(const std::string& path, const std::string& device, SourceLocation where) {
  size_t size = 0;
  std::shared_ptr<const unsigned char> map = state::map_file(path, size, "load_npy", where);
  auto bad = [&](const std::string& msg) { return ArgumentError("load_npy", path + ": " + msg, where); };
  const unsigned char* p = map.get();
  if (size < 10 || std::memcmp(p, kMagic, 6) != 0) throw bad("not a .npy file (no \\x93NUMPY magic)");
  int major = p[6];
  if (major < 1 || major > 3) throw bad("format version " + std::to_string(major) + "." + std::to_string(p[7]) + " is not 1, 2 or 3");
  size_t len_bytes = major == 1 ? 2 : 4, header_len = 0;
  if (size < 8 + len_bytes) throw bad("truncated header");
  for (size_t k = 0; k < len_bytes; k++) header_len |= static_cast<size_t>(p[8 + k]) << (8 * k);
  size_t data_at = 8 + len_bytes + header_len;
  if (data_at > size) throw bad("the header claims " + std::to_string(header_len) + " bytes, the file is " + std::to_string(size));
  Header h = parse_header(std::string_view(reinterpret_cast<const char*>(p) + 8 + len_bytes, header_len), path, where);
  int64_t n = tensor::checked_numel(h.shape, "load_npy", where);
  size_t want = static_cast<size_t>(n) * static_cast<size_t>(h.dtype.itemsize());
  if (size - data_at != want)
    throw bad("shape " + tensor::shape_str(h.shape) + " of " + h.dtype.name() + " needs " + std::to_string(want) +
              " bytes of data, the file has " + std::to_string(size - data_at));
  std::string dev = tensor::resolve_device(device);
  // Fortran order: the data is the transpose's, in C order
  Shape stored = h.shape;
  if (h.fortran) std::reverse(stored.begin(), stored.end());
  Tensor t;
  if (h.big_endian) {  // swapped on the host once
    std::vector<unsigned char> host(p + data_at, p + size);
    size_t item = static_cast<size_t>(h.dtype.itemsize());
    for (size_t k = 0; k < host.size(); k += item) std::reverse(host.begin() + static_cast<std::ptrdiff_t>(k), host.begin() + static_cast<std::ptrdiff_t>(k + item));
    uop::UOp buf = runtime::new_buffer(dev, h.dtype, n);
    if (n) runtime::buffer_of(buf).copyin(host.data(), host.size());
    t = Tensor(buf);
  } else {
    uop::UOp buf = runtime::new_buffer(dev, h.dtype, n);
    if (n) runtime::buffer_of(buf).fill_lazily(p + data_at, map);  // in place, or copied on first use
    t = Tensor(buf);
  }
  t = t.reshape(stored, where);
  if (h.fortran && stored.size() > 1) {
    std::vector<int64_t> order;
    for (int64_t d = static_cast<int64_t>(stored.size()) - 1; d >= 0; d--) order.push_back(d);
    t = t.permute(order, where);
  }
  return t;
}

void save_npy(const Tensor& t, const std::string& path, SourceLocation where) {
  if (!t.defined()) throw ArgumentError("save_npy", "an empty handle for " + path, where);
  const char* code = nullptr;
  for (const auto& [c, dt] : kDescr)
    if (dt == t.dtype()) code = c;
  if (!code)
    throw DTypeError("save_npy", t.dtype().name() + " has no numpy dtype (numpy has no bfloat16): cast it first, for " + path, where);
  std::string shape = "(";
  for (size_t k = 0; k < t.shape().size(); k++) shape += std::to_string(t.shape()[k]) + (t.shape().size() == 1 ? "," : k + 1 < t.shape().size() ? ", " : "");
  shape += ")";
  std::string dict = std::string("{'descr': '") + (t.dtype().itemsize() == 1 ? "|" : "<") + code +
                     "', 'fortran_order': False, 'shape': " + shape + ", }";
  // version 1.0 while the header length fits in 2 bytes; the data starts 64-byte aligned after the newline
  bool v2 = dict.size() + 1 + 10 > 65535;
  size_t prefix = v2 ? 12 : 10, total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  std::string head(kMagic, 6);
  head += static_cast<char>(v2 ? 2 : 1);
  head += '\0';
  for (size_t k = 0; k < (v2 ? 4u : 2u); k++) head += static_cast<char>((dict.size() >> (8 * k)) & 0xff);
  std::vector<uint8_t> data = t.to_bytes();
  state::write_file_atomically(path, {head, dict, {reinterpret_cast<const char*>(data.data()), data.size()}}, "save_npy", where);
}

}  // namespace tg
