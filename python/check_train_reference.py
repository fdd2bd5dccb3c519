#!/usr/bin/env python3
"""Checks the output of train_reference.py with onnx and onnxruntime.

Run with the project's virtual environment (onnx and onnxruntime):

    .venv/bin/python python/check_train_reference.py DIR [--models ...]
        [--rtol 1e-5]

For each DIR/<model>/ (every subfolder holding a model.onnx unless
--models names them) it
  - loads model.onnx, runs onnx.checker (full check) and strict shape
    inference, and checks that the single output `loss` is a float scalar;
  - checks that the initializers are exactly initial/*.npy (names, dtype
    float32 and values), that every <opt>/weights/ (with <opt>/statistics/,
    batch norm's running statistics, where the model has them) holds the
    same names and shapes, and that inputs/*.npy are the graph inputs
    with whole microbatches for steps*M microbatches (from
    <opt>/config.json);
  - evaluates the loss of the first microbatch with the initial weights in
    onnxruntime (graph optimizations off) and compares it with the PyTorch
    loss in first_loss.json within --rtol; likewise each of the first
    step's M microbatch losses, and their mean against the first entry of
    every <opt>/losses.json (the first step's loss is taken before any
    update, so it is the same for every optimizer).
Exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper
import onnxruntime as ort

ONNX_TYPES = {onnx.TensorProto.FLOAT: np.float32,
              onnx.TensorProto.INT64: np.int64,
              onnx.TensorProto.INT32: np.int32,
              onnx.TensorProto.DOUBLE: np.float64}


class Checker:
    def __init__(self, rtol: float) -> None:
        self.rtol = rtol
        self.failures = 0

    def fail(self, model: str, message: str) -> None:
        self.failures += 1
        print(f"FAIL {model}: {message}")

    def close(self, model: str, what: str, got: float, want: float) -> bool:
        err = abs(got - want) / max(abs(want), 1e-30)
        if not math.isfinite(got) or err > self.rtol:
            self.fail(model, f"{what}: onnxruntime {got!r}, PyTorch "
                      f"{want!r} (relative error {err:.3g} > {self.rtol})")
            return False
        return True


def load_folder(folder: str) -> dict[str, np.ndarray]:
    if not os.path.isdir(folder):
        return {}
    return {f[:-4]: np.load(os.path.join(folder, f))
            for f in sorted(os.listdir(folder)) if f.endswith(".npy")}


def check_model(name: str, folder: str, c: Checker) -> None:
    path = os.path.join(folder, "model.onnx")
    proto = onnx.load(path)
    try:
        onnx.checker.check_model(proto, full_check=True)
        onnx.shape_inference.infer_shapes(proto, check_type=True,
                                          strict_mode=True, data_prop=True)
    except Exception as e:  # checker and inference raise several types
        c.fail(name, f"onnx check: {e}")
        return
    graph = proto.graph

    # The output is the scalar loss.
    outputs = [o.name for o in graph.output]
    if outputs != ["loss"]:
        c.fail(name, f"outputs {outputs}, expected ['loss']")
        return
    out_type = graph.output[0].type.tensor_type
    if out_type.elem_type != onnx.TensorProto.FLOAT or \
            len(out_type.shape.dim) != 0:
        c.fail(name, "output 'loss' is not a float scalar")

    # Initializers are the initial weights, and the trained weights have
    # the same names and shapes.
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    initial = load_folder(os.path.join(folder, "initial"))
    if set(inits) != set(initial):
        c.fail(name, f"initializers {sorted(inits)} != initial/ "
               f"{sorted(initial)}")
    for key in sorted(set(inits) & set(initial)):
        if inits[key].dtype != np.float32 or \
                not np.array_equal(inits[key], initial[key]):
            c.fail(name, f"initializer {key} differs from initial/{key}.npy")

    # Optimizer runs.
    runs = sorted(d for d in os.listdir(folder)
                  if os.path.isfile(os.path.join(folder, d, "config.json")))
    if not runs:
        c.fail(name, "no <optimizer>/config.json")
        return
    configs = {}
    losses = {}
    for run in runs:
        with open(os.path.join(folder, run, "config.json")) as f:
            configs[run] = json.load(f)
        with open(os.path.join(folder, run, "losses.json")) as f:
            losses[run] = json.load(f)
        steps = configs[run]["steps"]
        if len(losses[run]) != steps or \
                not all(isinstance(l, float) and math.isfinite(l)
                        for l in losses[run]):
            c.fail(name, f"{run}/losses.json: expected {steps} finite "
                   f"floats, got {losses[run]}")
        weights = load_folder(os.path.join(folder, run, "weights"))
        stats = load_folder(os.path.join(folder, run, "statistics"))
        if set(weights) | set(stats) != set(inits) or \
                set(weights) & set(stats):
            c.fail(name, f"{run}/weights/ names differ from the "
                   f"initializers" + (" (with statistics/)" if stats else ""))
        for kind, arrays in (("weights", weights), ("statistics", stats)):
            for key in sorted(set(arrays) & set(inits)):
                if arrays[key].dtype != np.float32 or \
                        arrays[key].shape != inits[key].shape:
                    c.fail(name, f"{run}/{kind}/{key}.npy: "
                           f"{arrays[key].dtype}{list(arrays[key].shape)}, "
                           f"expected float32{list(inits[key].shape)}")
                elif not np.all(np.isfinite(arrays[key])):
                    c.fail(name, f"{run}/{kind}/{key}.npy is not finite")
            if arrays and all(np.array_equal(arrays[k], inits[k])
                              for k in set(arrays) & set(inits)):
                c.fail(name, f"{run}: training did not change the {kind}")
    m = configs[runs[0]]["microbatches"]
    steps = configs[runs[0]]["steps"]
    if any((cfg["microbatches"], cfg["steps"]) != (m, steps)
           for cfg in configs.values()):
        c.fail(name, "optimizer runs disagree on steps/microbatches")

    # Inputs: the graph inputs, with k = steps * M whole microbatches.
    data = load_folder(os.path.join(folder, "inputs"))
    names = [v.name for v in graph.input if v.name not in inits]
    if sorted(data) != sorted(names):
        c.fail(name, f"inputs/ {sorted(data)} != graph inputs {names}")
        return
    b = None
    for value in graph.input:
        if value.name in inits:
            continue
        t = value.type.tensor_type
        shape = [d.dim_value for d in t.shape.dim]
        arr = data[value.name]
        if arr.dtype != ONNX_TYPES.get(t.elem_type):
            c.fail(name, f"inputs/{value.name}.npy is {arr.dtype}, the "
                   f"graph says elem_type {t.elem_type}")
        b = shape[0] if b is None else b
        if shape[0] != b or list(arr.shape[1:]) != shape[1:] or \
                arr.shape[0] != steps * m * b:
            c.fail(name, f"inputs/{value.name}.npy has shape "
                   f"{list(arr.shape)}; the input is {shape}, so expected "
                   f"{[steps * m * b] + shape[1:]}")
            return

    # The first step's losses with the initial weights, in onnxruntime.
    with open(os.path.join(folder, "first_loss.json")) as f:
        first = json.load(f)
    options = ort.SessionOptions()
    options.graph_optimization_level = \
        ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(proto.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    got = []
    for j in range(m):
        feed = {k: v[j * b:(j + 1) * b] for k, v in data.items()}
        got.append(float(session.run(["loss"], feed)[0]))
    ok = c.close(name, "first microbatch loss", got[0], first["loss"])
    for j, want in enumerate(first.get("step1_microbatch_losses", [])):
        if j < m:
            ok &= c.close(name, f"step 1 microbatch {j} loss", got[j], want)
    mean = math.fsum(got) / m
    for run in runs:
        if losses[run]:
            ok &= c.close(name, f"{run}/losses.json step 1", mean,
                          losses[run][0])
    print(f"{'ok' if ok else 'FAILED'} {name}: first loss onnxruntime "
          f"{got[0]:.9g} vs PyTorch {first['loss']:.9g} (relative error "
          f"{abs(got[0] - first['loss']) / abs(first['loss']):.2g}); step 1 "
          f"mean {mean:.9g}; {len(inits)} initializers, b={b}, M={m}, "
          f"steps={steps}, optimizers {', '.join(runs)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--models", help="comma-separated (default: every "
                        "subfolder with a model.onnx)")
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()
    if args.models:
        models = args.models.split(",")
    else:
        models = sorted(d for d in os.listdir(args.dir) if os.path.isfile(
            os.path.join(args.dir, d, "model.onnx")))
    if not models:
        print(f"FAIL: no <model>/model.onnx under {args.dir}")
        return 1
    c = Checker(args.rtol)
    for name in models:
        folder = os.path.join(args.dir, name)
        if not os.path.isfile(os.path.join(folder, "model.onnx")):
            c.fail(name, f"{folder}/model.onnx is missing")
            continue
        check_model(name, folder, c)
    if c.failures:
        print(f"{c.failures} failure(s)")
        return 1
    print(f"all {len(models)} model(s) ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
