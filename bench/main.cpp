// tg_bench: benchmarks of tinygrad.cpp. Each prints one JSON line per measurement.
//   tg_bench symbolic [--nodes N]   build and simplify an N-node index expression graph
//   tg_bench shapetracker [--reps N] movement ops, simplify() and to_indexed() on typical View stacks
//   tg_bench overhead [--reps N]     framework time per launch of an already compiled kernel
//   tg_bench schedule [--ops N]      time to schedule an N-op graph
//   tg_bench compile [--kernels N]   compile time per fresh kernel
//   tg_bench first_result            process start to the first value read back (run twice: warm cache)
//   tg_bench mlp_backward [--layers N --width W --batch B]  peak memory of a deep MLP's forward + backward
//   tg_bench matmul [N]              N x N x N float32 matmul (1024); --m M --k K --batch B --bt (B^T stored)
//   tg_bench conv [--batch B]        beautiful_mnist's four convolutions, forward and backward
//   tg_bench elementwise [--n N]     memcpy for reference, a + b, gelu over N float32, a transpose of them
//   tg_bench copy [--n N]            N float32 to DEV and back (host memory as tensors hold it)
//   tg_bench reduce [--n N]          sum of N float32, as a vector and as 4096 rows or columns
//   tg_bench softmax [--rows R --cols C]
//   tg_bench sort [--rows R --cols C]  a stable sort along axis 1, values and indices (1 x 65536)
//   tg_bench mnist_step [--batch B]  one beautiful_mnist training step under TinyJit
//   tg_bench peak                    the machine's float32 FMA peak (one core, every core) and copy bandwidth
//   mpirun -np 2 tg_bench mpi_allreduce [--max-mb M]  float32 sums over the ranks, 1 KB to M MB: MPI_Allreduce,
//                                    ours on the same host buffer, and tg::mpi::allreduce of a tensor
// bench/compare.sh runs the kernel workloads next to PyTorch's.
#include <cstring>
#include <iostream>
#include <string>

#include "bench.h"
#include "cli.h"

int main(int argc, char** argv) {
  const tg::cli::Usage usage{
      "tg_bench",
      "usage: tg_bench <workload> [options]\n  workloads: symbolic [--nodes N], shapetracker [--reps N], overhead [--reps N],\n"
      "             schedule [--ops N], compile [--kernels N], first_result,\n"
      "             mlp_backward [--layers N --width W --batch B], matmul [N --m M --k K --batch B --bt], conv [--batch B],\n"
      "             elementwise [--n N], copy [--n N], reduce [--n N], softmax [--rows R --cols C],\n"
      "             sort [--rows R --cols C], mnist_step [--batch B],\n"
      "             peak, mpi_allreduce [--max-mb M] (under mpirun)\n"};
  if (argc < 2) usage.fail("no workload given");
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) usage.help();
  std::string what = argv[1];
  tg::bench::Args args(argc - 2, argv + 2);
  if (what == "symbolic") return tg::bench::symbolic(args);
  if (what == "shapetracker") return tg::bench::shapetracker(args);
  if (what == "overhead") return tg::bench::overhead(args);
  if (what == "schedule") return tg::bench::schedule_time(args);
  if (what == "compile") return tg::bench::compile_time(args);
  if (what == "first_result") return tg::bench::first_result(args);
  if (what == "mlp_backward") return tg::bench::mlp_backward(args);
  if (what == "matmul") return tg::bench::matmul(args);
  if (what == "conv") return tg::bench::conv(args);
  if (what == "elementwise") return tg::bench::elementwise(args);
  if (what == "copy") return tg::bench::copy(args);
  if (what == "reduce") return tg::bench::reduce(args);
  if (what == "softmax") return tg::bench::softmax(args);
  if (what == "sort") return tg::bench::sort(args);
  if (what == "mnist_step") return tg::bench::mnist_step(args);
  if (what == "peak") return tg::bench::peak(args);
  if (what == "mpi_allreduce") return tg::bench::mpi_allreduce(args);
  usage.fail("unknown workload '" + what + "'");
}
