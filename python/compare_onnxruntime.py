#!/usr/bin/env python3
"""Runs a compiled pipe program and onnxruntime on the same random inputs.

    .venv/bin/python python/compare_onnxruntime.py MODEL.onnx OUT
        [--microbatches K] [--rtol 1e-4] [--atol 1e-5] [--seed 0]

OUT is `pipe-opt MODEL.onnx --emit=binaries -o OUT`. Writes K microbatches
of inputs (floats from a normal distribution, integers within their valid
range when the name says what they index), runs OUT/run once over all of
them and onnxruntime once per microbatch, and compares every output.
Exits 1 and prints the worst element on a mismatch.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx

TYPES = {1: np.float32, 11: np.float64, 7: np.int64, 6: np.int32, 9: np.bool_}


def random_feed(model: onnx.ModelProto, rng: np.random.Generator,
                int_high: int) -> dict[str, np.ndarray]:
    """One microbatch of inputs for `model`'s graph inputs: floats from a
    normal distribution, bools at random, integers in [0, int_high)."""
    initializers = {t.name for t in model.graph.initializer}
    feed = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        shape = [d.dim_value for d in tensor.shape.dim]
        dtype = TYPES[tensor.elem_type]
        if dtype in (np.float32, np.float64):
            feed[value.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            feed[value.name] = rng.random(shape) < 0.5
        else:
            feed[value.name] = rng.integers(0, int_high, shape, dtype=dtype)
    return feed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("out")
    parser.add_argument("--microbatches", type=int, default=2)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--int-high", type=int, default=10,
                        help="integer inputs are drawn from [0, int-high)")
    args = parser.parse_args()

    model = onnx.load(args.model)
    rng = np.random.default_rng(args.seed)
    batches = [random_feed(model, rng, args.int_high)
               for _ in range(args.microbatches)]

    import onnxruntime as ort  # only the comparison needs it

    session = ort.InferenceSession(args.model,
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    want = {n: [] for n in names}
    for feed in batches:
        for name, value in zip(names, session.run(names, feed)):
            want[name].append(value)

    with tempfile.TemporaryDirectory() as work:
        in_dir, out_dir = os.path.join(work, "in"), os.path.join(work, "out")
        os.makedirs(in_dir)
        for name in batches[0]:
            parts = [b[name] for b in batches]
            np.save(os.path.join(in_dir, f"{name}.npy"),
                    parts[0] if len(parts) == 1
                    else np.concatenate(parts, axis=0))
        subprocess.run([os.path.join(args.out, "run"), "--inputs", in_dir,
                        "--outputs", out_dir], check=True)
        worst = 0.0
        for name in names:
            parts = want[name]
            if len(parts) == 1:
                expected = parts[0]
            elif parts[0].ndim == 0:
                expected = np.stack(parts)
            else:
                expected = np.concatenate(parts, axis=0)
            got = np.load(os.path.join(out_dir, f"{name}.npy"))
            if got.shape != expected.shape:
                print(f"{name}: shape {got.shape}, onnxruntime "
                      f"{expected.shape}")
                return 1
            error = np.abs(got.astype(np.float64) - expected)
            bound = args.atol + args.rtol * np.abs(expected)
            ratio = float(np.max(error / bound)) if error.size else 0.0
            worst = max(worst, ratio)
            if ratio > 1:
                at = np.unravel_index(np.argmax(error / bound), error.shape)
                print(f"{name}: mismatch at {at}: pipe {got[at]!r}, "
                      f"onnxruntime {expected[at]!r}")
                return 1
    print(f"match: {len(names)} outputs, {args.microbatches} microbatches, "
          f"worst error {worst:.3f} of the tolerance")
    return 0


if __name__ == "__main__":
    sys.exit(main())
