#include "runtime/mpi.h"

#include <chrono>
#include <condition_variable>
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
  int (*Allreduce)(const void*, void*, int, void*, void*, void*) =
      lib.get<int (*)(const void*, void*, int, void*, void*, void*)>("MPI_Allreduce");
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
    if (!name) throw ArgumentError("mpi", "no MPI type for " + dt.name() + " (16- and 8-bit floats are widened to float32 first)");
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

namespace {

// The deadline of the collective in progress, watched by a thread of its own: past it the rank says which collective
// waited and leaves the job (_exit: MPI may not be called from a second thread while the first is inside it), and
// Open MPI's runtime then ends every other rank. The collective itself is the blocking MPI_Allreduce: its
// non-blocking form, polled, is slower at large sizes (mpirun -np 2 ./build/bin/tg_bench mpi_allreduce).
class Watchdog {
 public:
  void arm(std::string what, double seconds, int rank, int size) {
    std::lock_guard<std::mutex> lock(mu_);
    what_ = std::move(what), rank_ = rank, size_ = size, seconds_ = seconds;
    deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    armed_ = true;
    if (!thread_.joinable()) thread_ = std::thread([this] { watch(); });
    cv_.notify_all();
  }
  void disarm() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (!armed_) {
        cv_.wait(lock);
        continue;
      }
      if (cv_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ && std::chrono::steady_clock::now() >= deadline_) {
        std::fprintf(stderr,
                     "tg::mpi: %s on rank %d of %d waited %.0f s for the other ranks (TG_MPI_TIMEOUT): a rank stalled or "
                     "left the collective; leaving the job\n",
                     what_.c_str(), rank_, size_, seconds_);
        std::fflush(stderr);
        std::_Exit(3);
      }
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  std::string what_;
  int rank_ = 0, size_ = 1;
  double seconds_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  bool armed_ = false;
};

Watchdog& watchdog() {
  static auto* w = new Watchdog();  // never destroyed: its thread lives to the process' end
  return *w;
}

}  // namespace

std::optional<Op> op_named(const std::string& name) {
  if (name == "sum") return Op::Sum;
  if (name == "max") return Op::Max;
  if (name == "min") return Op::Min;
  return std::nullopt;
}

void allreduce(void* data, size_t count, DType dt, Op op, const std::string& what) {
  if (!launched() || count == 0) return;
  const Api& a = load_api<Api>();
  if (count > static_cast<size_t>(INT32_MAX)) throw ArgumentError(what, "more than 2^31-1 elements in one collective");
  if (dt == dtypes::bool_ && op == Op::Sum) throw ArgumentError(what, "a sum of bools: cast them to an integer dtype first");
  // a rank that never joins makes every other one leave the job instead of hanging
  watchdog().arm(what, static_cast<double>(getenv_int("TG_MPI_TIMEOUT", 60)), a.rank, a.size);
  a.Allreduce(reinterpret_cast<void*>(1), data, static_cast<int>(count), a.type(dt), op == Op::Sum ? a.sum : op == Op::Max ? a.max : a.min, a.world);
  watchdog().disarm();
}

}  // namespace tg::runtime::mpi
