#!/usr/bin/env bash
# Command 1 of the README: install what is needed, build, and run pipe-opt
# on the bundled examples.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh

mkdir -p out
echo "== import examples/mlp.onnxtxt (an ONNX model in text form)"
./build/bin/pipe-onnx-txt2pb --name-nodes examples/mlp.onnxtxt -o out/mlp.onnx
./build/bin/pipe-opt out/mlp.onnx --input-shape x=8,16 --canonicalize

echo "== pipe-opt examples/mlp.mlir --canonicalize --pipe-inference-mode"
./build/bin/pipe-opt examples/mlp.mlir --canonicalize --pipe-inference-mode
