#!/usr/bin/env python3
"""Trains real models with pipe and checks them against PyTorch in float64.

    /usr/bin/python3 python/check_real_training.py --pipe-opt PATH --out DIR
        [--models resnet18,mobilenet_v2] [--steps 3] [--factor 2]
        [--samples 5]

For each model of python/real_models.py (exported with --train: the mean
cross-entropy, batch norm in training mode, dropout as the identity), pipe
trains `--steps` steps of SGD (lr 0.01, M = 2 microbatches of 2 images) on
seeded random data, and PyTorch trains the same model from the same weights
on the same data twice: in float64, the reference, and in float32.

Train-mode batch norm over 2 images amplifies rounding, so float32 itself
is far from the float64 result, and by an amount that varies from one
float32 implementation (one summation order) to the next by a factor of
two or more. PyTorch float32's error is therefore the largest over
`--samples` runs: one on the data as is, the others with a random half of
the image elements moved by one float32 ulp up or down, a change within
float32's own rounding. The check is that pipe's float32 error stays within `--factor`
times that, for two errors measured against float64:
  loss     the largest relative error of a step's loss (the mean over its
           microbatches, before the update);
  update   the relative L2 error of the change of all weights over the run.
Batch norm's running statistics are not compared: pipe updates them as ONNX
defines (biased batch variance), PyTorch with the unbiased one.

Prints `real training ok: MODEL ...` per model and exits 0, or says which
error is too large and exits 1.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_models  # noqa: E402

MICROBATCHES = 2
LR = 0.01


def torch_training(model: torch.nn.Module, xs: list, ys: list, steps: int,
                   dtype: torch.dtype) -> tuple[list[float], dict]:
    """SGD with the mean gradient of M microbatches per step; returns each
    step's mean loss before its update and the final weights."""
    model = copy.deepcopy(model).to(dtype).train()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        total = 0.0
        for m in range(MICROBATCHES):
            index = step * MICROBATCHES + m
            loss = model(xs[index].to(dtype), ys[index])
            (loss / MICROBATCHES).backward()
            total += loss.item()
        optimizer.step()
        losses.append(total / MICROBATCHES)
    weights = {name: p.detach().double().numpy().copy()
               for name, p in model.named_parameters()}
    return losses, weights


def loss_error(losses: list[float], reference: list[float]) -> float:
    return max(abs(a - b) / abs(b) for a, b in zip(losses, reference))


def update_error(weights: dict, reference: dict, initial: dict) -> float:
    diff = sum(float(np.sum((weights[n] - reference[n]) ** 2))
               for n in reference)
    norm = sum(float(np.sum((reference[n] - initial[n]) ** 2))
               for n in reference)
    return math.sqrt(diff / norm)


def check(name: str, args: argparse.Namespace) -> bool:
    path = real_models.export(name, args.out, train=True)
    program = os.path.join(args.out, f"{name}-train")
    subprocess.run([args.pipe_opt, path, "--train", "--microbatches",
                    str(MICROBATCHES), "--optimizer", "sgd", "--lr", str(LR),
                    "--emit=binaries", "-o", program], check=True)

    # Data: steps * M microbatches, in the files pipe's run reads.
    count = args.steps * MICROBATCHES
    shape = real_models.input_shape(name)
    generator = torch.Generator().manual_seed(1)
    x = torch.randn([count * shape[0]] + shape[1:], generator=generator)
    labels = torch.randint(0, real_models.classes(name), (count * shape[0],),
                           generator=generator)
    inputs = os.path.join(args.out, f"{name}-inputs")
    os.makedirs(inputs, exist_ok=True)
    np.save(os.path.join(inputs, "image.npy"), x.numpy())
    np.save(os.path.join(inputs, "labels.npy"), labels.numpy())
    metrics = os.path.join(args.out, f"{name}-metrics.jsonl")
    trained = os.path.join(args.out, f"{name}-trained.onnx")
    subprocess.run([os.path.join(program, "run"), "--steps", str(args.steps),
                    "--inputs", inputs, "--metrics", metrics, "--save-onnx",
                    trained], check=True, stdout=subprocess.DEVNULL)
    with open(metrics) as f:
        pipe_losses = [json.loads(line)["loss"] for line in f if line.strip()]
    pipe_weights = {t.name: numpy_helper.to_array(t).astype(np.float64)
                    for t in onnx.load(trained).graph.initializer}

    # The same weights as the export: build() is seeded.
    model = real_models.WithLoss(real_models.build(name, dropout=False))
    initial = {n: p.detach().double().numpy().copy()
               for n, p in model.named_parameters()}
    missing = sorted(set(initial) - set(pipe_weights))
    if missing:
        print(f"{name}: the trained model lacks weights {missing[:5]}")
        return False
    xs = list(x.split(shape[0]))
    ys = list(labels.split(shape[0]))
    losses64, weights64 = torch_training(model, xs, ys, args.steps,
                                         torch.float64)
    torch_errors = {"loss": [], "update": []}
    for sample in range(args.samples):
        images = xs
        if sample:
            noise = torch.Generator().manual_seed(100 + sample)
            images = []
            for image in xs:
                moved = torch.rand(image.shape, generator=noise) < 0.5
                up = torch.rand(image.shape, generator=noise) < 0.5
                toward = torch.where(up, torch.tensor(math.inf),
                                     torch.tensor(-math.inf))
                images.append(torch.where(moved, torch.nextafter(image, toward),
                                          image))
        losses32, weights32 = torch_training(model, images, ys, args.steps,
                                             torch.float32)
        torch_errors["loss"].append(loss_error(losses32, losses64))
        torch_errors["update"].append(update_error(weights32, weights64,
                                                   initial))

    errors = {
        "loss": (loss_error(pipe_losses, losses64),
                 max(torch_errors["loss"])),
        "update": (update_error(pipe_weights, weights64, initial),
                   max(torch_errors["update"])),
    }
    ok = len(pipe_losses) == args.steps
    parts = []
    for what, (pipe_error, torch_error) in errors.items():
        parts.append(f"{what} error {pipe_error:.2e} (PyTorch float32 "
                     f"{torch_error:.2e})")
        if not pipe_error <= args.factor * torch_error:
            ok = False
            print(f"{name}: pipe's {what} error {pipe_error:.3e} exceeds "
                  f"{args.factor} x PyTorch float32's {torch_error:.3e}")
    if ok:
        print(f"real training ok: {name}, {args.steps} steps; "
              + "; ".join(parts))
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipe-opt", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", default="resnet18,mobilenet_v2")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--factor", type=float, default=2.0)
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    results = [check(name, args) for name in args.models.split(",")]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
