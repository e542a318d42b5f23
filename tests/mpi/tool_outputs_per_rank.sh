#!/bin/sh
# ctest mpi.tool_outputs_one_file_per_rank: under mpirun, PROFILE=1 and VIZ=1 write one file per rank (x.rank0.ext,
# x.rank1.ext) instead of two processes writing one file. Exit 77 (skipped) without Open MPI's mpirun.
exe=$1
mpirun --version 2>&1 | grep -q "Open MPI" || exit 77  # Open MPI's (MPICH's takes none of the options below)
dir=$(mktemp -d)
VIZ=1 VIZ_PATH=$dir/viz.html PROFILE=1 PROFILE_PATH=$dir/trace.json \
  mpirun --allow-run-as-root --oversubscribe -np 2 -x VIZ -x VIZ_PATH -x PROFILE -x PROFILE_PATH "$exe" >"$dir/log" 2>&1 ||
  { cat "$dir/log"; rm -rf "$dir"; exit 1; }
ls "$dir"
ok=0
for f in viz.rank0.html viz.rank1.html trace.rank0.json trace.rank1.json; do test -s "$dir/$f" || { echo "missing: $f"; ok=1; }; done
test -e "$dir/viz.html" && { echo "a file without the rank in its name"; ok=1; }
rm -rf "$dir"
exit $ok
