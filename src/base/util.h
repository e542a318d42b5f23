// Small helpers that several layers share, kept at the bottom so that each can call them: the profiler (base),
// the compiler's processes (runtime), the file formats (state).
#pragma once
#include <cstdint>
#include <string>

namespace tg::base {

// s as a JSON string literal: quotes, backslashes and control characters escaped
std::string json_quote(const std::string& s);
// where temporary files go: $TMPDIR, else /tmp
std::string temp_dir();
// `path` with ".rank<r>" before its extension inside a job of several MPI processes (mpirun sets
// OMPI_COMM_WORLD_RANK and _SIZE; MPICH and Slurm's PMI, PMI_RANK and PMI_SIZE), else `path`: the files that
// PROFILE=1, VIZ=1 and GRAPH=1 write at a fixed place are then one per rank instead of one the ranks overwrite
std::string per_rank(const std::string& path);

// a count that changes whenever a tg::Context begins or ends: a parsed setting is cached against it
uint64_t context_generation();

}  // namespace tg::base
