// tg_bench mpi_allreduce (under mpirun): the float32 sum of N bytes over the ranks, three ways on the same sizes:
// MPI's own blocking MPI_Allreduce on a host buffer (called directly from Open MPI's library), our collective on
// the same buffer (runtime::mpi::allreduce: the same call under the watchdog's deadline), and tg::mpi::allreduce of
// a tensor (the shape check, the copies out of and back into tensors). Rank 0 prints; GB/s is bytes / time.
#include <dlfcn.h>

#include <cstdio>
#include <vector>

#include "bench.h"
#include "runtime/mpi.h"
#include "tg/tg.h"

namespace tg::bench {

int mpi_allreduce(const Args& args) {
  if (!mpi::launched()) {
    std::fprintf(stderr, "tg_bench mpi_allreduce: start it with mpirun -np 2 (or more)\n");
    return 1;
  }
  // MPI's own call, from the library our runtime opened (RTLD_NOLOAD: it is loaded already)
  void* lib = dlopen("libmpi.so.40", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libmpi.so", RTLD_NOW | RTLD_NOLOAD);
  using Allreduce = int (*)(const void*, void*, int, void*, void*, void*);
  auto allreduce = lib ? reinterpret_cast<Allreduce>(dlsym(lib, "MPI_Allreduce")) : nullptr;
  void *f32 = lib ? dlsym(lib, "ompi_mpi_float") : nullptr, *sum = lib ? dlsym(lib, "ompi_mpi_op_sum") : nullptr,
       *world = lib ? dlsym(lib, "ompi_mpi_comm_world") : nullptr;
  if (!allreduce || !f32 || !sum || !world) {
    std::fprintf(stderr, "tg_bench mpi_allreduce: Open MPI's MPI_Allreduce not found\n");
    return 1;
  }
  int64_t max_mb = args.get("--max-mb", 256), reps = args.get("--reps", 5);
  for (int64_t bytes = 1024; bytes <= max_mb * (int64_t{1} << 20); bytes *= 4) {
    size_t n = static_cast<size_t>(bytes / 4);
    std::vector<float> buf(n, 1.0f);
    Tensor t = Tensor::ones({static_cast<int64_t>(n)}).realize();
    auto timed = [&](auto&& f) {
      std::vector<double> ts;
      f();  // warm-up
      for (int64_t r = 0; r < reps; r++) {
        double start = now_s();
        f();
        ts.push_back(now_s() - start);
      }
      return median(ts);
    };
    double t_mpi = timed([&] { allreduce(reinterpret_cast<void*>(1), buf.data(), static_cast<int>(n), f32, sum, world); });
    double t_ours = timed([&] { runtime::mpi::allreduce(buf.data(), n, dtypes::float32, runtime::mpi::Op::Sum, "bench"); });
    double t_tensor = timed([&] { mpi::allreduce(t).realize(); });
    if (mpi::rank() == 0)
      std::printf("{\"name\": \"mpi_allreduce\", \"ranks\": %d, \"bytes\": %lld, \"mpi_allreduce_gbs\": %.3f, \"ours_host_gbs\": %.3f, "
                  "\"ours_tensor_gbs\": %.3f, \"mpi_us\": %.1f, \"ours_host_us\": %.1f, \"ours_tensor_us\": %.1f}\n",
                  mpi::size(), static_cast<long long>(bytes), bytes / t_mpi / 1e9, bytes / t_ours / 1e9, bytes / t_tensor / 1e9,
                  t_mpi * 1e6, t_ours * 1e6, t_tensor * 1e6);
  }
  return 0;
}

}  // namespace tg::bench
