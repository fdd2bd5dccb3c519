#!/usr/bin/env bash
# Command 1 of the README: install what is needed, build, and compile and
# run the bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh

mkdir -p out
echo "== import examples/mlp.onnxtxt (an ONNX model in text form)"
./build/bin/pipe-onnx-txt2pb --name-nodes examples/mlp.onnxtxt -o out/mlp.onnx
./build/bin/pipe-opt out/mlp.onnx --input-shape x=8,16 --canonicalize

echo "== compile it for this CPU: out/mlp-cpu/run"
./build/bin/pipe-opt out/mlp.onnx --input-shape x=8,16 --emit=binaries -o out/mlp-cpu
cat out/mlp-cpu/plan.json

echo "== run it on two microbatches (16 rows of x)"
mkdir -p out/mlp-in
/usr/bin/python3 -c "import numpy as np; np.save('out/mlp-in/x.npy', np.linspace(-1, 1, 16 * 16, dtype=np.float32).reshape(16, 16))"
out/mlp-cpu/run --inputs out/mlp-in --outputs out/mlp-out
/usr/bin/python3 -c "import numpy as np; y = np.load('out/mlp-out/y.npy'); print('y', y.shape, y.dtype); print(y[-4:])"

echo "== pipe-opt examples/mlp.mlir --canonicalize --pipe-inference-mode"
./build/bin/pipe-opt examples/mlp.mlir --canonicalize --pipe-inference-mode
