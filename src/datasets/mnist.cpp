// MNIST's IDX files: a big-endian header (magic 0x0000080N with N dims, then N sizes) and uint8 data, plain or
// gzip'd. Nothing is trusted: the sizes' product is overflow-checked, the data must be exactly as long as the header
// says, and a gzip stream must be whole (every member complete, its CRC right, nothing after the last one).
#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "tg/datasets.h"
#include "tg/error.h"

namespace tg::datasets {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& msg, SourceLocation where) {
  throw ArgumentError("mnist", path + ": " + msg, where);
}

std::vector<unsigned char> read_bytes(const std::string& path, SourceLocation where) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail(path, "not a regular file", where);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ArgumentError("mnist", "cannot open " + path, where);
  // sized by the file, and read on in pieces should it have grown meanwhile
  uintmax_t size = std::filesystem::file_size(path, ec);
  std::vector<unsigned char> out(ec ? 0 : static_cast<size_t>(size));
  size_t have = 0;
  while (true) {
    in.read(reinterpret_cast<char*>(out.data() + have), static_cast<std::streamsize>(out.size() - have));
    have += static_cast<size_t>(in.gcount());
    if (!in || in.peek() == std::char_traits<char>::eof()) break;
    out.resize(out.size() + (1 << 16));
  }
  if (in.bad()) fail(path, "read error", where);
  out.resize(have);
  return out;
}

// The bytes of a file as a stream: a plain file as it is, a gzip file (one or more members) inflated.
class Reader {
 public:
  Reader(std::vector<unsigned char> raw, const std::string& path, SourceLocation where)
      : raw_(std::move(raw)), path_(path), where_(where) {
    gzip_ = raw_.size() >= 2 && raw_[0] == 0x1f && raw_[1] == 0x8b;
    if (!gzip_) return;
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) fail(path_, "cannot start zlib", where_);  // 16: gzip only
    z_.next_in = raw_.data();
    z_.avail_in = 0;
  }
  ~Reader() {
    if (gzip_) inflateEnd(&z_);
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Up to n bytes into dst; fewer only at the end of the data. A corrupt or cut gzip stream raises.
  size_t read(unsigned char* dst, size_t n) {
    if (!gzip_) {
      size_t k = std::min(n, raw_.size() - pos_);
      if (k) std::memcpy(dst, raw_.data() + pos_, k);
      pos_ += k;
      return k;
    }
    size_t got = 0;
    while (got < n && !done_) {
      if (z_.avail_in == 0 && pos_ < raw_.size()) {  // zlib counts in uInt: hand it the input in pieces
        z_.next_in = raw_.data() + pos_;
        z_.avail_in = static_cast<uInt>(std::min<size_t>(raw_.size() - pos_, UINT_MAX));
        pos_ += z_.avail_in;
      }
      z_.next_out = dst + got;
      z_.avail_out = static_cast<uInt>(std::min<size_t>(n - got, UINT_MAX));
      uInt before = z_.avail_out;
      int rc = inflate(&z_, Z_NO_FLUSH);
      got += before - z_.avail_out;
      if (rc == Z_STREAM_END) {
        // the member is complete (its CRC and length checked); another member may follow, nothing else
        size_t at = static_cast<size_t>(z_.next_in - raw_.data()), left = raw_.size() - at;
        if (left == 0) done_ = true;
        else if (left >= 2 && raw_[at] == 0x1f && raw_[at + 1] == 0x8b) inflateReset(&z_);
        else fail(path_, std::to_string(left) + " bytes after the end of the gzip stream (trailing garbage)", where_);
      } else if (rc == Z_BUF_ERROR && z_.avail_in == 0) {  // no progress without more input
        if (pos_ == raw_.size()) fail(path_, "the gzip stream is truncated", where_);
      } else if (rc != Z_OK) {
        fail(path_, std::string("corrupt gzip data (") + (z_.msg ? z_.msg : "zlib error " + std::to_string(rc)) + ")", where_);
      }
    }
    return got;
  }

  // True when no byte is left (reading to the end also checks the last gzip member's CRC).
  bool at_end() {
    unsigned char c;
    return read(&c, 1) == 0;
  }

 private:
  std::vector<unsigned char> raw_;
  const std::string& path_;
  SourceLocation where_;
  bool gzip_ = false, done_ = false;
  size_t pos_ = 0;  // the next byte of raw_ not yet handed on
  z_stream z_{};
};

uint32_t be32(const unsigned char* p) { return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3]; }

// an IDX file of `ndim` (<= 3) dims as a uint8 tensor
Tensor read_idx(const std::string& dir, const std::string& name, size_t ndim, SourceLocation where) {
  std::string path = dir + "/" + name;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (!std::filesystem::exists(path + ".gz", ec))
      throw ArgumentError("mnist", "no " + name + " (or " + name + ".gz) in " + dir, where);
    path += ".gz";
  }
  Reader r(read_bytes(path, where), path, where);
  unsigned char head[16];
  size_t header = 4 + 4 * ndim;
  if (r.read(head, header) != header || be32(head) != 0x800u + ndim)
    fail(path, "not an IDX file of unsigned bytes with " + std::to_string(ndim) + " dims", where);
  Shape shape;
  uint64_t n = 1;
  std::string dims;
  for (size_t i = 0; i < ndim; i++) {
    shape.push_back(be32(head + 4 + 4 * i));
    dims += (i ? "x" : "") + std::to_string(shape.back());
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(shape.back()), &n) || n > static_cast<uint64_t>(INT64_MAX))
      fail(path, "the header's sizes " + dims + "... multiply past 2^63 bytes", where);
  }
  // read in growing pieces: a header that promises more than the file holds allocates at most about twice the data
  // there is, not what it promises
  std::vector<uint8_t> data;
  while (data.size() < n) {
    size_t have = data.size(), want = static_cast<size_t>(std::min<uint64_t>(n - have, std::max<size_t>(have, 1 << 16)));
    data.resize(have + want);
    if (size_t got = r.read(data.data() + have, want); got < want)
      fail(path, "the header (" + dims + ") promises " + std::to_string(n) + " bytes of data, the file has " +
                     std::to_string(have + got), where);
  }
  if (!r.at_end())
    fail(path, "the header (" + dims + ") promises " + std::to_string(n) + " bytes of data, the file has more", where);
  return Tensor(std::move(data), shape);
}

}  // namespace

MNIST mnist(const std::string& dir_arg, SourceLocation where) {
  std::string dir = dir_arg.empty() ? kFashionMnistDir : dir_arg;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw ArgumentError("mnist", dir + " is not a folder" +
                                     (dir_arg.empty() ? std::string(" (install Debian's dataset-fashion-mnist, or pass the folder of the MNIST files)") : ""),
                        where);
  MNIST m;
  auto images = [&](const std::string& name) {
    Tensor t = read_idx(dir, name, 3, where);
    if (t.shape()[1] != 28 || t.shape()[2] != 28)
      throw ArgumentError("mnist", dir + "/" + name + ": images of " + std::to_string(t.shape()[1]) + "x" + std::to_string(t.shape()[2]) + ", not 28x28", where);
    return t.reshape({t.shape()[0], 1, 28, 28});
  };
  m.X_train = images("train-images-idx3-ubyte");
  m.Y_train = read_idx(dir, "train-labels-idx1-ubyte", 1, where);
  m.X_test = images("t10k-images-idx3-ubyte");
  m.Y_test = read_idx(dir, "t10k-labels-idx1-ubyte", 1, where);
  if (m.X_train.shape()[0] != m.Y_train.shape()[0] || m.X_test.shape()[0] != m.Y_test.shape()[0])
    throw ArgumentError("mnist", dir + ": the numbers of images and labels differ", where);
  return m;
}

}  // namespace tg::datasets
