// The programs' command lines, one convention for all: -h or --help prints the usage on stdout and exits 0; a wrong
// argument prints what is wrong and the usage on stderr and exits 2.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tg::cli {

struct Usage {
  const char* program;
  const char* text;  // the usage lines, ending in a newline

  [[noreturn]] void help() const {
    std::fputs(text, stdout);
    std::exit(0);
  }
  [[noreturn]] void fail(const std::string& problem) const {
    std::fprintf(stderr, "%s: %s\n%s", program, problem.c_str(), text);
    std::exit(2);
  }
  // --help answered; any other argument starting with '-' that the program does not take is an error
  void check(int argc, char** argv, bool takes_options = false) const {
    for (int i = 1; i < argc; i++) {
      std::string a = argv[i];
      if (a == "-h" || a == "--help") help();
      if (!takes_options && a.size() > 1 && a[0] == '-') fail("unknown option " + a);
    }
  }
};

}  // namespace tg::cli
