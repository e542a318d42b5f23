// Kernel cache fault tests: corrupt, truncated, empty and hostile entries (a FIFO, links, a device, a sparse giant,
// a truncated shared object with a valid checksum), a warm cache without a compiler, a hung compiler, concurrent
// processes filling one cache, a read-only cache folder and a full disk. Every case must still compute the right
// value, and repair the entry where it can.
//
// A case that must see the disk (not this process's memory caches) runs in a forked child, which reports back
// through a pipe and is killed when it does not finish in time: a hang or a crash there fails the test instead of
// taking the test program down.
#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/buffer.h"
#include "runtime/cpu.h"
#include "runtime/device.h"
#include "runtime/disk_cache.h"
#include "runtime/elf_check.h"
#include "tg/context.h"
#include "tg/error.h"
#include "tg/tensor.h"

using namespace tg;
using namespace tg::runtime;
namespace fs = std::filesystem;

namespace {

// A fresh cache folder for one test, removed afterwards.
struct TempCache {
  std::string dir = "/tmp/tg_fault_cache_" + std::to_string(::getpid()) + "_" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name();
  Context ctx{{"XDG_CACHE_HOME", dir}};
  TempCache() {
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
  }
  ~TempCache() {
    std::error_code ec;
    fs::permissions(dir, fs::perms::owner_all, ec);
    fs::remove_all(dir, ec);
  }
};

struct ChildResult {
  bool finished = false;  // false: killed after the time limit (it hung)
  int exit_code = -1, signal = 0;
  std::string message;  // what the child reported: "" when all went well
  std::string describe() const {
    if (!finished) return "the child hung (killed after the time limit)";
    if (signal) return "the child died of signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
    return "exit " + std::to_string(exit_code) + ": " + message;
  }
  bool ok() const { return finished && signal == 0 && exit_code == 0 && message.empty(); }
  bool skipped() const { return finished && message.rfind("SKIP: ", 0) == 0; }
};

// Runs fn in a forked child: its result string is its report ("" = success; "SKIP: why" = cannot run here). The
// child starts with this process's memory caches, so it must use sources the parent never built.
ChildResult in_child(const std::function<std::string()>& fn, int timeout_s = 60) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {true, -1, 0, "pipe failed"};
  ::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return {true, -1, 0, "fork failed"};
  if (pid == 0) {
    ::close(fds[0]);
    std::string msg;
    try {
      Context one_thread{{"CPU_THREADS", 1}};  // the parent's worker threads do not exist here
      msg = fn();
    } catch (const std::exception& e) {
      msg = std::string("exception: ") + e.what();
    } catch (...) {
      msg = "unknown exception";
    }
    for (size_t done = 0; done < msg.size();) {
      ssize_t n = ::write(fds[1], msg.data() + done, msg.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::_exit(msg.empty() ? 0 : 1);
  }
  ::close(fds[1]);
  ChildResult r;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool eof = false;
  while (!eof) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    struct pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) r.message.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) eof = true;
  }
  ::close(fds[0]);
  if (!eof) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.finished = eof;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// One kernel of our ABI, out = a + b + 0; `tag` makes it a source (and a cache entry) of its own.
struct AddKernel {
  std::string function, src;
  explicit AddKernel(const std::string& tag) {
    function = "add_" + tag;
    src = "#include <stdint.h>\n"
          "void " + function + "(void* const* bufs, const int64_t* vars) {\n"
          "  float* out = bufs[0]; const float* a = bufs[1]; const float* b = bufs[2];\n"
          "  *out = *a + *b;\n"
          "}\n";
  }
  std::string key() const { return get_device("CPU").compiler().cache_key() + "\n" + src; }
  std::string path() const { return disk_cache_path("cpu", key()); }
  // Loads it through the device (memory, disk, compiler) and runs 2 + 3: "" when it gives 5.
  std::string run() const {
    Device& cpu = get_device("CPU");
    Buffer a(cpu, 1, dtypes::float32), b(cpu, 1, dtypes::float32), out(cpu, 1, dtypes::float32);
    float two = 2, three = 3, five = 0;
    a.copyin(&two, 4);
    b.copyin(&three, 4);
    std::shared_ptr<Program> p = cpu.program(function, src);
    void* bufs[] = {out.ptr(), a.ptr(), b.ptr()};
    (*p)(bufs, nullptr);
    out.copyout(&five, 4);
    return five == 5.0f ? "" : "2 + 3 gave " + std::to_string(five);
  }
};

// The cached value of a kernel split into (compiler id, binary); nullopt when there is no valid entry.
std::optional<std::pair<std::string, std::string>> cached(const AddKernel& k) {
  std::optional<std::string> v = disk_cache_get("cpu", k.key());
  if (!v || v->find('\n') == std::string::npos) return std::nullopt;
  size_t nl = v->find('\n');
  return std::make_pair(v->substr(0, nl), v->substr(nl + 1));
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void write_file(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// A child that runs the kernel and reports how many compiles it needed; "" unless it gave 5 with `compiles`.
std::string run_expecting(const AddKernel& k, int64_t compiles) {
  int64_t before = compile_stats().compiled;
  std::string bad = k.run();
  if (!bad.empty()) return bad;
  int64_t n = compile_stats().compiled - before;
  return n == compiles ? "" : "compiled " + std::to_string(n) + " times, expected " + std::to_string(compiles);
}

// Warms the cache with `k` in a child, lets `spoil` replace its entry, runs it again in another child (it must give
// 5 and compile once: the entry was ignored), then checks whether the entry was repaired.
// `after` checks more before the cache folder goes.
void check_spoiled_entry(const std::string& tag, const std::function<void(const AddKernel&)>& spoil, bool repaired,
                         const std::function<void()>& after = {}) {
  TempCache cache;
  AddKernel k(tag);
  ChildResult warm = in_child([&] { return run_expecting(k, 1); });
  ASSERT_TRUE(warm.ok()) << "warming: " << warm.describe();
  ASSERT_TRUE(cached(k).has_value()) << "the warm-up left no entry at " << k.path();
  spoil(k);
  auto t0 = std::chrono::steady_clock::now();
  ChildResult again = in_child([&] { return run_expecting(k, 1); });
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(again.ok()) << tag << ": " << again.describe();
  EXPECT_LT(seconds, 30) << tag;
  if (repaired) {
    struct stat st;
    ASSERT_EQ(::lstat(k.path().c_str(), &st), 0) << tag;
    EXPECT_TRUE(S_ISREG(st.st_mode)) << tag << ": the entry is not a regular file again";
    auto entry = cached(k);
    ASSERT_TRUE(entry.has_value()) << tag << ": the entry was not rewritten";
    EXPECT_EQ(elf_problem(entry->second), "") << tag;
    // and the repaired entry is used: a third process compiles nothing
    ChildResult third = in_child([&] { return run_expecting(k, 0); });
    EXPECT_TRUE(third.ok()) << tag << " (after the repair): " << third.describe();
  }
  if (after) after();
}

// Rewrites the entry with a valid checksum around another value (what a buggy or hostile writer could leave).
void put_value(const AddKernel& k, const std::string& id, const std::string& binary) {
  disk_cache_put("cpu", k.key(), id + "\n" + binary);
}

}  // namespace

TEST(CacheFaults, EmptyEntryIsRebuilt) {
  check_spoiled_entry("empty", [](const AddKernel& k) { fs::resize_file(k.path(), 0); }, true);
}

TEST(CacheFaults, TruncatedEntryIsRebuilt) {
  check_spoiled_entry("truncated", [](const AddKernel& k) { fs::resize_file(k.path(), fs::file_size(k.path()) / 2); }, true);
}

TEST(CacheFaults, CorruptEntryIsRebuilt) {
  check_spoiled_entry("corrupt", [](const AddKernel& k) {
    std::string data = read_file(k.path());
    data[data.size() / 2] ^= 0x5a;
    write_file(k.path(), data);
  }, true);
}

// Before: the read blocked forever waiting for a writer.
TEST(CacheFaults, FifoEntryIsIgnoredAndReplaced) {
  check_spoiled_entry("fifo", [](const AddKernel& k) {
    fs::remove(k.path());
    ASSERT_EQ(::mkfifo(k.path().c_str(), 0644), 0) << std::strerror(errno);
  }, true);
}

// Before: /dev/zero was read until std::bad_alloc. The link is not followed, and the repair replaces the link
// (not what it points at).
TEST(CacheFaults, LinkToDevZeroIsIgnoredAndReplaced) {
  check_spoiled_entry("devzero", [](const AddKernel& k) {
    fs::remove(k.path());
    fs::create_symlink("/dev/zero", k.path());
  }, true);
}

// A link to a valid entry outside the cache is not followed either: nothing of the cache is read from elsewhere.
// The repair renames a new file over the link; the file it pointed at is left as it was.
TEST(CacheFaults, LinkOutOfTheCacheIsNotFollowed) {
  std::string outside, before;
  check_spoiled_entry("outside", [&](const AddKernel& k) {
    outside = k.path() + "_outside";  // a name no lookup uses, standing for a file anywhere else
    fs::rename(k.path(), outside);
    before = read_file(outside);
    fs::create_symlink(outside, k.path());
  }, true, [&] { EXPECT_EQ(read_file(outside), before); });
}

TEST(CacheFaults, SparseGiantEntryIsNotRead) {
  check_spoiled_entry("giant", [](const AddKernel& k) { fs::resize_file(k.path(), uint64_t{8} << 30); }, true);
}

// Before: dlopen mapped the segments past the end of the object and the process died of SIGBUS.
TEST(CacheFaults, TruncatedSharedObjectWithValidChecksumIsRebuilt) {
  check_spoiled_entry("truncso", [](const AddKernel& k) {
    auto e = cached(k);
    ASSERT_TRUE(e.has_value());
    put_value(k, e->first, e->second.substr(0, e->second.size() / 2));
  }, true);
}

TEST(CacheFaults, SegmentPastTheEndIsRebuilt) {
  check_spoiled_entry("segment", [](const AddKernel& k) {
    auto e = cached(k);
    ASSERT_TRUE(e.has_value());
    std::string so = e->second;
    // the second program header (a PT_LOAD in every object clang and gcc write): file size 16 MiB
    Elf64_Ehdr eh;
    std::memcpy(&eh, so.data(), sizeof eh);
    bool changed = false;
    for (size_t i = 0; i < eh.e_phnum && !changed; i++) {
      Elf64_Phdr ph;
      std::memcpy(&ph, so.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
      if (ph.p_type != PT_LOAD) continue;
      ph.p_filesz = ph.p_memsz = uint64_t{16} << 20;
      std::memcpy(so.data() + eh.e_phoff + i * sizeof ph, &ph, sizeof ph);
      changed = true;
    }
    ASSERT_TRUE(changed);
    put_value(k, e->first, so);
  }, true);
}

TEST(CacheFaults, GarbageBinaryWithValidChecksumIsRebuilt) {
  check_spoiled_entry("garbage", [](const AddKernel& k) {
    auto e = cached(k);
    ASSERT_TRUE(e.has_value());
    put_value(k, e->first, std::string(4096, '\x7f'));
  }, true);
}

// A well-formed object that is not this kernel's (no such function): the loader refuses it, and the device
// compiles the kernel again and replaces the entry.
TEST(CacheFaults, AnotherKernelsObjectIsRebuilt) {
  check_spoiled_entry("wrongobject", [](const AddKernel& k) {
    auto e = cached(k);
    ASSERT_TRUE(e.has_value());
    put_value(k, e->first, get_device("CPU").compiler().compile(AddKernel("someotherkernel").src));
  }, true);
}

// An entry another compiler made is rebuilt while a compiler is present (a warm cache without one takes it).
TEST(CacheFaults, AnotherCompilersEntryIsRebuilt) {
  check_spoiled_entry("othercc", [](const AddKernel& k) {
    auto e = cached(k);
    ASSERT_TRUE(e.has_value());
    put_value(k, "/opt/other/cc some other version 0.1", e->second);
  }, true);
}

// A folder where the entry should be: ignored; it cannot be replaced, so the value is just not cached.
TEST(CacheFaults, FolderInPlaceOfAnEntryIsIgnored) {
  check_spoiled_entry("folder", [](const AddKernel& k) {
    fs::remove(k.path());
    fs::create_directories(k.path() + "/inside");
  }, false);
}

// The table's folder replaced by a link to a copy elsewhere: not followed for reading, nor written through.
TEST(CacheFaults, LinkedTableFolderIsNotFollowed) {
  std::string elsewhere;
  check_spoiled_entry("linkedtable", [&](const AddKernel& k) {
    fs::path table = fs::path(k.path()).parent_path();
    elsewhere = (table.parent_path().parent_path() / "elsewhere").string();
    fs::rename(table, elsewhere);
    fs::create_symlink(elsewhere, table);
  }, false, [&] {
    // nothing new was written through the link: the folder still holds only the warm-up's entry
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(elsewhere)) files += e.is_regular_file() ? 1 : 0;
    EXPECT_EQ(files, 1u);
  });
}

// A character device (made with mknod, which needs root) in place of an entry: not opened for reading.
TEST(CacheFaults, DeviceFileEntryIsIgnoredAndReplaced) {
  {
    TempCache probe;
    std::string node = probe.dir + "/node";
    if (::mknod(node.c_str(), S_IFCHR | 0644, makedev(1, 5)) != 0)
      GTEST_SKIP() << "cannot make a device node here (mknod: " << std::strerror(errno) << "; it needs root)";
  }
  check_spoiled_entry("chardev", [](const AddKernel& k) {
    fs::remove(k.path());
    ASSERT_EQ(::mknod(k.path().c_str(), S_IFCHR | 0644, makedev(1, 5)), 0) << std::strerror(errno);  // /dev/zero
  }, true);
}

// The ELF check itself: a real object passes; every prefix of it, and foreign headers, do not.
TEST(CacheFaults, ElfCheckRefusesTruncationsAndForeignObjects) {
  TempCache cache;
  std::string so = get_device("CPU").compiler().compile(AddKernel("elfcheck").src);
  ASSERT_EQ(elf_problem(so), "");
  for (size_t n : {size_t{0}, size_t{1}, size_t{4}, size_t{63}, size_t{64}, size_t{100}, so.size() / 4, so.size() / 2,
                   so.size() - 1})
    EXPECT_NE(elf_problem(std::string_view(so).substr(0, n)), "") << "a prefix of " << n << " of " << so.size() << " bytes";
  std::string other = so;
  other[EI_CLASS] = ELFCLASS32;
  EXPECT_NE(elf_problem(other), "");
  other = so;
  other[18] ^= 0x7;  // e_machine
  EXPECT_NE(elf_problem(other), "");
  other = so;
  other[16] = ET_EXEC;  // e_type
  EXPECT_NE(elf_problem(other), "");
  // and the device refuses to load one (a DeviceError, not a crash in dlopen)
  EXPECT_THROW(get_device("CPU").load("add_elfcheck", so.substr(0, so.size() / 2)), DeviceError);
}

// With every kernel cached and no C compiler anywhere, a program still runs (that is how a program ships); a kernel
// that is not cached still raises the CompileError saying what to install.
TEST(CacheFaults, WarmCacheRunsWithoutACompiler) {
  TempCache cache;
  // a graph no other test builds (its constants are in the kernel's source)
  auto compute = [] {
    Tensor x({1.25f, 2.5f, 3.75f, 5.0f});
    return ((x * 3.0625f + 0.4375f).relu().sum()).item<float>();
  };
  const float expected = (1.25f + 2.5f + 3.75f + 5.0f) * 3.0625f + 4 * 0.4375f;
  ChildResult warm = in_child([&]() -> std::string {
    float got = compute();
    return got == expected ? "" : "warm-up computed " + std::to_string(got);
  });
  ASSERT_TRUE(warm.ok()) << warm.describe();
  for (const char* cc : {"", "/nonexistent/bin/clang"}) {
    ChildResult r = in_child([&]() -> std::string {
      Context no_compiler{{"PATH", "/nonexistent/bin"}, {"CC", cc}};
      CompileStats before = compile_stats();
      float got = compute();
      if (got != expected) return "computed " + std::to_string(got);
      if (compile_stats().compiled != before.compiled) return "compiled without a compiler?";
      if (compile_stats().disk_hits == before.disk_hits) return "nothing came from the disk cache";
      // a cold miss: the clear error
      try {
        AddKernel("nocompiler").run();
        return "a cold miss without a compiler raised nothing";
      } catch (const CompileError& e) {
        std::string what = e.what();
        if (what.find("clang") == std::string::npos || what.find("gcc") == std::string::npos)
          return "the error does not say what to install: " + what;
        if (*cc && what.find(cc) == std::string::npos) return "the error does not name CC: " + what;
      }
      return "";
    });
    EXPECT_TRUE(r.ok()) << "CC='" << cc << "': " << r.describe();
  }
}

// A compiler that never finishes is killed (with what it started) after CC_TIMEOUT seconds: a CompileError
// naming it and the limit, quickly.
TEST(CacheFaults, HungCompilerTimesOut) {
  TempCache cache;
  std::string script = cache.dir + "/hang-cc", pids = cache.dir + "/pids";
  write_file(script, "#!/bin/sh\necho $$ > " + pids + "\nsleep 300 &\necho $! >> " + pids + "\nwait\n");
  fs::permissions(script, fs::perms::owner_all);
  Context ctx{{"CC", script}, {"CC_TIMEOUT", 1}};
  auto t0 = std::chrono::steady_clock::now();
  try {
    get_device("CPU").compiler().compile_cached(AddKernel("hung").src);
    FAIL() << "a hung compiler raised nothing";
  } catch (const CompileError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(script), std::string::npos) << what;
    EXPECT_NE(what.find("CC_TIMEOUT=1"), std::string::npos) << what;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 30);
  // the shell and its sleep are gone (or zombies waiting for init)
  std::ifstream f(pids);
  std::vector<pid_t> started;
  for (pid_t p; f >> p;) started.push_back(p);
  EXPECT_EQ(started.size(), 2u);
  for (pid_t p : started) {
    bool gone = false;
    for (int i = 0; i < 500 && !gone; i++) {
      std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
      std::string line;
      gone = !std::getline(stat, line) || line.find(") Z") != std::string::npos;
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(gone) << "process " << p << " of the hung compiler still runs";
  }
}

// Several processes fill one cache at once: each computes right, no one reads a partial entry, and what is left is
// whole entries (no temporary files).
TEST(CacheFaults, ConcurrentProcessesFillOneCache) {
  TempCache cache;
  constexpr int kProcs = 4, kKernels = 3;
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> kids;
  std::vector<int> reports;
  for (int p = 0; p < kProcs; p++) {
    int rep[2];
    ASSERT_EQ(::pipe(rep), 0);
    ::fflush(nullptr);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(gate[1]);
      ::close(rep[0]);
      char c;
      while (::read(gate[0], &c, 1) < 0 && errno == EINTR) {
      }  // all start together
      std::string msg;
      try {
        Context one_thread{{"CPU_THREADS", 1}};
        for (int k = 0; k < kKernels && msg.empty(); k++) msg = AddKernel("together" + std::to_string(k)).run();
        // values of different sizes written and read back under one key: a read is a whole value or a miss
        for (int i = 0; i < 40 && msg.empty(); i++) {
          char mine = static_cast<char>('a' + p);
          disk_cache_put("race", "key", std::string(size_t{20000} * (p + 1) + i, mine));
          std::optional<std::string> v = disk_cache_get("race", "key");
          if (!v) continue;
          char who = (*v)[0];
          size_t base = size_t{20000} * static_cast<size_t>(who - 'a' + 1);
          if (who < 'a' || who >= 'a' + kProcs || v->size() < base || v->size() >= base + 40 ||
              v->find_first_not_of(who) != std::string::npos)
            msg = "read a mixed or partial value of " + std::to_string(v->size()) + " bytes";
        }
      } catch (const std::exception& e) {
        msg = std::string("exception: ") + e.what();
      }
      ssize_t unused = ::write(rep[1], msg.data(), msg.size());
      (void)unused;
      ::_exit(msg.empty() ? 0 : 1);
    }
    ::close(rep[1]);
    kids.push_back(pid);
    reports.push_back(rep[0]);
  }
  ::close(gate[0]);
  ::close(gate[1]);  // EOF: go
  for (int p = 0; p < kProcs; p++) {
    std::string msg;
    char buf[512];
    for (ssize_t n; (n = ::read(reports[p], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<size_t>(n));
    ::close(reports[p]);
    int status = 0;
    ::waitpid(kids[p], &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "process " << p << ": " << msg << " (status " << status << ")";
  }
  for (int k = 0; k < kKernels; k++) {
    auto e = cached(AddKernel("together" + std::to_string(k)));
    ASSERT_TRUE(e.has_value()) << "kernel " << k;
    EXPECT_EQ(elf_problem(e->second), "");
  }
  for (const auto& e : fs::recursive_directory_iterator(disk_cache_dir()))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << "left behind: " << e.path();
}

namespace {

// Runs fn in a child with a mount namespace of its own in which a tmpfs (mount options `opts`, read-only when
// `read_only`) is mounted on `dir`; a SKIP report when this machine does not allow it.
ChildResult with_tmpfs(const std::string& dir, const std::string& opts, bool read_only,
                       const std::function<std::string()>& fn) {
  return in_child([&]() -> std::string {
    if (::unshare(CLONE_NEWNS) != 0) return std::string("SKIP: no mount namespace here (unshare: ") + std::strerror(errno) + ")";
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      return std::string("SKIP: cannot make mounts private (") + std::strerror(errno) + ")";
    if (::mount("tmpfs", dir.c_str(), "tmpfs", read_only ? MS_RDONLY : 0, opts.c_str()) != 0)
      return std::string("SKIP: cannot mount a tmpfs (") + std::strerror(errno) + ")";
    return fn();
  });
}

}  // namespace

// A cache folder that cannot be written: programs run, nothing is cached, nothing fails.
TEST(CacheFaults, ReadOnlyCacheFolderMeansNoCaching) {
  TempCache cache;
  AddKernel k("readonly");
  auto body = [&]() -> std::string {
    Context note{{"DEBUG", 1}};  // the note it prints must not be an error either
    std::string bad = run_expecting(k, 1);
    if (!bad.empty()) return bad;
    if (cached(k)) return "an entry was written into a read-only folder";
    return "";
  };
  ChildResult r;
  if (::geteuid() != 0) {
    fs::permissions(cache.dir, fs::perms::owner_read | fs::perms::owner_exec);
    r = in_child(body);
  } else {
    // root writes through permission bits: a read-only mount instead, where one can be made
    r = with_tmpfs(cache.dir, "size=1m", true, body);
    if (r.skipped())
      GTEST_SKIP() << "running as root (chmod cannot make a folder read-only) and " << r.message.substr(6);
  }
  EXPECT_TRUE(r.ok()) << r.describe();
}

// A full disk: the entry cannot be written; the program runs and no partial entry or temporary file is left.
TEST(CacheFaults, FullDiskMeansNoCaching) {
  TempCache cache;
  AddKernel k("fulldisk");
  ChildResult r = with_tmpfs(cache.dir, "size=64k", false, [&]() -> std::string {
    // fill it up
    int fd = ::open((cache.dir + "/filler").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return std::string("cannot write the filler: ") + std::strerror(errno);
    std::string block(4096, 'x');
    while (::write(fd, block.data(), block.size()) > 0) {
    }
    ::close(fd);
    Context note{{"DEBUG", 1}};
    std::string bad = run_expecting(k, 1);
    if (!bad.empty()) return bad;
    if (cached(k)) return "an entry was cached on a full disk?";
    for (const auto& e : fs::recursive_directory_iterator(cache.dir))
      if (e.is_regular_file() && e.path().filename() != "filler") return "left behind: " + e.path().string();
    return "";
  });
  if (r.skipped()) GTEST_SKIP() << r.message.substr(6);
  EXPECT_TRUE(r.ok()) << r.describe();
}
