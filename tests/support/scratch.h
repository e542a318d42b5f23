// A path in a folder of this test process's own, removed at exit: ctest runs the tests as parallel processes, and
// several of them write files of the same name.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace tg::testing {

inline std::string scratch_path(const std::string& name) {
  static const struct Scratch {
    std::string dir = ::testing::TempDir() + "/tg_tests_" + std::to_string(::getpid());
    Scratch() { std::filesystem::create_directories(dir); }
    ~Scratch() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } scratch;
  return scratch.dir + "/" + name;
}

}  // namespace tg::testing
