// .npy files: numpy's own files (tests/golden/npy, written by tools/npy_numpy.py) read value by value, written
// back and read by numpy (ctest npy.numpy_reads_ours), and malformed files refused without reading out of bounds.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "support/expect_error.h"
#include "support/scratch.h"
#include "tg/tg.h"

using namespace tg;

namespace {

const std::string kDir = std::string(TG_GOLDEN_DIR) + "/npy";

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void write_bytes(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// Also writes the files that the ctest npy.numpy_reads_ours hands to numpy.
TEST(Npy, ReadsNumpysFilesAndWritesThemBack) {
  const char* out = std::getenv("TG_NUMPY_OUT");
  std::string dir = out && *out ? out : tg::testing::scratch_path("npy_out");
  std::filesystem::create_directories(dir);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    Tensor t = load_npy(entry.path().string());
    save_npy(t, dir + "/" + name);
    Tensor back = load_npy(dir + "/" + name);  // our own file: the same dtype, shape and bytes
    EXPECT_EQ(back.dtype(), t.dtype());
    EXPECT_EQ(back.shape(), t.shape());
    EXPECT_EQ(back.to_bytes(), t.to_bytes());
    files++;
  }
  EXPECT_EQ(files, 17);
  // the layouts, value by value
  Tensor f = load_npy(kDir + "/fortran_f8.npy");
  EXPECT_EQ(f.shape(), (Shape{2, 3}));
  EXPECT_EQ(f.to_vector<double>(), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(load_npy(kDir + "/big_endian_i4.npy").to_vector<int32_t>(), (std::vector<int32_t>{-3, -2, -1, 0, 1, 2}));
  Tensor s = load_npy(kDir + "/scalar_f4.npy");
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.item<float>(), 1.5f);
  EXPECT_EQ(load_npy(kDir + "/empty_f4.npy").shape(), (Shape{0, 3}));
  Tensor v2 = load_npy(kDir + "/version2_u2.npy", "CPU:1");
  EXPECT_EQ(v2.device(), "CPU:1");
  EXPECT_EQ(v2.cast(dtypes::int32).to_vector<int32_t>(), Tensor::arange(12).to_vector<int32_t>());
}

TEST(Npy, MalformedFilesRaise) {
  std::string good = read_bytes(kDir + "/every_f4.npy"), path = tg::testing::scratch_path("bad.npy");
  auto with = [&](std::string bytes) {
    write_bytes(path, bytes);
    return [&] { load_npy(path); };
  };
  std::string header_text = good.substr(10, good.find('\n') - 10);
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string b = good;
    b.replace(b.find(from), from.size(), to);
    return b;
  };
  tg::testing::expect_error<Error>(with("not numpy at all"), "load_npy", {path, "magic"}, __FILE__);
  tg::testing::expect_error<Error>(with(good.substr(0, good.size() - 3)), "load_npy", {path, "(2, 3)", "24 bytes", "21"}, __FILE__);
  tg::testing::expect_error<Error>(with(good + "x"), "load_npy", {"25"}, __FILE__);
  tg::testing::expect_error<Error>(with(good.substr(0, 9)), "load_npy", {"magic"}, __FILE__);
  tg::testing::expect_error<Error>(with(good.substr(0, 40)), "load_npy", {"header claims"}, __FILE__);
  tg::testing::expect_error<Error>(with(replaced("'<f4'", "'<c8'")), "load_npy", {"'<c8'", "does not have"}, __FILE__);
  tg::testing::expect_error<Error>(with(replaced("'<f4'", "'|O8'")), "load_npy", {"'|O8'"}, __FILE__);
  tg::testing::expect_error<Error>(with(replaced("(2, 3)", "(2, x)")), "load_npy", {"shape"}, __FILE__);
  tg::testing::expect_error<Error>(with(replaced("False", "Maybe")), "load_npy", {"fortran_order"}, __FILE__);
  std::string v9 = good;
  v9[6] = 9;
  tg::testing::expect_error<Error>(with(v9), "load_npy", {"version 9"}, __FILE__);
  tg::testing::expect_error<Error>([&] { load_npy(path + ".missing"); }, "load_npy", {"cannot open"}, __FILE__);
  tg::testing::expect_error<Error>([&] { save_npy(Tensor::ones({2}, dtypes::bfloat16), path); }, "save_npy", {"bfloat16"}, __FILE__);
}

// Random byte mutations of a valid file: each loads or raises a tg::Error; never anything else (ASan watches the
// reads in CI)
TEST(Npy, MutatedFilesLoadOrRaise) {
  std::string good = read_bytes(kDir + "/fortran_f8.npy"), path = tg::testing::scratch_path("mutant.npy");
  std::mt19937 rng(5);
  int loaded = 0, refused = 0;
  for (int i = 0; i < 400; i++) {
    std::string b = good;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 4); k < n; k++) {
      size_t at = rng() % b.size();
      switch (rng() % 3) {
        case 0: b[at] = static_cast<char>(rng()); break;
        case 1: b.erase(at, 1 + rng() % 8); break;
        default: b.insert(at, 1, static_cast<char>("(),:'0123456789 \n"[rng() % 17])); break;
      }
    }
    write_bytes(path, b);
    try {
      Tensor t = load_npy(path);
      t.to_bytes();
      loaded++;
    } catch (const Error&) {
      refused++;
    }
  }
  EXPECT_EQ(loaded + refused, 400);
  EXPECT_GT(refused, 0);
}

}  // namespace
