#!/usr/bin/env python3
"""CPU forward time: pipe's compiled program versus PyTorch eager.

For each model of python/export_models.py (default: mlp, cnn, gpt-eval,
resnet18), exports it, compiles it with `pipe-opt --emit=binaries`, and
times, in the same run and with the same thread count:
  - the compiled program (`OUT/run --bench N`: median over N runs of the
    forward pass, after one warm-up, excluding process start and I/O),
  - PyTorch eager on the same module and inputs (torch.no_grad, eval mode,
    median over N runs after warm-up).
Not a test: run it by hand and record the table in docs/benchmarks.md.

    /usr/bin/python3 bench/cpu_forward.py [--threads 2] [--repeat 50]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import export_models  # noqa: E402
from compare_onnxruntime import random_feed  # noqa: E402


def torch_model(name: str):
    torch.manual_seed(0)
    if name == "mlp":
        return export_models.MLP()
    if name == "cnn":
        return export_models.ResidualCNN()
    if name == "gpt-eval":
        return export_models.GPT()
    if name == "resnet18":
        import torchvision
        return torchvision.models.resnet18(weights=None)
    raise SystemExit(name)


def bench_pipe(pipe_opt: str, name: str, folder: str, repeat: int,
               env: dict) -> tuple[str, dict, float]:
    """Exports model `name` into `folder`, compiles it and times its forward
    pass (`OUT/run --bench`, median ms) on random inputs; returns the ONNX
    file, the inputs and the time."""
    path = export_models.export_model(name, folder, 17)
    program = os.path.join(folder, name)
    subprocess.run([pipe_opt, path, "--emit=binaries", "-o", program],
                   check=True)
    feed = random_feed(onnx.load(path), np.random.default_rng(0),
                       int_high=64)
    in_dir = os.path.join(program, "bench-in")
    os.makedirs(in_dir, exist_ok=True)
    for key, value in feed.items():
        np.save(os.path.join(in_dir, f"{key}.npy"), value)
    proc = subprocess.run(
        [os.path.join(program, "run"), "--inputs", in_dir, "--outputs",
         os.path.join(program, "bench-out"), "--bench", str(repeat)],
        check=True, capture_output=True, text=True, env=env)
    return path, feed, float(proc.stdout.split()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mlp,cnn,gpt-eval,resnet18")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "out",
                                                      "cpu"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               OPENBLAS_NUM_THREADS=str(args.threads))
    torch.set_num_threads(args.threads)
    pipe_opt = os.path.join(ROOT, "build", "bin", "pipe-opt")

    rows = []
    for name in args.models.split(","):
        _, feed, pipe_ms = bench_pipe(pipe_opt, name, args.out, args.repeat,
                                      env)

        module = torch_model(name).eval()
        inputs = [torch.from_numpy(v) for v in feed.values()]
        with torch.no_grad():
            for _ in range(3):
                module(*inputs)
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                module(*inputs)
                times.append((time.perf_counter() - start) * 1e3)
        torch_ms = statistics.median(times)
        rows.append((name, pipe_ms, torch_ms))

    print(f"threads: {args.threads}, repeat: {args.repeat}")
    print(f"{'model':10} {'pipe ms':>10} {'torch ms':>10} {'torch/pipe':>11}")
    for name, pipe_ms, torch_ms in rows:
        print(f"{name:10} {pipe_ms:10.3f} {torch_ms:10.3f} "
              f"{torch_ms / pipe_ms:11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
