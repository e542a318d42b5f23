// One check for the error tests: a call raises E, naming `op`, holding every one of `parts`, raised at the line
// `line` of `file` (line 0: any line of that file).
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tg/error.h>

namespace tg::testing {

inline void check_error(const Error& e, const std::string& op, const std::vector<std::string>& parts, const char* file,
                        unsigned line) {
  std::string what = e.what();
  EXPECT_EQ(e.op(), op) << what;
  for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
  EXPECT_NE(std::string(e.where().file_name()).find(file), std::string::npos) << "not raised at " << file << ": " << what;
  if (line) {
    EXPECT_EQ(e.where().line(), line) << what;
  }
}

template <class E, class F>
void expect_error(F f, const std::string& op, const std::vector<std::string>& parts, const char* file, unsigned line = 0) {
  try {
    f();
    ADD_FAILURE() << op << ": no error";
  } catch (const E& e) {
    check_error(e, op, parts, file, line);
  } catch (const std::exception& e) {
    ADD_FAILURE() << op << ": wrong exception type: " << e.what();
  }
}

}  // namespace tg::testing
