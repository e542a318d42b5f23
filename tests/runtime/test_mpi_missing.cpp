// tg::mpi where mpirun started the process but Open MPI's library is missing: a DeviceError saying what to
// install, and outside mpirun no library is needed at all (rank 0 of 1, collectives return their input).
#include <gtest/gtest.h>

#include <cstdlib>

#include "tg/tg.h"

using namespace tg;

TEST(MPI, WithoutMpirunAProcessIsRankZeroOfOne) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE")) GTEST_SKIP() << "started by mpirun";
  EXPECT_FALSE(mpi::launched());
  EXPECT_EQ(mpi::rank(), 0);
  EXPECT_EQ(mpi::size(), 1);
  Tensor x = Tensor::arange(0, 5, 1, dtypes::float32);
  EXPECT_EQ(mpi::allreduce(x).to_vector<float>(), x.to_vector<float>());
  EXPECT_THROW(mpi::allreduce(x, "mean"), ArgumentError);
}

TEST(MPI, AMissingLibraryUnderMpirunSaysWhatToInstall) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE")) GTEST_SKIP() << "started by mpirun";
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  setenv("TG_MPI_LIBRARY", "/nonexistent/libmpi.so.40", 1);
  try {
    mpi::rank();
    ADD_FAILURE() << "no error";
  } catch (const DeviceError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("openmpi-bin"), std::string::npos) << what;
    EXPECT_NE(what.find("/nonexistent/libmpi.so.40"), std::string::npos) << what;
  }
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("TG_MPI_LIBRARY");
  EXPECT_EQ(mpi::size(), 1);  // and the process goes on as one rank
}
