// MPI across processes, loaded at run time like a device driver: Open MPI's libmpi.so.40 by dlopen
// ($TG_MPI_LIBRARY overrides), so the library builds and runs without it. A process counts as launched by MPI when Open MPI's launcher says so
// (OMPI_COMM_WORLD_SIZE in the environment); otherwise it is rank 0 of 1 and no library is opened.
// Collectives work on host memory and wait with a deadline (TG_MPI_TIMEOUT seconds, 60 by default): a rank that
// stalls makes the others leave the job with a message naming the collective, and Open MPI's runtime ends it, never
// a hang; a rank that dies ends the job the same way.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "tg/dtype.h"

namespace tg::runtime::mpi {

// Whether this process was started by an MPI launcher (mpirun); initializes MPI on first use when it was, and
// raises DeviceError saying what to install when the launcher is there but its library is not.
bool launched();
int rank();  // 0 when not launched
int size();  // 1 when not launched

enum class Op { Sum, Max, Min };
// "sum", "max" or "min" as an Op (tg::mpi's and the ALLREDUCE node's names for them); nullopt for any other name
std::optional<Op> op_named(const std::string& name);

// data[i] combined over every rank, in place, for count elements of dtype dt (16- and 8-bit floats are not summed here:
// the caller widens them). `what` names the collective in errors.
void allreduce(void* data, size_t count, DType dt, Op op, const std::string& what);

}  // namespace tg::runtime::mpi
