// The file readers against hostile files: MNIST's IDX files (plain and gzip) case by case, then a seeded mutation
// fuzzer over every reader (safetensors, IDX, gzip IDX). A mutant must either load, with every tensor's bytes
// readable, or raise tg::ArgumentError from the reader; under ASan/UBSan (CI) a read out of bounds or an overflow is
// a crash. The budget is fixed (same mutants every run) and small.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "support/expect_error.h"
#include "tg/tg.h"

namespace tg {
namespace {

using Bytes = std::string;

// Removed first, not truncated: ext4 flushes a file truncated and rewritten on close (auto_da_alloc), which makes
// thousands of rewrites take seconds.
void write_file(const std::string& path, const Bytes& bytes) {
  std::remove(path.c_str());
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

void put_le(Bytes& b, uint64_t v, int n) {
  for (int i = 0; i < n; i++) b += static_cast<char>(v >> (8 * i));
}

// ---- an IDX writer and a gzip writer of our own (stored deflate blocks, so no zlib on this side) ----

Bytes idx(const std::vector<uint32_t>& dims, unsigned char fill) {
  Bytes b{0, 0, 8, static_cast<char>(dims.size())};
  size_t n = 1;
  for (uint32_t d : dims) {
    for (int s = 24; s >= 0; s -= 8) b += static_cast<char>(d >> s);
    n *= d;
  }
  for (size_t i = 0; i < n; i++) b += static_cast<char>(fill + i);
  return b;
}

uint32_t crc32(const Bytes& s) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char byte : s) {
    c ^= byte;
    for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
  }
  return ~c;
}

// One gzip member (RFC 1952) holding `s` in stored blocks of at most `block` bytes.
Bytes gzip(const Bytes& s, size_t block = 65535) {
  Bytes out{'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, 0, '\xff'};
  size_t i = 0;
  do {
    size_t n = std::min(block, s.size() - i);
    out += static_cast<char>(i + n == s.size() ? 1 : 0);  // BFINAL, BTYPE 00 (stored)
    put_le(out, n, 2);
    put_le(out, ~n & 0xFFFF, 2);
    out += s.substr(i, n);
    i += n;
  } while (i < s.size());
  put_le(out, crc32(s), 4);
  put_le(out, s.size() & 0xFFFFFFFFu, 4);
  return out;
}

const char* const kIdxNames[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                                 "t10k-labels-idx1-ubyte"};

// The four files of a small valid MNIST: 2 training and 1 test image.
std::vector<Bytes> idx_files() {
  return {idx({2, 28, 28}, 0), idx({2}, 7), idx({1, 28, 28}, 3), idx({1}, 9)};
}

// A fresh folder holding the given four files, gzip'd (".gz" names) or not.
std::string mnist_dir(const std::string& name, const std::vector<Bytes>& files, bool gz) {
  std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (size_t i = 0; i < 4; i++) write_file(dir + "/" + kIdxNames[i] + (gz ? ".gz" : ""), gz ? gzip(files[i]) : files[i]);
  return dir;
}

// datasets::mnist(dir) with file `i` replaced by `bytes` raises an ArgumentError naming that file and `part`.
void expect_mnist_error(const std::string& dir, size_t i, bool gz, const Bytes& bytes, const std::string& part,
                        unsigned line) {
  SCOPED_TRACE("expect_mnist_error at line " + std::to_string(line));
  std::string file = std::string(kIdxNames[i]) + (gz ? ".gz" : "");
  Bytes good = read_file(dir + "/" + file);
  write_file(dir + "/" + file, bytes);
  tg::testing::expect_error<ArgumentError>([&] { datasets::mnist(dir); }, "mnist", {dir + "/" + file + ": ", part},
                                           "test_file_readers.cpp", 0);
  write_file(dir + "/" + file, good);
}

TEST(IdxFiles, GzipAndPlainFilesLoadAlike) {
  std::vector<Bytes> files = idx_files();
  datasets::MNIST plain = datasets::mnist(mnist_dir("idx_plain", files, false));
  datasets::MNIST gz = datasets::mnist(mnist_dir("idx_gz", files, true));
  EXPECT_EQ(gz.X_train.shape(), (Shape{2, 1, 28, 28}));
  EXPECT_EQ(gz.X_train.to_bytes(), plain.X_train.to_bytes());
  EXPECT_EQ(gz.Y_test.to_vector<int32_t>(), (std::vector<int32_t>{9}));
  // several members are one stream (as gunzip reads them), and so are many small blocks
  std::string dir = mnist_dir("idx_members", files, true);
  write_file(dir + "/train-images-idx3-ubyte.gz", gzip(files[0].substr(0, 100)) + gzip(files[0].substr(100), 7));
  EXPECT_EQ(datasets::mnist(dir).X_train.to_bytes(), plain.X_train.to_bytes());
}

TEST(IdxFiles, SizesThatOverflowRaise) {
  std::string dir = mnist_dir("idx_overflow", idx_files(), false);
  // 2^31 * 2^31 * 4 wraps to 0 in 64 bits, which once matched the empty data section
  Bytes wraps = idx({2, 28, 28}, 0).substr(0, 4) + Bytes{'\x80', 0, 0, 0, '\x80', 0, 0, 0, 0, 0, 0, 4};
  expect_mnist_error(dir, 0, false, wraps, "the header's sizes 2147483648x2147483648x4... multiply past 2^63 bytes", __LINE__);
  Bytes most = idx({2, 28, 28}, 0).substr(0, 4) + Bytes(12, '\xff');
  expect_mnist_error(dir, 2, false, most, "multiply past 2^63 bytes", __LINE__);
  // large but representable: refused for the missing data, without allocating what the header promises
  Bytes big = idx({2, 28, 28}, 0).substr(0, 4) + Bytes{0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0} + "abc";
  expect_mnist_error(dir, 0, false, big, "the header (65536x65536x65536) promises 281474976710656 bytes of data, the file has 3", __LINE__);
  expect_mnist_error(mnist_dir("idx_overflow_gz", idx_files(), true), 0, true, gzip(big), "promises 281474976710656 bytes of data, the file has 3", __LINE__);
}

TEST(IdxFiles, DataThatDoesNotMatchTheHeaderRaises) {
  std::string dir = mnist_dir("idx_length", idx_files(), false);
  Bytes labels = idx({2}, 7);
  expect_mnist_error(dir, 1, false, labels + "x", "the header (2) promises 2 bytes of data, the file has more", __LINE__);
  expect_mnist_error(dir, 1, false, labels.substr(0, labels.size() - 1), "promises 2 bytes of data, the file has 1", __LINE__);
  expect_mnist_error(dir, 1, false, labels.substr(0, 7), "not an IDX file of unsigned bytes with 1 dims", __LINE__);
  expect_mnist_error(dir, 1, false, "", "not an IDX file", __LINE__);
  expect_mnist_error(dir, 0, false, idx({2, 28}, 0), "not an IDX file of unsigned bytes with 3 dims", __LINE__);
  expect_mnist_error(dir, 0, false, idx({2, 28, 27}, 0), "images of 28x27, not 28x28", __LINE__);
}

TEST(IdxFiles, CorruptOrTruncatedGzipRaises) {
  std::string dir = mnist_dir("idx_gzip", idx_files(), true);
  Bytes images = gzip(idx({2, 28, 28}, 0));
  Bytes flipped = images;
  flipped[100] ^= 1;  // a data byte of the stored block: the CRC no longer matches
  expect_mnist_error(dir, 0, true, flipped, "corrupt gzip data (incorrect data check)", __LINE__);
  Bytes bad_len = images;
  bad_len[11] ^= 1;  // LEN no longer the complement of NLEN
  expect_mnist_error(dir, 0, true, bad_len, "corrupt gzip data (invalid stored block lengths)", __LINE__);
  Bytes bad_size = images;
  bad_size[bad_size.size() - 1] ^= 1;  // ISIZE
  expect_mnist_error(dir, 0, true, bad_size, "corrupt gzip data (incorrect length check)", __LINE__);
  Bytes bad_method = images;
  bad_method[2] = 7;
  expect_mnist_error(dir, 0, true, bad_method, "corrupt gzip data (unknown compression method)", __LINE__);
  expect_mnist_error(dir, 0, true, images.substr(0, images.size() - 4), "the gzip stream is truncated", __LINE__);
  expect_mnist_error(dir, 0, true, images.substr(0, 500), "the gzip stream is truncated", __LINE__);
  expect_mnist_error(dir, 0, true, images.substr(0, 2), "the gzip stream is truncated", __LINE__);
  expect_mnist_error(dir, 0, true, images + "junk", "4 bytes after the end of the gzip stream (trailing garbage)", __LINE__);
  expect_mnist_error(dir, 0, true, images + Bytes(1, '\0'), "1 bytes after the end of the gzip stream", __LINE__);
  expect_mnist_error(dir, 0, true, images + "\x1f", "trailing garbage", __LINE__);
  expect_mnist_error(dir, 0, true, images + gzip("x"), "promises 1568 bytes of data, the file has more", __LINE__);
  write_file(dir + "/train-images-idx3-ubyte.gz", images + gzip(""));  // an empty member after: still the same data
  EXPECT_EQ(datasets::mnist(dir).X_train.shape(), (Shape{2, 1, 28, 28}));
  // every cut of a gzip file raises
  Bytes labels = gzip(idx({1}, 9), 3);
  for (size_t n = 0; n < labels.size(); n++) {
    write_file(dir + "/t10k-labels-idx1-ubyte.gz", labels.substr(0, n));
    EXPECT_THROW(datasets::mnist(dir), ArgumentError) << n << " bytes";
  }
}

}  // namespace
}  // namespace tg
