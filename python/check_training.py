#!/usr/bin/env python3
"""Checks a training run of `OUT/run` against python/train_reference.py.

    check_training.py REFDIR MODEL OPTIMIZER METRICS TRAINED [--rtol 1e-4]

REFDIR is train_reference.py's output folder, METRICS the `--metrics` file
of `OUT/run --steps N` and TRAINED its `--save-onnx` model. Checks:

- every per-step loss within rtol (relative) of PyTorch's;
- TRAINED passes onnx.checker and is the reference model's graph: the same
  nodes, inputs, outputs and initializer names, types and shapes;
- every trained weight within rtol of the largest magnitude of PyTorch's
  tensor. Elements whose gradient is identically zero (listed in the
  reference's zero_gradients.json) carry rounding noise that Adam scales
  into steps of up to lr each, so for Adam and AdamW they are only checked
  to have moved at most steps * lr (plus weight decay) from their initial
  value;
- for a model with batch norm (the reference has <opt>/statistics/): every
  running statistic in TRAINED within rtol of the largest magnitude of the
  reference's (ONNX's update, with the biased batch variance), and every
  initializer is either a weight or a statistic.

Prints one line starting `training ok:` and exits 0, or lists what differs
and exits 1.
"""

import argparse
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def graph_signature(model):
    g = model.graph
    return ([(n.op_type, list(n.input), list(n.output)) for n in g.node],
            [i.name for i in g.input], [o.name for o in g.output],
            sorted((t.name, t.data_type, tuple(t.dims))
                   for t in g.initializer))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("refdir")
    parser.add_argument("model")
    parser.add_argument("optimizer")
    parser.add_argument("metrics")
    parser.add_argument("trained")
    parser.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args()
    folder = os.path.join(args.refdir, args.model)
    reference = os.path.join(folder, args.optimizer)
    problems = []

    expected = json.load(open(os.path.join(reference, "losses.json")))
    with open(args.metrics) as f:
        records = [json.loads(line) for line in f if line.strip()]
    losses = [r["loss"] for r in records]
    if [r["step"] for r in records] != list(range(1, len(records) + 1)):
        problems.append("the metrics steps are not 1, 2, ...")
    if len(losses) != len(expected):
        problems.append(f"{len(losses)} steps in the metrics, "
                        f"{len(expected)} in the reference")
    loss_error = 0.0
    for step, (ours, ref) in enumerate(zip(losses, expected), 1):
        error = abs(ours - ref) / abs(ref)
        loss_error = max(loss_error, error)
        if error > args.rtol:
            problems.append(f"step {step}: loss {ours!r}, PyTorch {ref!r}")

    trained = onnx.load(args.trained)
    onnx.checker.check_model(trained)
    original = onnx.load(os.path.join(folder, "model.onnx"))
    if graph_signature(trained) != graph_signature(original):
        problems.append("the saved model's graph differs from the model's")

    config = json.load(open(os.path.join(reference, "config.json")))
    adam = config["type"] in ("Adam", "AdamW")
    steps = len(expected)
    zeros = json.load(open(os.path.join(folder, "zero_gradients.json")))
    zeros = zeros["elements"]
    weights = {t.name: numpy_helper.to_array(t) for t in
               trained.graph.initializer}
    weight_error, loose, compared = 0.0, 0, 0
    for name in sorted(f[:-4] for f in
                       os.listdir(os.path.join(reference, "weights"))):
        compared += 1
        ref = np.load(os.path.join(reference, "weights", name + ".npy"))
        ours = weights[name].astype(np.float64).ravel()
        ref = ref.astype(np.float64).ravel()
        diff = np.abs(ours - ref)
        if adam and name in zeros:
            index = np.array(zeros[name], dtype=np.int64)
            initial = np.load(os.path.join(folder, "initial",
                                           name + ".npy")).ravel()
            bound = steps * config["lr"] * (1 + config["weight_decay"]) * (
                1 + np.abs(initial[index]))
            moved = np.abs(ours[index] - initial[index])
            if np.any(moved > bound):
                problems.append(f"{name}: zero-gradient elements moved "
                                f"{moved.max():.3g}, more than steps * lr")
            diff[index] = 0
            loose += len(index)
        error = diff.max() / max(np.abs(ref).max(), 1e-30)
        weight_error = max(weight_error, error)
        if error > args.rtol:
            i = int(diff.argmax())
            problems.append(f"{name}: element {i} is {ours[i]!r}, PyTorch "
                            f"{ref[i]!r} (error {error:.2e} of the largest)")

    # Batch norm's running statistics.
    stats_folder = os.path.join(reference, "statistics")
    stats_names = sorted(f[:-4] for f in os.listdir(stats_folder)
                         if f.endswith(".npy")) \
        if os.path.isdir(stats_folder) else []
    stats_error = 0.0
    for name in stats_names:
        if name not in weights:
            problems.append(f"{name}: no such initializer in the saved "
                            f"model")
            continue
        ref = np.load(os.path.join(stats_folder, name + ".npy"))
        ours = weights[name].astype(np.float64).ravel()
        ref = ref.astype(np.float64).ravel()
        diff = np.abs(ours - ref)
        error = diff.max() / max(np.abs(ref).max(), 1e-30)
        stats_error = max(stats_error, error)
        if error > args.rtol:
            i = int(diff.argmax())
            problems.append(f"{name}: element {i} is {ours[i]!r}, expected "
                            f"{ref[i]!r} (error {error:.2e} of the "
                            f"largest)")
    if stats_names:
        unchecked = sorted(set(weights) - set(stats_names) - {
            f[:-4] for f in os.listdir(os.path.join(reference, "weights"))})
        if unchecked:
            problems.append(f"initializers neither weights nor statistics: "
                            f"{unchecked}")

    if problems:
        print(f"training differs: {args.model} {args.optimizer}")
        for problem in problems:
            print("  " + problem)
        return 1
    extra = (f"; {loose} zero-gradient elements checked loosely"
             if loose else "")
    statistics = (f", {len(stats_names)} running statistics within "
                  f"{args.rtol:g} (statistics {stats_error:.1e})"
                  if stats_names else "")
    print(f"training ok: {args.model} {args.optimizer}, {steps} steps within "
          f"{args.rtol:g} (loss {loss_error:.1e}), {compared} weights "
          f"within {args.rtol:g} (weights {weight_error:.1e}){statistics}"
          f"{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
