#include "onnx/protobuf.h"

#include <bit>
#include <cstring>

namespace tg::onnx::pb {

static_assert(std::endian::native == std::endian::little, "protobuf's fixed-width values are little-endian; so is this code");

void Reader::fail(const std::string& msg) const {
  throw ArgumentError("onnx.load", what_ + ": " + msg + " (at byte " + std::to_string(pos_) + " of " +
                                       std::to_string(data_.size()) + ")");
}

uint64_t Reader::varint(size_t& at) const {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at >= data_.size()) fail("a varint runs past the end (truncated file?)");
    uint8_t b = static_cast<uint8_t>(data_[at++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  fail("a varint longer than 10 bytes");
}

bool Reader::next(Field& f) {
  if (pos_ >= data_.size()) return false;
  uint64_t key = varint(pos_);
  uint64_t number = key >> 3;
  if (number == 0 || number > 0x1fffffff) fail("field number " + std::to_string(number) + " is out of range");
  f.number = static_cast<uint32_t>(number);
  f.varint = 0;
  f.bytes = {};
  auto take = [&](size_t n) {
    if (n > data_.size() - pos_) fail("field " + std::to_string(number) + " needs " + std::to_string(n) + " bytes, " +
                                      std::to_string(data_.size() - pos_) + " are left (truncated file?)");
    std::string_view s = data_.substr(pos_, n);
    pos_ += n;
    return s;
  };
  switch (key & 7) {
    case 0: f.wire = Wire::Varint; f.varint = varint(pos_); break;
    case 1: { f.wire = Wire::Fixed64; std::string_view s = take(8); std::memcpy(&f.varint, s.data(), 8); break; }
    case 2: { f.wire = Wire::Bytes; uint64_t n = varint(pos_); f.bytes = take(n > data_.size() ? data_.size() + 1 : static_cast<size_t>(n)); break; }
    case 5: { f.wire = Wire::Fixed32; std::string_view s = take(4); uint32_t v; std::memcpy(&v, s.data(), 4); f.varint = v; break; }
    default: fail("wire type " + std::to_string(key & 7) + " of field " + std::to_string(number) + " is not one ONNX uses");
  }
  return true;
}

int64_t Reader::as_int(const Field& f) const {
  if (f.wire != Wire::Varint) fail("field " + std::to_string(f.number) + " should be a varint");
  return static_cast<int64_t>(f.varint);
}

float Reader::as_float(const Field& f) const {
  if (f.wire != Wire::Fixed32) fail("field " + std::to_string(f.number) + " should be a 32-bit float");
  return std::bit_cast<float>(static_cast<uint32_t>(f.varint));
}

std::string_view Reader::as_bytes(const Field& f) const {
  if (f.wire != Wire::Bytes) fail("field " + std::to_string(f.number) + " should be length-delimited");
  return f.bytes;
}

void Reader::append_ints(const Field& f, std::vector<int64_t>& out) const {
  if (f.wire == Wire::Varint) { out.push_back(static_cast<int64_t>(f.varint)); return; }
  if (f.wire != Wire::Bytes) fail("field " + std::to_string(f.number) + " should hold varints");
  Reader packed(f.bytes, what_);
  size_t at = 0;
  while (at < f.bytes.size()) out.push_back(static_cast<int64_t>(packed.varint(at)));
}

void Reader::append_uints(const Field& f, std::vector<uint64_t>& out) const {
  std::vector<int64_t> v;
  append_ints(f, v);
  for (int64_t x : v) out.push_back(static_cast<uint64_t>(x));
}

namespace {
template <class T, class Bits>
void append_fixed(const Reader& r, const Field& f, Wire single, std::vector<T>& out) {
  if (f.wire == single) { out.push_back(std::bit_cast<T>(static_cast<Bits>(f.varint))); return; }
  if (f.wire != Wire::Bytes) r.fail("field " + std::to_string(f.number) + " should hold " + std::to_string(sizeof(T) * 8) + "-bit values");
  if (f.bytes.size() % sizeof(T)) r.fail("a packed field of " + std::to_string(f.bytes.size()) + " bytes is not a whole number of values");
  size_t n = f.bytes.size() / sizeof(T), at = out.size();
  out.resize(at + n);
  if (n) std::memcpy(out.data() + at, f.bytes.data(), n * sizeof(T));
}
}  // namespace

void Reader::append_floats(const Field& f, std::vector<float>& out) const { append_fixed<float, uint32_t>(*this, f, Wire::Fixed32, out); }
void Reader::append_doubles(const Field& f, std::vector<double>& out) const { append_fixed<double, uint64_t>(*this, f, Wire::Fixed64, out); }

}  // namespace tg::onnx::pb
