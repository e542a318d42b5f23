#include "runtime/mpi.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/dynlib.h"
#include "tg/context.h"
#include "tg/error.h"

namespace tg::runtime::mpi {

namespace {

// Open MPI's ABI: handles are pointers to its predefined objects (MPI_COMM_WORLD is &ompi_mpi_comm_world),
// MPI_IN_PLACE is (void*)1, MPI_STATUS_IGNORE is null, MPI_THREAD_SERIALIZED is 2
std::vector<std::string> library_names() {
  if (const char* own = std::getenv("TG_MPI_LIBRARY")) return {own};
  return {"libmpi.so.40", "libmpi.so"};
}

struct Api {
  DynLib lib{"MPI", library_names(),
             "Open MPI's library (Debian: apt-get install openmpi-bin libopenmpi3; programs start with mpirun -np N)"};
  using Fn1 = int (*)(int*);
  Fn1 Initialized = lib.get<Fn1>("MPI_Initialized"), Finalized = lib.get<Fn1>("MPI_Finalized");
  int (*InitThread)(int*, char***, int, int*) = lib.get<int (*)(int*, char***, int, int*)>("MPI_Init_thread");
  int (*Finalize)() = lib.get<int (*)()>("MPI_Finalize");
  int (*CommRank)(void*, int*) = lib.get<int (*)(void*, int*)>("MPI_Comm_rank");
  int (*CommSize)(void*, int*) = lib.get<int (*)(void*, int*)>("MPI_Comm_size");
  int (*Iallreduce)(const void*, void*, int, void*, void*, void*, void**) =
      lib.get<int (*)(const void*, void*, int, void*, void*, void*, void**)>("MPI_Iallreduce");
  int (*Test)(void**, int*, void*) = lib.get<int (*)(void**, int*, void*)>("MPI_Test");
  int (*Abort)(void*, int) = lib.get<int (*)(void*, int)>("MPI_Abort");
  void* world = lib.get<void*>("ompi_mpi_comm_world");
  void* sum = lib.get<void*>("ompi_mpi_op_sum");
  void* max = lib.get<void*>("ompi_mpi_op_max");
  void* min = lib.get<void*>("ompi_mpi_op_min");
  void* type(DType dt) const {
    const char* name = dt == dtypes::float32   ? "ompi_mpi_float"
                       : dt == dtypes::float64 ? "ompi_mpi_double"
                       : dt == dtypes::int8    ? "ompi_mpi_int8_t"
                       : dt == dtypes::int16   ? "ompi_mpi_int16_t"
                       : dt == dtypes::int32   ? "ompi_mpi_int32_t"
                       : dt == dtypes::int64   ? "ompi_mpi_int64_t"
                       : dt == dtypes::uint8 || dt == dtypes::bool_ ? "ompi_mpi_uint8_t"
                       : dt == dtypes::uint16  ? "ompi_mpi_uint16_t"
                       : dt == dtypes::uint32  ? "ompi_mpi_uint32_t"
                       : dt == dtypes::uint64  ? "ompi_mpi_uint64_t"
                                               : nullptr;
    if (!name) throw ArgumentError("mpi", "no MPI type for " + dt.name() + " (16-bit floats are widened to float32 first)");
    return lib.get<void*>(name);
  }
  int rank = 0, size = 1;
  Api() {
    int done = 0;
    Initialized(&done);
    if (!done) {
      int provided = 0;
      InitThread(nullptr, nullptr, 2, &provided);
      std::atexit([] {
        const Api& a = load_api<Api>();
        int finalized = 0;
        a.Finalized(&finalized);
        if (!finalized) a.Finalize();
      });
    }
    CommRank(world, &rank);
    CommSize(world, &size);
  }
};

}  // namespace

bool launched() {
  if (!std::getenv("OMPI_COMM_WORLD_SIZE")) return false;
  load_api<Api>();  // raises what to install when the launcher is there but the library is not
  return true;
}

int rank() { return launched() ? load_api<Api>().rank : 0; }
int size() { return launched() ? load_api<Api>().size : 1; }

void allreduce(void* data, size_t count, DType dt, Op op, const std::string& what) {
  if (!launched() || count == 0) return;
  const Api& a = load_api<Api>();
  if (count > static_cast<size_t>(INT32_MAX)) throw ArgumentError(what, "more than 2^31-1 elements in one collective");
  if (dt == dtypes::bool_ && op == Op::Sum) throw ArgumentError(what, "a sum of bools: cast them to an integer dtype first");
  void* request = nullptr;
  a.Iallreduce(reinterpret_cast<void*>(1), data, static_cast<int>(count), a.type(dt),
               op == Op::Sum ? a.sum : op == Op::Max ? a.max : a.min, a.world, &request);
  // wait with a deadline: a rank that never joins makes every other one end the job instead of hanging
  auto start = std::chrono::steady_clock::now();
  double limit = static_cast<double>(getenv_int("TG_MPI_TIMEOUT", 60));
  for (int polls = 0;; polls++) {
    int flag = 0;
    a.Test(&request, &flag, nullptr);
    if (flag) return;
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > limit) {
      std::fprintf(stderr,
                   "tg::mpi: %s on rank %d of %d waited %.0f s for the other ranks (TG_MPI_TIMEOUT): a rank stalled or "
                   "left the collective; aborting the job\n",
                   what.c_str(), a.rank, a.size, waited);
      std::fflush(stderr);
      a.Abort(a.world, 3);
      std::_Exit(3);
    }
    if (polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace tg::runtime::mpi
