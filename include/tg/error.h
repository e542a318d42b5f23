// tg::Error: the one exception type tinygrad.cpp throws, with a kind for each family of failure.
#pragma once
#include <stdexcept>
#include <string>

namespace tg {

// Where a call was made: our stand-in for std::source_location, which clang 14 with libstdc++ lacks. As a
// defaulted parameter, SourceLocation::current() captures the caller's file and line.
class SourceLocation {
 public:
  static constexpr SourceLocation current(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) noexcept {
    return SourceLocation(file, line);
  }
  constexpr SourceLocation() = default;
  constexpr const char* file_name() const { return file_; }
  constexpr unsigned line() const { return line_; }
  std::string str() const;  // "model.cpp:12" (the file's base name), or "" when unknown

 private:
  constexpr SourceLocation(const char* file, unsigned line) : file_(file), line_(line) {}
  const char* file_ = "";
  unsigned line_ = 0;
};

enum class ErrorKind {
  Shape,     // user error: shapes that do not fit the op
  DType,     // user error: a dtype the op does not accept
  Argument,  // user error: any other bad argument (axis, range, value)
  Compile,   // generated code failed to compile, or a rewrite did not converge
  Device,    // the device failed: allocation, launch, copy
  Internal,  // a bug in tinygrad.cpp itself
};

const char* error_kind_name(ErrorKind kind);

// what() reads "tg::ShapeError in reshape: cannot reshape (2, 3) to (4,) [at model.cpp:12]".
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string op, const std::string& message,
        SourceLocation where = SourceLocation::current());
  ErrorKind kind() const { return kind_; }
  const std::string& op() const { return op_; }            // the op or function that raised it
  const std::string& message() const { return message_; }  // the message without the decoration
  const SourceLocation& where() const { return where_; }
  bool is_user_error() const { return kind_ == ErrorKind::Shape || kind_ == ErrorKind::DType || kind_ == ErrorKind::Argument; }

 private:
  ErrorKind kind_;
  std::string op_, message_;
  SourceLocation where_;
};

// One class per family so callers can catch exactly what they handle.
class UserError : public Error { using Error::Error; };
class ShapeError : public UserError {
 public:
  ShapeError(std::string op, const std::string& msg, SourceLocation w = SourceLocation::current())
      : UserError(ErrorKind::Shape, std::move(op), msg, w) {}
};
class DTypeError : public UserError {
 public:
  DTypeError(std::string op, const std::string& msg, SourceLocation w = SourceLocation::current())
      : UserError(ErrorKind::DType, std::move(op), msg, w) {}
};
class ArgumentError : public UserError {
 public:
  ArgumentError(std::string op, const std::string& msg, SourceLocation w = SourceLocation::current())
      : UserError(ErrorKind::Argument, std::move(op), msg, w) {}
};
class CompileError : public Error {
 public:
  CompileError(std::string op, const std::string& msg, SourceLocation w = SourceLocation::current())
      : Error(ErrorKind::Compile, std::move(op), msg, w) {}
};
class DeviceError : public Error {
 public:
  DeviceError(std::string op, const std::string& msg, SourceLocation w = SourceLocation::current())
      : Error(ErrorKind::Device, std::move(op), msg, w) {}
};
class InternalError : public Error {
 public:
  InternalError(std::string op, const std::string& msg, SourceLocation w = SourceLocation::current())
      : Error(ErrorKind::Internal, std::move(op), msg, w) {}
};

// Throws an error of e's class with `note` appended to its message and a new location (adding context on the way up).
[[noreturn]] void rethrow_with_note(const Error& e, const std::string& note, SourceLocation where);
// Throws an error of e's class with another op, message and location.
[[noreturn]] void rethrow_as(const Error& e, const std::string& op, const std::string& message, SourceLocation where);

}  // namespace tg
