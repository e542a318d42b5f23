#!/bin/sh
# ctest mpi.beautiful_mnist_trains: beautiful_mnist data-parallel over two processes (mpirun) trains (the last
# step's loss below the first's) and only rank 0 prints. Exit 77 (skipped) without Open MPI's mpirun or Fashion-MNIST.
exe=$1
# Open MPI's mpirun: MPICH's takes none of the options below, and tg::mpi loads Open MPI's library
mpirun --version 2>&1 | grep -q "Open MPI" && test -d /usr/share/datasets/fashion-mnist || exit 77
log=$(mktemp)
SEED=1 STEPS=12 mpirun --allow-run-as-root --oversubscribe -np 2 -x SEED -x STEPS "$exe" >"$log" 2>&1 || { cat "$log"; exit 1; }
tr '\r' '\n' <"$log" | tail -3
losses=$(tr '\r' '\n' <"$log" | grep -o 'loss: [0-9.]*' | cut -d' ' -f2)
first=$(echo "$losses" | head -1) last=$(echo "$losses" | tail -1) reports=$(grep -c 'test accuracy' "$log")
rm -f "$log"
echo "first loss $first, last $last, $reports final report(s)"
test "$reports" -eq 1 && awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }'
