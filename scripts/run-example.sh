#!/usr/bin/env bash
# Command 1 of the README: install what is needed, build, and train the
# bundled example as a pipeline: a character-level GPT on a small text,
# split over a heterogeneous cluster of four devices (an A100, a V100 and
# two T4s), every stage emulated on this machine's CPU as its own process.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh

out=out/example
rm -rf "$out" && mkdir -p "$out"
flags=(--train --cluster examples/cluster.json --microbatches 8
       --optimizer adamw --lr 3e-3)

echo "== export the character-level GPT and its data (examples/chargpt.py)"
/usr/bin/python3 examples/chargpt.py --text examples/tiny-text.txt --out "$out/chargpt"

echo "== plan it for examples/cluster.json: the table, $out/plan.png"
./build/bin/pipe-opt "$out/chargpt/model.onnx" "${flags[@]}" --emit=plan \
  -o "$out/plan" --timeline "$out/timeline.json"
/usr/bin/python3 python/render_plan.py "$out/plan/plan.json" \
  --timeline "$out/timeline.json" -o "$out/plan.png"

echo "== compile one program per stage, each on the CPU (--target=cpu): $out/pipeline"
./build/bin/pipe-opt "$out/chargpt/model.onnx" "${flags[@]}" --target=cpu \
  --emit=binaries -o "$out/pipeline"

if command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "== and for the real devices: one CUDA program per GPU, built for its architecture: $out/gpus"
  ./build/bin/pipe-opt "$out/chargpt/model.onnx" "${flags[@]}" \
    --emit=binaries -o "$out/gpus"
  /usr/bin/python3 - "$out/gpus/plan.json" <<'PY'
import json, sys
for s in json.load(open(sys.argv[1]))["stages"]:
    print(f"  stage {s['index']}: {s['device']} ({s['kind']}, {s['arch']}), "
          f"built by {s['toolchain']}")
PY
fi

echo "== train 300 steps: one process per stage, launched by mpirun (every 25th step shown)"
"$out/pipeline/run" --steps 300 --inputs "$out/chargpt/inputs" \
  --metrics "$out/metrics.jsonl" --save-onnx "$out/trained.onnx" | awk 'NR % 25 == 1'
/usr/bin/python3 - "$out/metrics.jsonl" <<'PY'
import json, sys
losses = [json.loads(line)["loss"] for line in open(sys.argv[1])]
print(f"loss {losses[0]:.3f} at step 1, {losses[-1]:.3f} at step {len(losses)}")
if not losses[-1] < 0.5 * losses[0]:
    raise SystemExit("the loss did not fall")
PY
echo "== the plan: $out/plan.png, the simulated timeline: $out/timeline.json, the trained model: $out/trained.onnx"
