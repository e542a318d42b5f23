#!/usr/bin/env bash
# The main job: build tinygrad.cpp and train beautiful_mnist on Fashion-MNIST (Debian's dataset-fashion-mnist,
# installed here when it is missing and apt-get can run), or on the MNIST files in the folder given as $1.
#   ./tools/beautiful_mnist.sh            STEPS=70 BS=512 by default
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ] && [ ! -d /usr/share/datasets/fashion-mnist ]; then
  if [ "$(id -u)" -eq 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq dataset-fashion-mnist || { apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist; }
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dataset-fashion-mnist
  else
    echo "Fashion-MNIST is missing: install Debian's dataset-fashion-mnist (sudo apt-get install dataset-fashion-mnist)," >&2
    echo "or pass a folder holding the four MNIST IDX files: $0 path/to/mnist" >&2
    exit 1
  fi
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j2 --target beautiful_mnist
exec ./build/bin/beautiful_mnist "$@"
