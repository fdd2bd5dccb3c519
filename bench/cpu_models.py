#!/usr/bin/env python3
"""The CPU target on real models, against onnxruntime and PyTorch.

Exports the models of python/real_models.py (torchvision networks and
PyTorch's transformer encoder, random weights, batch 2, opset 17), then in
one run, with the same thread count everywhere:

  inference  pipe's compile time (`pipe-opt --emit=binaries`), its forward
             time (`OUT/run --bench N`: median of N runs after a warm-up)
             and onnxruntime's median on the same inputs, with the largest
             difference between their outputs;
  training   pipe's compile time (`--train --microbatches 2`, SGD) and its
             median step time over `--steps` steps (first dropped), against
             a PyTorch SGD step on the same M = 2 microbatches.

Not a test: run it by hand and record the table in docs/benchmarks.md.

    .venv/bin/python bench/cpu_models.py [--threads 2] [--repeat 20]
        [--models resnet18,...] [--train-models resnet18,...] [--steps 5]

Needs onnxruntime (.venv) and Debian's torch and torchvision, which .venv
sees through its system site packages.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import real_models  # noqa: E402


def timed(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, capture_output=True)
    return time.perf_counter() - start


def inference(name: str, out: str, pipe_opt: str, repeat: int,
              env: dict, threads: int) -> dict:
    import onnxruntime as ort
    path = real_models.export(name, out)
    program = os.path.join(out, name)
    compile_s = timed([pipe_opt, path, "--emit=binaries", "-o", program], env)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(real_models.input_shape(name)).astype(np.float32)
    input_name = "x" if name == "transformer" else "image"
    in_dir = os.path.join(program, "bench-in")
    out_dir = os.path.join(program, "bench-out")
    os.makedirs(in_dir, exist_ok=True)
    np.save(os.path.join(in_dir, f"{input_name}.npy"), x)
    proc = subprocess.run(
        [os.path.join(program, "run"), "--inputs", in_dir, "--outputs",
         out_dir, "--bench", str(repeat)],
        check=True, capture_output=True, text=True, env=env)
    pipe_ms = float(proc.stdout.split()[-1])

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(path, options,
                                   providers=["CPUExecutionProvider"])
    want = session.run(None, {input_name: x})[0]
    times = []
    for i in range(repeat + 1):
        start = time.perf_counter()
        session.run(None, {input_name: x})
        if i:
            times.append((time.perf_counter() - start) * 1e3)
    got = np.load(os.path.join(out_dir, "logits.npy"))
    return {"model": name, "compile_s": compile_s, "pipe_ms": pipe_ms,
            "ort_ms": statistics.median(times),
            "max_abs_diff": float(np.max(np.abs(got - want))),
            "max_abs_ref": float(np.max(np.abs(want)))}


def training(name: str, out: str, pipe_opt: str, steps: int,
             env: dict) -> dict:
    import torch
    import torch.nn.functional as F
    path = real_models.export(name, out, train=True)
    program = os.path.join(out, f"{name}-train")
    compile_s = timed([pipe_opt, path, "--train", "--microbatches", "2",
                       "--optimizer", "sgd", "--lr", "0.01", "--emit=binaries",
                       "-o", program], env)
    rng = np.random.default_rng(0)
    shape = real_models.input_shape(name)
    x = rng.standard_normal([2 * shape[0]] + shape[1:]).astype(np.float32)
    labels = rng.integers(0, real_models.classes(name), (2 * shape[0],))
    input_name = "x" if name == "transformer" else "image"
    in_dir = os.path.join(program, "bench-in")
    os.makedirs(in_dir, exist_ok=True)
    np.save(os.path.join(in_dir, f"{input_name}.npy"), x)
    np.save(os.path.join(in_dir, "labels.npy"), labels.astype(np.int64))
    metrics = os.path.join(program, "metrics.jsonl")
    subprocess.run([os.path.join(program, "run"), "--steps", str(steps),
                    "--inputs", in_dir, "--metrics", metrics],
                   check=True, capture_output=True, env=env)
    with open(metrics) as f:
        seconds = [json.loads(line)["seconds"] for line in f]
    pipe_ms = statistics.median(seconds[1:]) * 1e3

    model = real_models.WithLoss(real_models.build(name, dropout=False))
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    # From bytes: .venv's numpy is not the one Debian's torch was built for.
    xs = torch.frombuffer(bytearray(x.tobytes()), dtype=torch.float32)
    xs = xs.reshape(x.shape).split(shape[0])
    ys = torch.frombuffer(bytearray(labels.astype(np.int64).tobytes()),
                          dtype=torch.int64).split(shape[0])
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        optimizer.zero_grad()
        for xm, ym in zip(xs, ys):
            (model(xm, ym) / 2).backward()
        optimizer.step()
        times.append((time.perf_counter() - start) * 1e3)
    return {"model": name, "compile_s": compile_s, "pipe_ms": pipe_ms,
            "torch_ms": statistics.median(times[1:])}


def geometric_mean(values: list[float]) -> float:
    return math.exp(statistics.mean(map(math.log, values)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(real_models.MODELS))
    parser.add_argument("--train-models",
                        default="resnet18,mobilenet_v2,transformer")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "out",
                                                      "cpu-models"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    threads = str(args.threads)
    env = {**os.environ, "OMP_NUM_THREADS": threads,
           "OPENBLAS_NUM_THREADS": threads}
    import torch
    torch.set_num_threads(args.threads)
    pipe_opt = os.path.join(ROOT, "build", "bin", "pipe-opt")
    print(f"threads: {args.threads}; inference: median of {args.repeat}; "
          f"training: SGD, M = 2, median of {args.steps - 1} steps")

    header = "{:16} {:>9} {:>9} {:>9} {:>10} {:>10}"
    row = "{:16} {:9.1f} {:9.1f} {:9.1f} {:10.2f} {:>10}"
    print(header.format("model", "compile s", "pipe ms", "ort ms",
                        "pipe/ort", "max |diff|"))
    ratios = []
    for name in filter(None, args.models.split(",")):
        r = inference(name, args.out, pipe_opt, args.repeat, env,
                      args.threads)
        ratios.append(r["pipe_ms"] / r["ort_ms"])
        print(row.format(name, r["compile_s"], r["pipe_ms"], r["ort_ms"],
                         ratios[-1], f"{r['max_abs_diff']:.2e}"), flush=True)
    if ratios:
        print(header.format("geometric mean", "", "", "",
                            f"{geometric_mean(ratios):.2f}", ""))
    print()
    print(header.format("model (train)", "compile s", "pipe ms", "torch ms",
                        "pipe/torch", ""))
    ratios = []
    for name in filter(None, args.train_models.split(",")):
        r = training(name, args.out, pipe_opt, args.steps, env)
        ratios.append(r["pipe_ms"] / r["torch_ms"])
        print(row.format(name, r["compile_s"], r["pipe_ms"], r["torch_ms"],
                         ratios[-1], ""), flush=True)
    if ratios:
        print(header.format("geometric mean", "", "", "",
                            f"{geometric_mean(ratios):.2f}", ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
