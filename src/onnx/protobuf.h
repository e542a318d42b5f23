// The protobuf wire format, read directly: the ONNX frontend's only contact with protobuf, so the library needs no
// protobuf dependency (tinygrad reads ONNX files the same way). A message is a sequence of (field number, wire
// type, value); this reader walks them with every length checked against the bytes it was given.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tg/error.h"

namespace tg::onnx::pb {

enum class Wire : uint8_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

struct Field {
  uint32_t number = 0;
  Wire wire = Wire::Varint;
  uint64_t varint = 0;      // Varint, Fixed64 and Fixed32 values (the fixed ones as raw bits)
  std::string_view bytes;   // Bytes: a string, a sub-message or a packed repeated field
};

// Walks the fields of one message. Errors are tg::ArgumentErrors of "onnx.load" naming `what` (the file and the
// message being read) and the byte offset.
class Reader {
 public:
  Reader(std::string_view data, std::string what) : data_(data), what_(std::move(what)) {}
  bool next(Field& f);  // false at the end of the message

  [[noreturn]] void fail(const std::string& msg) const;
  const std::string& what() const { return what_; }

  // Repeated scalars, packed (the proto3 default) or one value per field occurrence.
  void append_ints(const Field& f, std::vector<int64_t>& out) const;
  void append_uints(const Field& f, std::vector<uint64_t>& out) const;
  void append_floats(const Field& f, std::vector<float>& out) const;
  void append_doubles(const Field& f, std::vector<double>& out) const;
  // A scalar that must be a varint / fixed32 / bytes field.
  int64_t as_int(const Field& f) const;
  float as_float(const Field& f) const;
  std::string_view as_bytes(const Field& f) const;

 private:
  uint64_t varint(size_t& at) const;
  std::string_view data_;
  size_t pos_ = 0;
  std::string what_;
};

}  // namespace tg::onnx::pb
