#!/usr/bin/env bash
# Command 1 of the README: install what is needed, build, and run pipe-opt
# on the bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh

echo "== pipe-opt examples/mlp.mlir --canonicalize --pipe-inference-mode"
./build/bin/pipe-opt examples/mlp.mlir --canonicalize --pipe-inference-mode
