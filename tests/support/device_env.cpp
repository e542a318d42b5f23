// The value suites run again on another device through DEV (ctest's opencl.* entries), or with every kernel also
// compiled for CUDA (RENDER_CHECK=CUDA: cuda_compile.*). Where that device or NVRTC cannot be opened here, the test
// binary exits with 77 before any test runs, which ctest reports as skipped (SKIP_RETURN_CODE), never as passed.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/device.h"
#include "runtime/nvrtc.h"
#include "tg/error.h"

namespace {

const bool device_checked = [] {
  const char* check = std::getenv("RENDER_CHECK");
  if (check && *check && !tg::runtime::nvrtc_available()) {  // the CUDA compile check needs NVRTC (no GPU)
    std::fprintf(stderr, "skipped: RENDER_CHECK=%s needs NVRTC, which cannot be loaded here\n", check);
    std::exit(77);
  }
  const char* dev = std::getenv("DEV");
  if (!dev || !*dev) return true;
  try {
    tg::runtime::get_device(dev);
  } catch (const tg::Error& e) {
    std::fprintf(stderr, "skipped: DEV=%s cannot be opened here: %s\n", dev, e.what());
    std::exit(77);
  }
  return true;
}();

}  // namespace
