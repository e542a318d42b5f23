// Kernel optimizations (tinygrad's OptOps), as explicit steps that lower() applies to the loop space:
//
//   UPCAST(axis, n)  a global axis is cut into (size / n) loop iterations times n copies of the body: n outputs per
//                    iteration, each with its own accumulator (register blocking), and loads that do not depend on
//                    the axis shared by the copies. Copies that read consecutive addresses become vector code in
//                    the C compiler (its SLP vectorizer).
//   UNROLL(axis, n)  a reduce axis is cut the same way: n copies of the reduced value are combined per iteration.
//   VECTOR(axis, n)  a global axis cut as by UPCAST, its n lanes one float32 vector value (n = 2, 4, 8 or 16): loads
//                    that move one element per lane are one vector load (AVX on x86), invariant values are
//                    broadcast, others gathered. Where some op on the lanes has no vector form, the same as UPCAST.
//                    On a reduce axis, a vector accumulator combined across its lanes after the loop.
//   LOCAL(axis, n)   grid devices only: a global axis cut into work-groups of n work-items (the axis' index is
//                    group * n + local index, outside its UPCAST/VECTOR lanes). Legal while the work-group, every
//                    LOCAL multiplied, fits the device (DeviceCaps max_local_size, and max_local per dimension).
//   GROUP(axis, n)   grid devices only: a reduce axis shared by n work-items of a group (work-item j takes elements
//                    j, j + n, ...: neighbours read neighbouring memory); each reduces its share, the n partial
//                    results meet in local memory after a barrier, every work-item sums them and the first stores.
//                    GROUPTOP(axis, n) the same with work-item j taking the j-th contiguous part. One per kernel,
//                    not with UPCAST or VECTOR (their copies would share the local buffer), legal while the group
//                    and its local memory fit the device.
//   PADTO(axis, n)   a global axis' loop space rounded up to a multiple of n (tinygrad's PADTO), so that the opts
//                    after it can cut a size with no fitting divisor (197 tokens: 25 blocks of 8 rows). The extra
//                    positions read the axis' last real position (the index clamped: no gates inside the loops,
//                    and only values the kernel computes anyway) and store nothing (the store is gated). It comes
//                    before the axis' other opts.
//   SWAP(axis, other)  CPU only: the loops of global axes `axis` and `other` trade places in the loop nest (Opt's
//                    amount holds `other`). A matmul's heuristic order (rows outside columns) streams all of B
//                    once per block of rows; with the column loop outside, each B panel stays in cache while the
//                    rows pass under it, and A, re-read instead, is read fewer times (choose_opts weighs the two).
//                    The outermost loop is the one the CPU cuts between threads.
//   TC(0, cfg)       a sum of products of 16-bit floats (TensorCoreFit, lower.h) on the device's tensor cores
//                    (DeviceCaps::tensor_cores): each warp of 32 threads computes tiles of 16 rows by 8 columns
//                    with one mma instruction per 16 terms (16x8x16, float32 accumulation, exact products). cfg's
//                    four digits: tiles per warp along m, along n, warps per block along m, along n (2422: a warp
//                    computes 32 x 32, a block of 4 warps 64 x 64). Alone: no other opt beside it. Where the device
//                    has none, never legal. Sizes the blocks do not divide are rounded up, the positions past their
//                    ends gated (read nothing, store nothing). The sums' order changes, and the products are not
//                    rounded to 16 bits.
//
// Every opt keeps the values (up to float reassociation in UNROLL). choose_opts() is the heuristic; NOOPT=1 turns
// it off, and tests apply random legal opts (random_opts) to check that results do not change.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tg::codegen {

struct LoweredKernel;

enum class OptOp { UPCAST, UNROLL, VECTOR, LOCAL, GROUP, GROUPTOP, SWAP, PADTO, TC };

struct Opt {
  OptOp op;
  int64_t axis;
  int64_t amount;
  bool operator==(const Opt&) const = default;
};

// "UPCAST(3,4) UNROLL(5,5)"; "" for none
std::string opts_str(const std::vector<Opt>& opts);
// n rounded up to a multiple of m (m > 0): a PADTO axis' size
inline int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }
// The loop space once the PADTOs among `opts` have rounded their axes up
std::vector<int64_t> padded_shape(std::vector<int64_t> shape, const std::vector<Opt>& opts);

// TC's configuration, from its amount's digits (opts.h); zeros where a digit is 0 or the amount has not four
struct TensorCoreConfig {
  int64_t tiles_m = 0, tiles_n = 0, warps_m = 0, warps_n = 0;
  int64_t block_m() const { return 16 * tiles_m * warps_m; }
  int64_t block_n() const { return 8 * tiles_n * warps_n; }
};
TensorCoreConfig tc_config(int64_t amount);
// every legal TC opt for the kernel, the heuristic's choice first (BEAM times them all): those whose blocks divide the
// sizes, then the least padded; choose_opts takes the first where padding at most doubles the work
std::vector<Opt> tc_opts(const LoweredKernel& k);

// opts_str's inverse (BEAM's remembered choices); {} when some token is not an opt
std::vector<Opt> parse_opts(const std::string& s);

// Whether `opts` can apply to the kernel: each axis at most once, an amount > 1 dividing the axis' size, UPCAST and
// VECTOR on a global axis, UNROLL on an axis that a REDUCE of the lowered kernel loops over; VECTOR by 2, 4, 8 or
// 16, one per kernel except beside a REDUCE that does not vary along it (a row reduce's own axis, Grouping's
// row_reduces, beside the global vector axis: never two global ones); LOCAL on a global axis of a kernel lowered for
// a grid device, within its work-group limits; SWAP of two distinct global axes, on a device without a grid, in a
// kernel whose reductions vary along every global axis; PADTO on a global axis before its other opts.
bool legal(const LoweredKernel& k, const std::vector<Opt>& opts);

// The opts for a kernel lowered without any: for kernels with a reduction, upcast global axes that some input
// does not depend on (each copy reuses its loads) up to 64 accumulators, and unroll the innermost reduce loop
// when short; on grid devices, work-groups along the innermost global axis (LOCAL); on the CPU, a SWAP of the
// outermost global loop when that reads the inputs from memory far fewer times (loop_traffic). Empty under NOOPT=1.
std::vector<Opt> choose_opts(const LoweredKernel& k);

// The bytes a kernel's loads would bring from memory with its global loops in `order` (outermost first): each
// load's buffer once, times the trips of every loop outside its innermost dependency that it does not depend on
// (it cannot stay in cache across those). `trips` gives each axis' loop trip count after the opts' lanes.
double loop_traffic(const LoweredKernel& k, const std::vector<int64_t>& order, const std::vector<int64_t>& trips);

// A random legal list (for tests): each candidate axis upcast or unrolled by a random divisor, or left alone; one
// axis may be the vector axis instead.
std::vector<Opt> random_opts(const LoweredKernel& k, std::mt19937& rng);

}  // namespace tg::codegen
