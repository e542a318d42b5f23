#include "tg/error.h"

#include <cstring>

namespace tg {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Shape: return "ShapeError";
    case ErrorKind::DType: return "DTypeError";
    case ErrorKind::Argument: return "ArgumentError";
    case ErrorKind::Compile: return "CompileError";
    case ErrorKind::Device: return "DeviceError";
    case ErrorKind::Internal: return "InternalError";
  }
  return "Error";
}

static std::string format_error(ErrorKind kind, const std::string& op, const std::string& message,
                                const SourceLocation& where) {
  std::string s = std::string("tg::") + error_kind_name(kind);
  if (!op.empty()) s += " in " + op;
  s += ": " + message;
  if (std::string at = where.str(); !at.empty()) s += " [at " + at + "]";
  return s;
}

std::string SourceLocation::str() const {
  if (!file_ || !file_[0]) return "";
  // keep only the file's base name: the full build path is noise in a message
  const char* file = file_;
  if (const char* slash = std::strrchr(file, '/')) file = slash + 1;
  return std::string(file) + ":" + std::to_string(line_);
}

Error::Error(ErrorKind kind, std::string op, const std::string& message, SourceLocation where)
    : std::runtime_error(format_error(kind, op, message, where)),
      kind_(kind),
      op_(std::move(op)),
      message_(message),
      where_(where) {}

void rethrow_with_note(const Error& e, const std::string& note, SourceLocation where) {
  rethrow_as(e, e.op(), e.message() + note, where);
}

void rethrow_as(const Error& e, const std::string& op, const std::string& msg, SourceLocation where) {
  switch (e.kind()) {
    case ErrorKind::Shape: throw ShapeError(op, msg, where);
    case ErrorKind::DType: throw DTypeError(op, msg, where);
    case ErrorKind::Argument: throw ArgumentError(op, msg, where);
    case ErrorKind::Compile: throw CompileError(op, msg, where);
    case ErrorKind::Device: throw DeviceError(op, msg, where);
    case ErrorKind::Internal: throw InternalError(op, msg, where);
  }
  throw e;
}

}  // namespace tg
