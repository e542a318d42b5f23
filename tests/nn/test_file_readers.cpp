// The file readers against hostile files: MNIST's IDX files (plain and gzip) case by case, then a seeded mutation
// fuzzer over every reader (safetensors, IDX, gzip IDX). A mutant must either load, with every tensor's bytes
// readable, or raise tg::ArgumentError from the reader; under ASan/UBSan (CI) a read out of bounds or an overflow is
// a crash. The budget is fixed (same mutants every run) and small; TG_FUZZ_DUMP=1 prints every error's message
// (to see which checks the mutants reach), TG_FUZZ_SEED=n and TG_FUZZ_SCALE=k run other or k times more mutants.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>

#include <unistd.h>

#include "support/expect_error.h"
#include "support/scratch.h"
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

std::string scratch(const std::string& name) { return tg::testing::scratch_path(name); }

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
  std::string dir = scratch(name);
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

// ---- the mutation fuzzer: seeded, so every run tries the same mutants ----

// The fixed seed and budget, or TG_FUZZ_SEED / TG_FUZZ_SCALE (a multiplier of the budget) for a longer hunt.
uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

struct Rng {
  std::mt19937_64 g;  // the standard fixes its sequence, so runs and platforms agree
  explicit Rng(uint64_t seed) : g(seed) {}
  size_t below(size_t n) { return n ? static_cast<size_t>(g() % n) : 0; }
  bool one_in(size_t n) { return below(n) == 0; }
};

const unsigned char kBoundaryBytes[] = {0x00, 0xff, 0x7f, 0x80, 0x01, 0xfe};
const uint64_t kBoundary64[] = {0, 1, 2, 7, 8, 0x7f, 0x80, 0xff, 1u << 16, 100'000'000, 100'000'001, 1ull << 31,
                                1ull << 32, (1ull << 32) - 1, (1ull << 63) - 1, 1ull << 63, ~0ull};
const uint32_t kBoundary32[] = {0, 1, 2, 27, 28, 29, 255, 256, 1u << 16, 1u << 24, 0x7fffffffu, 0x80000000u, 0xffffffffu};

// Byte-level mutations anywhere in `b`; `donors` are files to splice pieces from.
void mutate_bytes(Bytes& b, Rng& r, const std::vector<Bytes>& donors) {
  auto span = [&](size_t at, size_t most) { return 1 + r.below(std::min(b.size() - at, most)); };
  switch (r.below(8)) {
    case 0:  // a bit flip
      if (!b.empty()) b[r.below(b.size())] ^= static_cast<char>(1 << r.below(8));
      break;
    case 1:  // a byte set to a boundary value
      if (!b.empty()) b[r.below(b.size())] = static_cast<char>(kBoundaryBytes[r.below(6)]);
      break;
    case 2:  // truncation
      b.resize(r.below(b.size() + 1));
      break;
    case 3: {  // extension: random bytes, zeros, or bytes of the file itself
      size_t n = 1 + r.below(64), kind = r.below(3);
      for (size_t i = 0; i < n; i++)
        b += kind == 0 ? static_cast<char>(r.below(256)) : kind == 1 || b.empty() ? '\0' : b[r.below(b.size())];
      break;
    }
    case 4: {  // a splice: another file's bytes over the same place
      const Bytes& o = donors[r.below(donors.size())];
      if (o.empty()) break;
      size_t from = r.below(o.size()), n = 1 + r.below(std::min<size_t>(o.size() - from, 64)), at = std::min(from, b.size());
      b.replace(at, std::min(n, b.size() - at), o.substr(from, n));
      break;
    }
    case 5:  // a deleted range
      if (!b.empty()) {
        size_t at = r.below(b.size());
        b.erase(at, span(at, 16));
      }
      break;
    case 6:  // a duplicated range
      if (!b.empty()) {
        size_t at = r.below(b.size());
        Bytes piece = b.substr(at, span(at, 16));
        b.insert(r.below(b.size() + 1), piece);
      }
      break;
    default:  // a run of boundary bytes
      if (!b.empty()) {
        size_t at = r.below(b.size()), n = span(at, 8);
        unsigned char v = kBoundaryBytes[r.below(6)];
        for (size_t k = 0; k < n; k++) b[at + k] = static_cast<char>(v);
      }
  }
}

const char* const kNumbers[] = {"0", "1", "-1", "00", "01", "-0", "2", "8", "255", "65536", "4294967295", "4294967296",
                                "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                                "18446744073709551615", "18446744073709551616", "1e2", "1.0", "100000000000000000000000000"};
const char* const kTokens[] = {"\"F32\"", "\"BOOL\"", "\"U8\"", "\"I64\"", "\"F16\"", "\"BF16\"", "\"F64\"", "\"F8_E4M3\"",
                               "\"\"", "\"__metadata__\"", "null", "true", "[]", "{}", "[0,0]", "[0]", "[4294967296,0]",
                               "[0,4294967296]", "\"\\ud800\"", "\"\\u00e9\"", "\"\xc3\xa9\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"",
                               "\"dtype\"", "\"shape\"", "\"data_offsets\"", "[[[[[[[[", "\"\\u0000\""};

// Mutations of a safetensors header that keep it mostly JSON: numbers (sizes, offsets) and tokens replaced,
// pieces of other headers spliced in, list elements or members dropped; else byte-level ones.
void mutate_json(Bytes& h, Rng& r, const std::vector<Bytes>& donors) {
  auto find_all = [&](auto pred) {
    std::vector<std::pair<size_t, size_t>> spans;  // [begin, end)
    for (size_t i = 0; i < h.size();) {
      size_t e = pred(i);
      if (e > i) spans.emplace_back(i, e), i = e;
      else i++;
    }
    return spans;
  };
  switch (r.below(7)) {
    case 5: {  // a tensor's data_offsets moved as a pair (holes, overlaps), or swapped with another tensor's
      std::vector<std::array<std::pair<size_t, size_t>, 2>> pairs;
      for (size_t at = h.find("data_offsets"); at != Bytes::npos; at = h.find("data_offsets", at + 1)) {
        std::array<std::pair<size_t, size_t>, 2> p{};
        size_t i = at, k = 0;
        for (; k < 2; k++) {
          i = h.find_first_of("0123456789", i);
          if (i == Bytes::npos || i - at > 40) break;
          size_t e = i;
          while (e < h.size() && h[e] >= '0' && h[e] <= '9') e++;
          if (e - i > 18) break;
          p[k] = {i, e}, i = e;
        }
        if (k == 2) pairs.push_back(p);
      }
      if (pairs.empty()) break;
      auto& p = pairs[r.below(pairs.size())];
      auto num = [&](const std::pair<size_t, size_t>& x) { return std::stoll(h.substr(x.first, x.second - x.first)); };
      int64_t delta = static_cast<int64_t>(r.below(33)) - 16;
      const auto& q = pairs[r.below(pairs.size())];
      std::string a = std::to_string(num(p[0]) + delta), b = std::to_string(num(p[1]) + delta);
      if (r.one_in(2)) a = std::to_string(num(q[0])), b = std::to_string(num(q[1]));
      h.replace(p[1].first, p[1].second - p[1].first, b);  // the later one first: p[0]'s place stays valid
      h.replace(p[0].first, p[0].second - p[0].first, a);
      break;
    }
    case 0:
    case 1: {  // a number: a boundary value, or nudged by a few (shifting an offset makes holes and overlaps)
      auto nums = find_all([&](size_t i) {
        size_t e = i;
        while (e < h.size() && h[e] >= '0' && h[e] <= '9') e++;
        return e;
      });
      if (nums.empty()) break;
      auto [b, e] = nums[r.below(nums.size())];
      std::string repl = kNumbers[r.below(std::size(kNumbers))];
      if (r.one_in(2) && e - b < 19) {
        int64_t v = std::stoll(h.substr(b, e - b)) + static_cast<int64_t>(r.below(17)) - 8;
        repl = std::to_string(v);
      }
      h.replace(b, e - b, repl);
      break;
    }
    case 2: {  // a string token
      auto strs = find_all([&](size_t i) {
        if (h[i] != '"') return i;
        size_t e = h.find('"', i + 1);
        return e == Bytes::npos ? i : e + 1;
      });
      if (strs.empty()) break;
      auto [b, e] = strs[r.below(strs.size())];
      h.replace(b, e - b, kTokens[r.below(std::size(kTokens))]);
      break;
    }
    case 3: {  // a piece of another header (a member, a shape, a name) spliced in
      const Bytes& o = donors[r.below(donors.size())];
      if (o.empty()) break;
      size_t from = r.below(o.size()), n = 1 + r.below(std::min<size_t>(o.size() - from, 80));
      size_t at = r.below(h.size() + 1);
      h.replace(at, r.one_in(2) ? 0 : std::min(n, h.size() - at), o.substr(from, n));
      break;
    }
    case 4: {  // a list element or member dropped: from one separator to the next
      auto seps = find_all([&](size_t i) { return h[i] == ',' || h[i] == '[' || h[i] == '{' ? i + 1 : i; });
      if (seps.empty()) break;
      size_t b = seps[r.below(seps.size())].first, e = h.find_first_of(",]}", b + 1);
      if (e != Bytes::npos) h.erase(b + (h[b] == ',' ? 0 : 1), e - b - (h[b] == ',' ? 0 : 1));
      break;
    }
    default:
      mutate_bytes(h, r, donors);
  }
}

void set_le64(Bytes& b, uint64_t v) {
  if (b.size() < 8) b.resize(8, '\0');
  for (int i = 0; i < 8; i++) b[i] = static_cast<char>(v >> (8 * i));
}

Bytes mutate_safetensors(const std::vector<Bytes>& seeds, const std::vector<Bytes>& headers, Rng& r) {
  Bytes m = seeds[r.below(seeds.size())];
  size_t steps = 1 + r.below(3);
  if (r.one_in(2)) {  // header and data apart, rejoined under a right length (mostly)
    uint64_t n = 0;
    std::memcpy(&n, m.data(), 8);
    Bytes header = m.substr(8, n), data = m.substr(8 + n);
    for (size_t i = 0; i < steps; i++) {
      if (r.below(4)) mutate_json(header, r, headers);
      else mutate_bytes(data, r, seeds);
    }
    m = Bytes(8, '\0') + header + data;
    set_le64(m, r.one_in(8) ? kBoundary64[r.below(std::size(kBoundary64))] + r.below(3) - 1 : header.size());
  } else {
    for (size_t i = 0; i < steps; i++) {
      if (r.one_in(6)) set_le64(m, r.one_in(2) ? kBoundary64[r.below(std::size(kBoundary64))] : m.size() - 8 - r.below(3));
      else mutate_bytes(m, r, seeds);
    }
  }
  return m;
}

struct Counts {
  size_t tried = 0, loaded = 0, errors = 0;
};

// Loads or raises ArgumentError from `op`; anything else fails the test, naming the mutant.
template <class F>
void try_load(F load, const char* op, size_t mutant, Counts& c) {
  c.tried++;
  try {
    load();
    c.loaded++;
  } catch (const ArgumentError& e) {
    c.errors++;
    if (std::getenv("TG_FUZZ_DUMP")) std::cerr << "ERR " << e.message() << "\n";
    EXPECT_EQ(e.op(), op) << "mutant " << mutant << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "mutant " << mutant << " raised something other than tg::ArgumentError: " << e.what();
  }
}

void read_every_byte(const Tensor& t) {
  std::vector<uint8_t> bytes = t.to_bytes();
  EXPECT_EQ(bytes.size(), static_cast<size_t>(t.numel()) * static_cast<size_t>(t.dtype().itemsize()));
}

TEST(FileReaderFuzz, SafetensorsMutantsLoadOrRaise) {
  // valid files from our writer and from numpy's (unpadded, indented, tensors in reverse order)
  std::string dir = scratch("safetensors_fuzz");
  std::filesystem::create_directories(dir);
  std::vector<Bytes> seeds;
  auto saved = [&](const StateDict& d, const std::map<std::string, std::string>& meta) {
    safe_save(d, dir + "/fuzz_seed.safetensors", meta);
    seeds.push_back(read_file(dir + "/fuzz_seed.safetensors"));
  };
  saved({{"w", Tensor({{0.5f, -1.0f, 2.0f}, {3.0f, 4.0f, -0.0f}})},
         {"b", Tensor(std::vector<int64_t>{1, -2, 3}, {3})},
         {"s", Tensor(1.5f).cast(dtypes::float16)},
         {"e", Tensor::zeros({0, 4}, dtypes::uint8)},
         {"m", Tensor({{1.0f, 0.0f}, {0.0f, 1.0f}}).cast(dtypes::bool_)}},
        {{"format", "pt"}, {"note", "caf\xc3\xa9"}});
  saved({{"x", Tensor({1.0f, 2.0f, 3.0f}).cast(dtypes::bfloat16)}}, {});
  seeds.push_back(read_file(std::string(TG_GOLDEN_DIR) + "/numpy.safetensors"));
  std::vector<Bytes> headers;
  for (const Bytes& s : seeds) {
    uint64_t n = 0;
    std::memcpy(&n, s.data(), 8);
    headers.push_back(s.substr(8, n));
  }
  for (const Bytes& s : seeds) {  // the seeds themselves load
    write_file(dir + "/fuzz.safetensors", s);
    EXPECT_NO_THROW(safe_load(dir + "/fuzz.safetensors"));
  }

  Rng r(env_or("TG_FUZZ_SEED", 20261123));
  Counts c;
  std::string path = dir + "/fuzz.safetensors";
  for (size_t i = 0; i < 3000 * env_or("TG_FUZZ_SCALE", 1); i++) {
    write_file(path, mutate_safetensors(seeds, headers, r));
    try_load([&] {
      for (const auto& [name, t] : safe_load(path)) read_every_byte(t);
      safe_load_metadata(path);
    }, "safe_load", i, c);
  }
  std::cout << "safetensors fuzz: " << c.tried << " inputs, " << c.loaded << " loaded, " << c.errors
            << " raised tg::ArgumentError\n";
  EXPECT_GT(c.loaded, c.tried / 50);  // the mutants reach past the first checks
  EXPECT_GT(c.errors, c.tried / 2);
}

// Mutations of an IDX file: a header field (magic, a size) set to a boundary value, or byte-level ones.
void mutate_idx(Bytes& b, Rng& r, const std::vector<Bytes>& donors) {
  if (r.one_in(3) && b.size() >= 8) {
    size_t field = r.below(b.size() >= 16 ? 4 : 2);
    uint32_t v = kBoundary32[r.below(std::size(kBoundary32))];
    if (field == 0) v = 0x800u + r.below(5);  // the magic with another number of dims
    for (int k = 0; k < 4; k++) b[4 * field + k] = static_cast<char>(v >> (24 - 8 * k));
  } else {
    mutate_bytes(b, r, donors);
  }
}

TEST(FileReaderFuzz, IdxAndGzipMutantsLoadOrRaise) {
  std::vector<Bytes> plain = idx_files(), gz;
  for (const Bytes& f : plain) gz.push_back(gzip(f, 500));
  std::string dirs[2] = {mnist_dir("fuzz_idx", plain, false), mnist_dir("fuzz_idx_gz", plain, true)};
  Rng r(env_or("TG_FUZZ_SEED", 1123));
  Counts c[2];
  for (size_t i = 0; i < 1500 * env_or("TG_FUZZ_SCALE", 1); i++) {
    bool is_gz = r.one_in(2);
    size_t which = r.below(4);
    Bytes m = plain[which];
    size_t steps = 1 + r.below(3);
    if (!is_gz) {
      for (size_t k = 0; k < steps; k++) mutate_idx(m, r, plain);
    } else if (r.one_in(2)) {  // a valid gzip stream of a mutated file: in one or two members, maybe with bytes after
      for (size_t k = 0; k < steps - 1; k++) mutate_idx(m, r, plain);
      size_t cut = r.below(m.size() + 1);
      m = r.one_in(3) ? gzip(m.substr(0, cut), 1 + r.below(300)) + gzip(m.substr(cut), 1 + r.below(300))
                      : gzip(m, 1 + r.below(2000));
      if (r.one_in(6)) m += r.one_in(2) ? gzip("x") : Bytes(1 + r.below(4), static_cast<char>(r.below(256)));
    } else {  // a damaged gzip stream: its bytes mutated (the header, block headers, data, CRC, length)
      m = gz[which];
      for (size_t k = 0; k < steps; k++) mutate_bytes(m, r, gz);
    }
    std::string file = dirs[is_gz] + "/" + kIdxNames[which] + (is_gz ? ".gz" : "");
    write_file(file, m);
    try_load([&] {
      datasets::MNIST d = datasets::mnist(dirs[is_gz]);
      for (const Tensor* t : {&d.X_train, &d.Y_train, &d.X_test, &d.Y_test}) read_every_byte(*t);
    }, "mnist", i, c[is_gz]);
    write_file(file, is_gz ? gz[which] : plain[which]);
  }
  for (int g = 0; g < 2; g++) {
    std::cout << (g ? "gzip IDX" : "IDX") << " fuzz: " << c[g].tried << " inputs, " << c[g].loaded << " loaded, "
              << c[g].errors << " raised tg::ArgumentError\n";
    EXPECT_GT(c[g].loaded, 10u);
    EXPECT_GT(c[g].errors, c[g].tried / 2);
  }
}

// Byte-level mutants of `seeds` (1 to 3 mutations each) written to `path` and given to `load`, which must load or
// raise ArgumentError from `op`; prints and returns the counts.
template <class Load>
Counts fuzz_file(const std::vector<Bytes>& seeds, const std::string& path, uint64_t seed, size_t budget, const char* op, Load load) {
  Rng r(env_or("TG_FUZZ_SEED", seed));
  Counts c;
  for (size_t i = 0; i < budget * env_or("TG_FUZZ_SCALE", 1); i++) {
    Bytes m = seeds[r.below(seeds.size())];
    for (size_t k = 0, steps = 1 + r.below(3); k < steps; k++) mutate_bytes(m, r, seeds);
    write_file(path, m);
    try_load([&] { load(path); }, op, i, c);
  }
  std::cout << op << " fuzz: " << c.tried << " inputs, " << c.loaded << " loaded, " << c.errors << " raised tg::ArgumentError\n";
  return c;
}

// ---- GGUF: a writer of our own from the specification (ggml's docs/gguf.md), the reader's checks, the fuzzer ----

struct GgufTensor {
  std::string name;
  std::vector<uint64_t> dims;  // GGUF's order: innermost first
  uint32_t type;
  Bytes data;
  uint64_t offset = ~0ull;  // ~0: placed after the previous one, aligned
};

Bytes gguf_string(const std::string& s) {
  Bytes b;
  put_le(b, s.size(), 8);
  return b + s;
}

// metadata values already encoded: type u32, then the value
Bytes gguf_file(const std::vector<std::pair<std::string, Bytes>>& kv, std::vector<GgufTensor> tensors,
                uint32_t version = 3, uint64_t alignment = 32) {
  Bytes b = "GGUF";
  put_le(b, version, 4), put_le(b, tensors.size(), 8), put_le(b, kv.size(), 8);
  for (const auto& [k, v] : kv) b += gguf_string(k) + v;
  Bytes data;
  for (GgufTensor& t : tensors) {
    if (t.offset == ~0ull) {
      data.append((alignment - data.size() % alignment) % alignment, '\0');
      t.offset = data.size();
      data += t.data;
    }
    b += gguf_string(t.name);
    put_le(b, t.dims.size(), 4);
    for (uint64_t d : t.dims) put_le(b, d, 8);
    put_le(b, t.type, 4), put_le(b, t.offset, 8);
  }
  b.append((alignment - b.size() % alignment) % alignment, '\0');
  return b + data;
}

Bytes u32_value(uint32_t v) {
  Bytes b;
  put_le(b, 4, 4), put_le(b, v, 4);
  return b;
}
Bytes string_value(const std::string& s) {
  Bytes b;
  put_le(b, 8, 4);
  return b + gguf_string(s);
}

template <class T> Bytes raw_of(const std::vector<T>& v) { return Bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)); }

std::vector<Bytes> gguf_seeds() {
  // an array of arrays of strings, every scalar type, tensors of several types and shapes (one empty)
  Bytes nested;
  put_le(nested, 9, 4), put_le(nested, 9, 4), put_le(nested, 2, 8);
  for (int k = 0; k < 2; k++) {
    put_le(nested, 8, 4), put_le(nested, 2, 8);
    nested += gguf_string("a" + std::to_string(k)) + gguf_string("\xc3\xa9t\xc3\xa9");
  }
  Bytes scalars;  // i8 -3, f64 0.25, bool true, i64 -5
  put_le(scalars, 9, 4), put_le(scalars, 11, 4), put_le(scalars, 1, 8), put_le(scalars, static_cast<uint64_t>(-5), 8);
  Bytes f64;
  double q = 0.25;
  put_le(f64, 12, 4), f64 += Bytes(reinterpret_cast<const char*>(&q), 8);
  Bytes flag;
  put_le(flag, 7, 4), put_le(flag, 1, 1);
  std::vector<float> w{0.5f, -1.0f, 2.0f, 3.0f, 4.0f, -0.0f};
  std::vector<uint16_t> h{0x3c00, 0xc000, 0x7c00, 0x0001};  // 1, -2, inf, the smallest subnormal
  std::vector<int32_t> ids{7, -8, 9};
  Bytes q8_0 = Bytes("\x00\x3c", 2) + Bytes(32, '\x05');  // scale 1.0, then 32 int8 values: all 5
  Bytes q4_k = Bytes("\x00\x3c\x00\x38", 4) + Bytes(12, '\x21') + Bytes(128, '\x7a');  // d 1.0, dmin 0.5, scales, nibbles
  Bytes one = gguf_file({{"general.architecture", string_value("test")}, {"test.nested", nested}, {"test.i64", scalars},
                         {"test.f64", f64}, {"test.flag", flag}, {"general.alignment", u32_value(64)}},
                        {{"w", {3, 2}, 0, raw_of(w)}, {"h", {4}, 1, raw_of(h)}, {"ids", {3}, 26, raw_of(ids)},
                         {"empty", {0, 5}, 0, ""}, {"q8", {32, 2}, 8, q8_0 + q8_0}, {"q4k", {256}, 12, q4_k}},
                        3, 64);
  Bytes two = gguf_file({{"k", u32_value(1)}}, {{"x", {2, 1, 1}, 0, raw_of(std::vector<float>{1, 2})}}, 2);
  return {one, two};
}

TEST(Gguf, ReadsMetadataAndTensorsAsWritten) {
  std::string path = scratch("seed.gguf");
  write_file(path, gguf_seeds()[0]);
  GGUFFile f = gguf_load(path);
  EXPECT_EQ(f.metadata.at("general.architecture").s, "test");
  const GGUFValue& nested = f.metadata.at("test.nested");
  ASSERT_EQ(nested.items.size(), 2u);
  EXPECT_EQ(nested.items[1].items[0].s, "a1");
  EXPECT_EQ(nested.items[1].items[1].s, "\xc3\xa9t\xc3\xa9");
  EXPECT_EQ(f.metadata.at("test.i64").items[0].as_int("i64"), -5);
  EXPECT_EQ(f.metadata.at("test.f64").as_float("f64"), 0.25);
  EXPECT_TRUE(f.metadata.at("test.flag").b);
  EXPECT_EQ(f.tensors.at("w").shape(), (Shape{2, 3}));  // GGUF's dims reversed
  EXPECT_EQ(f.tensors.at("w").to_vector<float>(), (std::vector<float>{0.5f, -1.0f, 2.0f, 3.0f, 4.0f, -0.0f}));
  EXPECT_EQ(f.tensors.at("h").dtype(), dtypes::float16);
  std::vector<float> h = f.tensors.at("h").cast(dtypes::float32).to_vector<float>();
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], -2.0f);
  EXPECT_TRUE(std::isinf(h[2]));
  EXPECT_EQ(h[3], std::ldexp(1.0f, -24));
  EXPECT_EQ(f.tensors.at("ids").to_vector<int32_t>(), (std::vector<int32_t>{7, -8, 9}));
  EXPECT_EQ(f.tensors.at("empty").shape(), (Shape{5, 0}));
  EXPECT_EQ(f.types.at("h"), "F16");
  EXPECT_EQ(f.types.at("q8"), "Q8_0");
  EXPECT_EQ(f.tensors.at("q8").shape(), (Shape{2, 32}));
  EXPECT_EQ(f.tensors.at("q8").to_vector<float>(), std::vector<float>(64, 5.0f));  // d * q
  EXPECT_EQ(f.tensors.at("q4k").numel(), 256);
  write_file(path, gguf_seeds()[1]);  // version 2
  EXPECT_EQ(gguf_load(path).tensors.at("x").shape(), (Shape{1, 1, 2}));
}

TEST(Gguf, MalformedFilesNameWhatIsWrong) {
  std::string path = scratch("bad.gguf");
  std::vector<float> four{1, 2, 3, 4};
  auto expect = [&](const Bytes& file, const std::string& part) {
    write_file(path, file);
    tg::testing::expect_error<ArgumentError>([&] { gguf_load(path); }, "gguf_load", {"bad.gguf", part}, "test_file_readers.cpp");
  };
  expect("GGUX", "no 'GGUF' magic");
  expect(gguf_file({}, {}, 1), "GGUF version 1");
  Bytes huge = "GGUF";
  put_le(huge, 3, 4), put_le(huge, 1ull << 40, 8), put_le(huge, 0, 8);
  expect(huge, "cannot fit");
  Bytes ok = gguf_file({{"k", string_value("value")}}, {{"t", {4}, 0, raw_of(four)}});
  expect(ok.substr(0, 54), "past the end of the file");  // inside the tensor infos
  expect(ok.substr(0, ok.size() - 1), "lie past the end of the file");
  expect(gguf_file({{"k", u32_value(1)}, {"k", u32_value(2)}}, {}), "appears twice");
  Bytes bad_bool;
  put_le(bad_bool, 7, 4), put_le(bad_bool, 2, 1);
  expect(gguf_file({{"b", bad_bool}}, {}), "a bool must be 0 or 1");
  Bytes bad_type;
  put_le(bad_type, 13, 4);
  expect(gguf_file({{"x", bad_type}}, {}), "unknown value type 13");
  Bytes deep;  // an array of an array of ... (an element's type and count, then the element)
  put_le(deep, 9, 4);
  for (int d = 0; d < 10; d++) put_le(deep, 9, 4), put_le(deep, 1, 8);
  put_le(deep, 4, 4), put_le(deep, 0, 8);
  expect(gguf_file({{"deep", deep}}, {}), "nested deeper");
  expect(gguf_file({}, {{"t", {4}, 99, raw_of(four)}}), "ggml type 99");
  expect(gguf_file({}, {{"t", {4}, 0, raw_of(four), 4}}), "not aligned");
  expect(gguf_file({}, {{"t", {4}, 0, raw_of(four)}, {"u", {4}, 0, raw_of(four), 0}}), "overlap");
  expect(gguf_file({}, {{"t", {4}, 0, raw_of(four)}, {"t", {4}, 0, raw_of(four)}}), "appears twice");
  expect(gguf_file({{"general.alignment", u32_value(48)}}, {}), "power of two");
  expect(gguf_file({}, {{"q", {31}, 8, Bytes(34, '\0')}}), "not a multiple of the block size 32");
  expect(gguf_file({}, {{"t", {1ull << 32, 1ull << 32}, 0, ""}}), "more than 2^60 elements");
}

TEST(FileReaderFuzz, GgufMutantsLoadOrRaise) {
  Counts c = fuzz_file(gguf_seeds(), scratch("fuzz.gguf"), 20261124, 1500, "gguf_load", [](const std::string& path) {
    for (const auto& [name, t] : gguf_load(path).tensors) read_every_byte(t);
  });
  EXPECT_GT(c.loaded, c.tried / 50);
  EXPECT_GT(c.errors, c.tried / 4);
}

// ---- PyTorch checkpoints: files torch.save wrote (tools/pth_reference.py -> tests/golden/pth) ----

const std::string kPth = std::string(TG_GOLDEN_DIR) + "/pth";

// A PyTorch BatchNorm2d's checkpoint loads into nn::BatchNorm (num_batches_tracked: a 0-d int64 in both; ours was a
// (1,) int32, which load_state_dict refused). The running statistics after one step on arange(24).reshape(2, 3, 2,
// 2), by hand: channel c's values are 4c + {0..3} and 12 + 4c + {0..3}, mean 7.5 + 4c and unbiased variance 298 / 7;
// momentum 0.1 from 0 and 1.
TEST(TorchLoad, ABatchNormCheckpointLoadsIntoBatchNorm) {
  nn::BatchNorm bn(3);
  load_state_dict(bn, torch_load(kPth + "/batchnorm.pth"));
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
  std::vector<float> mean = bn.running_mean.to_vector<float>(), var = bn.running_var.to_vector<float>();
  for (int c = 0; c < 3; c++) {
    EXPECT_NEAR(mean[c], 0.1 * (7.5 + 4 * c), 1e-6);
    EXPECT_NEAR(var[c], 0.9 + 0.1 * 298.0 / 7.0, 1e-5);
  }
  EXPECT_EQ(get_state_dict(bn).at("num_batches_tracked").shape(), Shape{});
}

TEST(TorchLoad, ReadsWhatTorchSavedViewsDtypesAndNesting) {
  StateDict sd = torch_load(kPth + "/state.pth");
  std::ifstream in(kPth + "/expected.json");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  size_t checked = 0;
  for (size_t at = 0; (at = text.find('"', at)) != std::string::npos;) {  // "name": "dtype" lines
    size_t end = text.find('"', at + 1), v = text.find('"', end + 1), v_end = text.find('"', v + 1);
    std::string name = text.substr(at + 1, end - at - 1), dtype = text.substr(v + 1, v_end - v - 1);
    at = v_end + 1;
    ASSERT_TRUE(sd.count(name)) << name;
    const Tensor& got = sd.at(name);
    EXPECT_EQ(got.dtype().name(), dtype) << name;
    Tensor want = load_npy(kPth + "/expected/" + name + ".npy");
    EXPECT_EQ(got.shape(), want.shape()) << name;
    EXPECT_EQ(got.cast(dtypes::float64).to_vector<double>(), want.cast(dtypes::float64).to_vector<double>()) << name;
    checked++;
  }
  EXPECT_EQ(checked, 19u);
  EXPECT_EQ(sd.size(), checked);  // "step" and "note" are not tensors
}

TEST(TorchLoad, RefusesCodeInThePickleAndRunsNothing) {
  const char* marker = "/tmp/tg_pth_pwned";  // what each evil file's command would create
  std::remove(marker);
  for (const char* f : {"evil_system.pth", "evil_eval.pth", "evil_class.pth"}) {
    tg::testing::expect_error<ArgumentError>([&] { torch_load(kPth + "/" + f); }, "torch_load", {f, "refused, nothing was run"},
                                             "test_file_readers.cpp");
    EXPECT_FALSE(std::filesystem::exists(marker)) << f;
  }
}

TEST(TorchLoad, MalformedArchivesNameWhatIsWrong) {
  Bytes good = read_file(kPth + "/state.pth");
  std::string path = scratch("bad.pth");
  auto expect = [&](const Bytes& file, const std::string& part) {
    write_file(path, file);
    tg::testing::expect_error<ArgumentError>([&] { torch_load(path); }, "torch_load", {"bad.pth", part}, "test_file_readers.cpp");
  };
  expect("PK", "too short");
  expect(Bytes(100, 'x'), "not a ZIP archive");
  expect(good.substr(0, good.size() / 2), "not a ZIP archive");
  for (size_t cut : {size_t{30}, good.size() - 30, good.size() - 1}) EXPECT_THROW(torch_load((write_file(path, good.substr(0, cut)), path)), ArgumentError);
}

TEST(FileReaderFuzz, TorchCheckpointMutantsLoadOrRaise) {
  std::vector<Bytes> seeds{read_file(kPth + "/state.pth"), read_file(kPth + "/evil_class.pth")};
  Counts c = fuzz_file(seeds, scratch("fuzz.pth"), 1124, 1000, "torch_load", [](const std::string& path) {
    for (const auto& [name, t] : torch_load(path)) read_every_byte(t);
  });
  EXPECT_GT(c.loaded, c.tried / 50);
}

}  // namespace
}  // namespace tg
