#!/usr/bin/env python3
"""Import benchmark: pipe-opt versus python3-onnx on the same model.

Measures the wall time and peak resident memory of
  - `pipe-opt MODEL.onnx` (protobuf parse, checker, shape inference, import,
    printing the IR),
  - `onnx.load` + `onnx.shape_inference.infer_shapes` (+ `onnx.checker`)
    from Debian's python3-onnx 1.12, in a fresh process each,
for a GPT-2-small-sized export (124M parameters), exported first if
missing. Every measurement runs in its own process, REPEAT times; the
table gives the median. Not a test: run it by hand and record the result in
docs/benchmarks.md.

    /usr/bin/python3 bench/import_bench.py [--model gpt2-small] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ONNX_SNIPPET = """
import sys, onnx
model = onnx.load(sys.argv[1])
onnx.checker.check_model(model)
onnx.shape_inference.infer_shapes(model, strict_mode=True)
"""


def measure(cmd: list[str], stdout=subprocess.DEVNULL) -> tuple[float, float]:
    """Runs cmd; returns (seconds, peak RSS in MiB) of that process alone."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return seconds, usage.ru_maxrss / 1024.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gpt2-small")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    args = parser.parse_args()

    path = os.path.join(args.out, f"{args.model}.onnx")
    if not os.path.exists(path):
        subprocess.check_call(["/usr/bin/python3",
                               os.path.join(ROOT, "python", "export_models.py"),
                               "--out", args.out, "--models", args.model])
    size_mb = os.path.getsize(path) / 2**20
    pipe_opt = os.path.join(ROOT, "build", "bin", "pipe-opt")
    ir_path = os.path.join(args.out, f"{args.model}.mlir")

    runs = {
        "pipe-opt (import + print IR)": lambda: measure(
            [pipe_opt, path, "-o", ir_path]),
        "python3-onnx 1.12 load+check+infer_shapes": lambda: measure(
            ["/usr/bin/python3", "-c", ONNX_SNIPPET, path]),
    }
    results = {}
    for name, run in runs.items():
        samples = [run() for _ in range(args.repeat)]
        results[name] = (statistics.median(s for s, _ in samples),
                         max(m for _, m in samples))

    print(f"model: {path} ({size_mb:.0f} MiB)")
    print(f"IR text: {os.path.getsize(ir_path) / 1024:.0f} KiB")
    print(f"{'what':48} {'median s':>9} {'peak MiB':>9}")
    for name, (seconds, mib) in results.items():
        print(f"{name:48} {seconds:9.2f} {mib:9.0f}")
    base = results["python3-onnx 1.12 load+check+infer_shapes"][0]
    ours = results["pipe-opt (import + print IR)"][0]
    print(f"pipe-opt / python3-onnx time ratio: {ours / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
