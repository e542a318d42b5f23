// BEAM=n: the opts of a kernel found by timing candidates on the launch's own buffers (tinygrad's beam search),
// remembered on disk (table "beam" of the disk cache, keyed by the kernel, the compiler and the machine's CPU), so
// a second run searches nothing. BEAM_CACHE=file also keeps the choices in one text file (read first; every choice
// found on disk or by a search is appended) that can be shipped with a program to machines of the same kind (same
// compiler and CPU).
#pragma once
#include <vector>

#include "codegen/lower.h"
#include "runtime/buffer.h"
#include "runtime/device.h"

namespace tg::engine {

// Starting from no opts and from choose_opts(), each round adds one UPCAST, UNROLL or VECTOR to each of the `width` best
// lists, times every new candidate (compiled, run on `bufs`: inputs are only read, the output is written again by
// the real launch), keeps the `width` fastest, and stops when a round finds nothing faster (at most 4 rounds).
// Kernels that run under BEAM_MIN_US (default 50) microseconds with the best start are not searched.
std::vector<codegen::Opt> beam_search(const uop::UOp& ast, const codegen::LoweredKernel& base, runtime::Device& device,
                                      const std::vector<runtime::Buffer*>& bufs, int width);

}  // namespace tg::engine
