#!/usr/bin/env python3
"""Training step time: pipe's compiled CPU program against PyTorch eager.

For each model, the same initial weights and data, M microbatches per step
and AdamW: pipe (`pipe-opt --train --emit=binaries`, then `OUT/run --steps
N --metrics`, each step's `seconds`, which covers the M forward and
backward passes, the gradient mean and the update, not process start or
file I/O) and PyTorch 1.13 (M times `(loss / M).backward()`, then
`optimizer.step()` and `zero_grad()`), both on `--threads` threads. It
reports the median step time after the first step, and the last step's
loss of both, which must agree.

Models: the MLP, the CNN and the GPT of python/train_reference.py, and a
larger GPT (4 layers, d = 128, 4 heads, sequence 64, vocabulary 512,
microbatch 8).

Not a test: run it by hand and record the table in docs/benchmarks.md.

    /usr/bin/python3 bench/train_step.py [--threads 2] [--steps 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import train_reference as ref  # noqa: E402

MICROBATCHES = 4


def larger_gpt(rng, rows):
    vocab, seq = 512, 64
    stream = rng.integers(0, vocab, (rows, seq + 1))
    data = {"tokens": stream[:, :-1].astype(np.int64),
            "labels": stream[:, 1:].astype(np.int64)}
    return ref.GPT(vocab=vocab, d=128, heads=4, layers=4, seq=seq), data


def build(name, steps):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    if name == "gpt-4x128":
        model, data = larger_gpt(rng, steps * MICROBATCHES * 8)
        return model, 8, data
    make, b = ref.MODELS[name]
    model, data = make(rng, steps * MICROBATCHES * b)
    return model, b, data


def torch_steps(model, data, b, steps):
    model.train()
    optimizer = ref.make_optimizer("adamw", model.parameters())
    times, loss = [], None
    for step in range(steps):
        start = time.perf_counter()
        total = 0.0
        for j in range(MICROBATCHES):
            out = model(*ref.microbatch(data, b, step * MICROBATCHES + j))
            (out / MICROBATCHES).backward()
            total += float(out.detach())
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
        times.append(time.perf_counter() - start)
        loss = total / MICROBATCHES
    return times, loss


def pipe_steps(pipe_opt, folder, model, data, b, steps):
    ref.export_onnx(model, data, b, os.path.join(folder, "model.onnx"))
    ref.save_arrays(os.path.join(folder, "inputs"), data)
    c = ref.OPTIMIZERS["adamw"]
    subprocess.run([pipe_opt, os.path.join(folder, "model.onnx"), "--train",
                    "--microbatches", str(MICROBATCHES), "--optimizer",
                    "adamw", "--lr", str(c["lr"]), "--weight-decay",
                    str(c["weight_decay"]), "--emit=binaries", "-o",
                    os.path.join(folder, "out")], check=True)
    metrics = os.path.join(folder, "metrics.jsonl")
    subprocess.run([os.path.join(folder, "out", "run"), "--steps",
                    str(steps), "--inputs", os.path.join(folder, "inputs"),
                    "--metrics", metrics], check=True,
                   stdout=subprocess.DEVNULL)
    records = [json.loads(line) for line in open(metrics)]
    return [r["seconds"] for r in records], records[-1]["loss"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipe-opt",
                        default=os.path.join(ROOT, "build", "bin", "pipe-opt"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--models", default="mlp,cnn,gpt,gpt-4x128")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)

    print(f"| model | params | pipe step (ms) | PyTorch step (ms) | "
          f"PyTorch / pipe | last loss pipe / PyTorch |")
    print("|---|---|---|---|---|---|")
    for name in args.models.split(","):
        with tempfile.TemporaryDirectory() as folder:
            model, b, data = build(name, args.steps)
            params = sum(p.numel() for p in model.parameters())
            ours, our_loss = pipe_steps(args.pipe_opt, folder, model, data,
                                        b, args.steps)
            theirs, their_loss = torch_steps(model, data, b, args.steps)
        mine = statistics.median(ours[1:]) * 1e3
        torch_ms = statistics.median(theirs[1:]) * 1e3
        print(f"| {name} | {params} | {mine:.3f} | {torch_ms:.3f} | "
              f"{torch_ms / mine:.2f} | {our_loss:.6f} / {their_loss:.6f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
