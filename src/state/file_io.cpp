#include "state/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace tg::state {

namespace {
std::string os_error() { return std::strerror(errno); }
}  // namespace

std::shared_ptr<const unsigned char> map_file(const std::string& path, size_t& size, const char* op, SourceLocation where) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ArgumentError(op, "cannot open " + path + ": " + os_error(), where);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw ArgumentError(op, path + " is not a regular file", where);
  }
  size = static_cast<size_t>(st.st_size);
  if (size == 0) {  // mmap refuses an empty length; nothing to read
    ::close(fd);
    return std::shared_ptr<const unsigned char>(new unsigned char[1](), [](const unsigned char* q) { delete[] q; });
  }
  // writable and private: tensors use their bytes in place (Buffer::fill_lazily), and a write to one (an optimizer
  // step on loaded weights) copies the page, never reaching the file
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw ArgumentError(op, "cannot map " + path + ": " + os_error(), where);
  return std::shared_ptr<const unsigned char>(static_cast<const unsigned char*>(p),
                                              [size](const unsigned char* q) { ::munmap(const_cast<unsigned char*>(q), size); });
}

void write_file_atomically(const std::string& path, const std::vector<std::string_view>& pieces, const char* op,
                           SourceLocation where) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    for (std::string_view p : pieces) out.write(p.data(), static_cast<std::streamsize>(p.size()));
    out.flush();
    if (!out) {
      std::string err = os_error();
      std::remove(tmp.c_str());
      throw ArgumentError(op, "cannot write " + path + ": " + err, where);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string err = os_error();
    std::remove(tmp.c_str());
    throw ArgumentError(op, "cannot write " + path + ": " + err, where);
  }
}

base::Json parse_json_file(const std::string& path, const char* op, SourceLocation where) {
  size_t size = 0;
  auto map = map_file(path, size, op, where);
  return base::parse_json({reinterpret_cast<const char*>(map.get()), size}, op, path, where);
}

}  // namespace tg::state
