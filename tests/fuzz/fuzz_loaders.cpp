// The file loaders under a fuzzer: the first byte picks the format (safetensors, .npy, torch.save's ZIP, GGUF,
// ONNX), the rest is the file. Every tensor that loads has its bytes read (load_now) and, when small, computed.
// A tg::Error is the expected answer to a malformed file; anything else (a crash, a sanitizer report, another
// exception, a hang) is a bug.
//
//   clang (libFuzzer): cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DTG_FUZZ=ON
//                      cmake --build build-fuzz --target fuzz_loaders && ./build-fuzz/bin/fuzz_loaders corpus/
//   any build:         ./build/bin/fuzz_loaders_replay FILE...   runs each file once (ctest: the regressions in
//                      tests/fuzz/loaders/, inputs that once crashed a loader)
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "tg/onnx.h"
#include "tg/state.h"
#include "tg/tg.h"

namespace {

void use(const tg::Tensor& t) {
  tg::load_now({t});
  if (t.numel() <= 64) t.cast(tg::dtypes::float32).contiguous().realize();
}

void use(const tg::StateDict& d) {
  for (const auto& [name, t] : d) use(t);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const std::string path = "/tmp/tg_fuzz_loaders_" + std::to_string(::getpid());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data + 1, 1, size - 1, f);
  std::fclose(f);
  try {
    switch (data[0] % 5) {
      case 0: use(tg::safe_load(path)), tg::safe_load_metadata(path); break;
      case 1: use(tg::load_npy(path)); break;
      case 2: use(tg::torch_load(path)); break;
      case 3: use(tg::gguf_load(path).tensors); break;
      default: tg::onnx::load(path); break;
    }
  } catch (const tg::Error&) {
  }
  return 0;
}
