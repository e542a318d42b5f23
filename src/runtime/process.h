// Running a tool as a process of its own (the CPU's compiler and linker, objdump for DEBUG=6, Graphviz's dot for
// GRAPH=1): found on PATH, given a private temporary folder, killed with everything it started after a timeout.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/util.h"

namespace tg::runtime {

using base::temp_dir;  // $TMPDIR, else /tmp

// A private folder (mkdtemp: no other user can plant a file or a link in it), removed with its contents at the end.
// Raises tg::CompileError naming `op` when none can be made.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string& op = "CPU");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// a regular file this process may use as `access_mode` says (X_OK: run it, R_OK: read it)
bool usable_file(const std::string& path, int access_mode);

// `exe` as a path to run: itself when it names a folder, else the first match on `path` (a PATH-like list); "" when
// none.
std::string find_executable(const std::string& exe, const std::string& path);

struct RunResult {
  bool started = false, timed_out = false;
  int exit_code = -1, signal = 0;
  std::string spawn_error, output;
};

// Runs argv (argv[0] a path) in a process group of its own with stdin from /dev/null and stdout and stderr to
// output_path (its first MiB comes back in `output`); after timeout_s seconds (0: no limit) the whole group (the
// tool and what it started: cc1, as, ld) is killed.
RunResult run(const std::vector<std::string>& argv, const std::string& output_path, int64_t timeout_s);

}  // namespace tg::runtime
