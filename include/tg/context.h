// Settings read from the environment (DEBUG, NOOPT, BEAM, DEV, CACHELEVEL, ...), which code can also set for a scope.
//
//   tg::getenv_int("DEBUG")          // the value set by the innermost Context, else the environment, else 0
//                                    // (the environment as first read: see reread_environment)
//   { tg::Context ctx{{"DEBUG", 2}}; ... }   // DEBUG=2 inside the braces only
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <variant>

namespace tg {

// An integer setting; a set-but-non-numeric environment value counts as `fallback`.
int64_t getenv_int(const std::string& name, int64_t fallback = 0);
// A string setting: the Context's value, else the environment's, else `fallback`.
std::string getenv_str(const std::string& name, const std::string& fallback = "");
// The environment is read once per name, as tinygrad's getenv is cached; code that changes it later (setenv) calls
// this for the new values to count. A Context needs no such call.
void reread_environment();

// RAII: overrides settings until it is destroyed. Contexts nest; the innermost one wins. Process-wide, so set them
// from one thread.
class Context {
 public:
  using Value = std::variant<int64_t, std::string>;
  struct Setting {
    std::string name;
    Value value;
    Setting(std::string n, int64_t v) : name(std::move(n)), value(v) {}
    Setting(std::string n, int v) : name(std::move(n)), value(int64_t{v}) {}
    Setting(std::string n, std::string v) : name(std::move(n)), value(std::move(v)) {}
    Setting(std::string n, const char* v) : name(std::move(n)), value(std::string(v)) {}
  };
  Context(std::initializer_list<Setting> settings);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

 private:
  size_t count_;
};

}  // namespace tg
