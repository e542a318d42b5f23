// Many processes, one job (issue 25): data-parallel training across processes and machines through MPI. Start the
// program with Open MPI's launcher (`mpirun -np 2 ./prog`); each process is a rank with its own devices. MPI is
// loaded at run time (Open MPI's libmpi.so.40): a program that is not started by mpirun is rank 0 of 1 and every
// collective returns its input, and where mpirun started it but the library is missing, the first call raises a
// DeviceError saying what to install.
//
//   tg::mpi::allreduce_gradients(params);   // after backward(): every rank's gradients averaged, one collective
//   optimizer.step();                       // identical updates on every rank
//
// A rank that dies ends the job (Open MPI's runtime stops the others); one that stalls in a collective for more than
// TG_MPI_TIMEOUT seconds (60) makes the others print which collective waited and leave, which ends it: never a hang.
#pragma once
#include <string>
#include <vector>

#include "tg/tensor.h"

namespace tg::mpi {

using Loc = SourceLocation;

bool launched();  // whether mpirun started this process
int rank();       // this process' rank (0 when not launched)
int size();       // the number of ranks (1 when not launched)

// x combined elementwise over every rank ("sum", "max" or "min"); every rank gets the result, on x's device and in
// x's dtype (16-bit floats are combined in float32). The ranks' shapes and dtypes are compared first (a small
// collective now): where they differ, every rank raises an ArgumentError naming its own and the range seen across
// ranks. The result is lazy, an op of the graph: a TinyJit replays it with the kernels around it. A sum is
// differentiable (x's gradient is the sum of the ranks' gradients of the result); max and min are not.
Tensor allreduce(const Tensor& x, const std::string& op = "sum", Loc where = Loc::current());

// Each parameter's gradient replaced by its mean over the ranks (the gradients of one global batch split between
// them), in one collective for all of them, written into each gradient's buffer (realized; inside a TinyJit, part
// of its capture); parameters without a gradient must lack it on every rank.
void allreduce_gradients(const std::vector<Tensor>& params, Loc where = Loc::current());

}  // namespace tg::mpi
