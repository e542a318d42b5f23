#include "runtime/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "tg/context.h"

namespace tg::runtime {

namespace {

// No entry is larger: a compiled kernel is kilobytes. A larger file is not read (a sparse or hostile one).
constexpr size_t kMaxEntryBytes = size_t{256} << 20;

uint64_t fnv1a(std::string_view s, uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; i++) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
bool get_u64(const std::string& in, size_t& at, uint64_t& v) {
  if (at + 8 > in.size()) return false;
  v = 0;
  for (int i = 0; i < 8; i++) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  at += 8;
  return true;
}

constexpr char kMagic[4] = {'T', 'G', 'C', '1'};

// A file descriptor closed on scope exit.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// mkdir -p; the errno of the last folder that could not be made (0 when all exist)
int make_dirs(const std::string& path) {
  int err = 0;
  for (size_t i = 1; i <= path.size(); i++)
    if (i == path.size() || path[i] == '/')
      if (::mkdir(path.substr(0, i).c_str(), 0755) != 0 && errno != EEXIST) err = errno;
  return err;
}

// The folder of `table` inside the cache: the cache folder itself may be a link (the user put it elsewhere), the
// table's folder may not (nothing of the cache is read from outside it). -1 when it is missing.
int open_table(const std::string& dir, const std::string& table) {
  Fd base(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (base.fd < 0) return -1;
  return ::openat(base.fd, table.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

// Reads an open descriptor when it is a regular file of at most max_bytes: exactly its size, or nullopt.
std::optional<std::string> read_regular(int fd, size_t max_bytes) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 || static_cast<uint64_t>(st.st_size) > max_bytes)
    return std::nullopt;
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::pread(fd, out.data() + got, out.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // an error, or the file shrank under us
    got += static_cast<size_t>(n);
  }
  return out;
}

std::optional<std::string> read_entry(const std::string& table, const std::string& name) {
  std::string dir = disk_cache_dir();
  if (dir.empty()) return std::nullopt;
  Fd t(open_table(dir, table));
  if (t.fd < 0) return std::nullopt;
  // O_NOFOLLOW: a link is not followed (ELOOP); O_NONBLOCK: opening a FIFO does not wait for a writer
  Fd f(::openat(t.fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (f.fd < 0) return std::nullopt;
  return read_regular(f.fd, kMaxEntryBytes);
}

// An unwritable cache (read-only, full disk) costs time only: said once under DEBUG>=1.
void note_unwritable(const std::string& what, int err) {
  static std::atomic<bool> said{false};
  if (getenv_int("DEBUG") >= 1 && !said.exchange(true))
    std::fprintf(stderr, "disk cache: cannot write %s (%s); running without caching\n", what.c_str(), std::strerror(err));
}

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::string hash_hex(const std::string& data) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(fnv1a(data, 0xcbf29ce484222325ull)),
                static_cast<unsigned long long>(fnv1a(data, 0x84222325cbf29ce4ull ^ data.size())));
  return buf;
}

std::string disk_cache_dir() {
  if (getenv_int("DISABLE_COMPILER_CACHE") != 0 || getenv_int("CACHELEVEL", 1) == 0) return "";
  std::string base = getenv_str("XDG_CACHE_HOME");
  if (base.empty()) {
    std::string home = getenv_str("HOME");
    if (home.empty()) return "";
    base = home + "/.cache";
  }
  return base + "/tinygrad.cpp";
}

std::string disk_cache_path(const std::string& table, const std::string& key) {
  std::string dir = disk_cache_dir();
  return dir.empty() ? "" : dir + "/" + table + "/" + hash_hex(key);
}

std::optional<std::string> read_regular_file(const std::string& path, size_t max_bytes) {
  Fd f(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (f.fd < 0) return std::nullopt;
  return read_regular(f.fd, max_bytes);
}

std::optional<std::string> disk_cache_get(const std::string& table, const std::string& key) {
  std::optional<std::string> entry = read_entry(table, hash_hex(key));
  if (!entry) return std::nullopt;
  const std::string& in = *entry;
  // layout: magic, key length, key, value length, value, checksum of everything before it
  size_t at = 4;
  uint64_t klen = 0, vlen = 0, sum = 0;
  if (in.size() < 4 || std::memcmp(in.data(), kMagic, 4) != 0) return std::nullopt;
  if (!get_u64(in, at, klen) || klen != key.size() || klen > in.size() - at || in.compare(at, klen, key) != 0)
    return std::nullopt;
  at += klen;
  if (!get_u64(in, at, vlen) || vlen > in.size() - at) return std::nullopt;
  size_t value_at = at;
  at += vlen;
  size_t body = at;
  if (!get_u64(in, at, sum) || at != in.size() || sum != fnv1a(std::string_view(in).substr(0, body), 0xcbf29ce484222325ull))
    return std::nullopt;
  return in.substr(value_at, vlen);
}

void disk_cache_put(const std::string& table, const std::string& key, const std::string& value) {
  std::string dir = disk_cache_dir();
  if (dir.empty()) return;
  int mkdir_err = make_dirs(dir + "/" + table);
  Fd t(open_table(dir, table));
  if (t.fd < 0) return note_unwritable(dir + "/" + table, mkdir_err ? mkdir_err : errno);
  std::string out(kMagic, 4);
  put_u64(out, key.size());
  out += key;
  put_u64(out, value.size());
  out += value;
  put_u64(out, fnv1a(out, 0xcbf29ce484222325ull));
  std::string name = hash_hex(key);
  // a temporary name no other writer uses (O_EXCL), renamed over the entry: readers see the old or the new file
  static std::atomic<uint64_t> counter{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 8; attempt++) {
    tmp = name + ".tmp" + std::to_string(::getpid()) + "." + std::to_string(counter++);
    fd = ::openat(t.fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return note_unwritable(dir + "/" + table, errno);
  bool ok = write_all(fd, out);
  int err = errno;
  if (::close(fd) != 0 && ok) ok = false, err = errno;  // a full disk can show up only at close (NFS)
  if (!ok) {
    ::unlinkat(t.fd, tmp.c_str(), 0);
    return note_unwritable(dir + "/" + table + "/" + tmp, err);
  }
  if (::renameat(t.fd, tmp.c_str(), t.fd, name.c_str()) != 0) {
    err = errno;
    ::unlinkat(t.fd, tmp.c_str(), 0);
    note_unwritable(dir + "/" + table + "/" + name, err);
  }
}

}  // namespace tg::runtime
