// MNIST's IDX files: a big-endian header (magic 0x0000080N with N dims, then N sizes) and uint8 data.
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <vector>

#include "tg/datasets.h"
#include "tg/error.h"

namespace tg::datasets {

namespace {

// the whole file, inflated when it is gzip
std::vector<unsigned char> read_file(const std::string& path, SourceLocation where) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files as they are
  if (!f) throw ArgumentError("mnist", "cannot open " + path, where);
  std::vector<unsigned char> data;
  unsigned char chunk[1 << 16];
  int n;
  while ((n = gzread(f, chunk, sizeof chunk)) > 0) data.insert(data.end(), chunk, chunk + n);
  int err = 0;
  std::string msg = n < 0 ? gzerror(f, &err) : "";
  gzclose(f);
  if (n < 0) throw ArgumentError("mnist", path + ": corrupt gzip data (" + msg + ")", where);
  return data;
}

uint32_t be32(const unsigned char* p) { return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3]; }

// an IDX file of `ndim` dims as a uint8 tensor
Tensor read_idx(const std::string& dir, const std::string& name, size_t ndim, SourceLocation where) {
  std::string path = dir + "/" + name;
  if (!std::filesystem::exists(path)) {
    if (!std::filesystem::exists(path + ".gz"))
      throw ArgumentError("mnist", "no " + name + " (or " + name + ".gz) in " + dir, where);
    path += ".gz";
  }
  std::vector<unsigned char> data = read_file(path, where);
  size_t header = 4 + 4 * ndim;
  if (data.size() < header || be32(data.data()) != 0x800u + ndim)
    throw ArgumentError("mnist", path + ": not an IDX file of unsigned bytes with " + std::to_string(ndim) + " dims", where);
  Shape shape;
  size_t n = 1;
  for (size_t i = 0; i < ndim; i++) {
    shape.push_back(be32(data.data() + 4 + 4 * i));
    n *= static_cast<size_t>(shape.back());
  }
  if (data.size() - header != n)
    throw ArgumentError("mnist", path + ": the header promises " + std::to_string(n) + " bytes of data, the file has " +
                                     std::to_string(data.size() - header), where);
  return Tensor(std::vector<uint8_t>(data.begin() + static_cast<std::ptrdiff_t>(header), data.end()), shape);
}

}  // namespace

MNIST mnist(const std::string& dir_arg, SourceLocation where) {
  std::string dir = dir_arg.empty() ? kFashionMnistDir : dir_arg;
  if (!std::filesystem::is_directory(dir))
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
