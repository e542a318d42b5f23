#include "runtime/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

#include "runtime/disk_cache.h"
#include "tg/error.h"

extern char** environ;

namespace tg::runtime {

TempDir::TempDir(const std::string& op) {
  std::string tmpl = temp_dir() + "/tg_cc_XXXXXX";
  if (::mkdtemp(tmpl.data())) path = tmpl;
  else throw CompileError(op, "cannot make a temporary folder in " + temp_dir() + ": " + std::strerror(errno));
}
TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

bool usable_file(const std::string& path, int access_mode) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), access_mode) == 0;
}

std::string find_executable(const std::string& exe, const std::string& path) {
  auto is_executable = [](const std::string& p) { return usable_file(p, X_OK); };
  if (exe.find('/') != std::string::npos) return is_executable(exe) ? exe : "";
  std::stringstream dirs(path);
  std::string d;
  while (std::getline(dirs, d, ':'))
    if (!d.empty() && is_executable(d + "/" + exe)) return d + "/" + exe;
  return "";
}



namespace {
// Waits for `pid` at most timeout_s seconds (0: no limit); false when it is still running then.
bool wait_for(pid_t pid, int64_t timeout_s, int& status) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int pidfd = -1;
#ifdef SYS_pidfd_open
  if (timeout_s > 0) pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));  // readable when it exits
#endif
  auto nap = std::chrono::milliseconds(1);
  bool done = false;
  while (true) {
    pid_t r = ::waitpid(pid, &status, timeout_s > 0 ? WNOHANG : 0);
    if (r == pid || (r < 0 && errno != EINTR)) {
      if (r < 0) status = -1;  // reaped by someone else (SIGCHLD ignored): no status
      done = true;
      break;
    }
    if (r != 0) continue;  // EINTR
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    if (pidfd >= 0) {
      struct pollfd p{pidfd, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    } else {  // no pidfd (old kernel): look again after a growing nap
      std::this_thread::sleep_for(std::min(nap, left));
      nap = std::min(nap * 2, std::chrono::milliseconds(20));
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  return done;
}

}  // namespace

RunResult run(const std::vector<std::string>& argv, const std::string& output_path, int64_t timeout_s) {
  RunResult res;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  pid_t pid;
  int rc = ::posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    res.spawn_error = std::strerror(rc);
    return res;
  }
  res.started = true;
  int status = 0;
  if (!wait_for(pid, timeout_s, status)) {
    res.timed_out = true;
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return res;
  }
  res.output = read_regular_file(output_path, size_t{1} << 20).value_or("");
  if (status != -1 && WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
  if (status != -1 && WIFSIGNALED(status)) res.signal = WTERMSIG(status);
  return res;
}

}  // namespace tg::runtime
