#!/usr/bin/env python3
"""Checks a compiled gradient program against central finite differences.

    finite_differences.py OUT_BIN IN_DIR [--label L] [--step 1e-6]
        [--tolerance 1e-6] [--samples 24]

OUT_BIN is what `pipe-opt grad.mlir --emit=binaries -o OUT_BIN` writes for
the output of --pipe-autodiff: OUT_BIN/stage0/stage0 returns `loss` and
`grad.<parameter>` for every trainable parameter, reading the parameters
from OUT_BIN/stage0/weights.bin, whose layout OUT_BIN/stage0/weights.json
gives. IN_DIR holds the program's .npy inputs.

One run gives the analytic gradients. Then, for every trainable parameter
and up to --samples of its elements (all if it has no more; otherwise a
seeded random choice that always holds the element of largest gradient),
the program runs with that element moved by +step and by -step in a copy
of weights.bin, and

    fd = (loss(+step) - loss(-step)) / (2 step)

must be within tolerance * max(1, max |analytic gradient of the tensor|)
of the analytic gradient. The parameters must be float64. Prints one line,
`finite differences ok: ...` with the largest error in those units, or
every element out of bounds. Exits 0 when all hold, 1 when some do not,
2 when the check cannot run.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np


def error(message):
    print(f"finite_differences.py: error: {message}", file=sys.stderr)
    sys.exit(2)


class Program:
    """The stage program of OUT_BIN, run on copies of its weights."""

    def __init__(self, out_bin, inputs, scratch):
        stage = os.path.join(out_bin, "stage0")
        self.binary = os.path.join(stage, "stage0")
        for path in (self.binary, os.path.join(stage, "weights.bin"),
                     os.path.join(stage, "weights.json")):
            if not os.path.exists(path):
                error(f"no {path} (built by pipe-opt --emit=binaries?)")
        with open(os.path.join(stage, "weights.bin"), "rb") as f:
            self.weights = f.read()
        with open(os.path.join(stage, "weights.json")) as f:
            self.layout = {t["name"]: t for t in json.load(f)["tensors"]}
        self.inputs = inputs
        self.weights_path = os.path.join(scratch, "weights.bin")
        self.results = os.path.join(scratch, "results")
        os.makedirs(self.results)

    def tensor(self, name, shape):
        """A copy of the weights, and the float64 view of parameter `name`
        (which must have `shape`) in it."""
        entry = self.layout[name]
        if entry["dtype"] != "F64":
            error(f"parameter '{name}' is {entry['dtype']}; finite "
                  "differences need F64")
        if tuple(entry["shape"]) != shape:
            error(f"grad.{name} has shape {list(shape)}, weights.json says "
                  f"{entry['shape']}")
        count = int(np.prod(shape, dtype=np.int64))
        if entry["offset"] + 8 * count > len(self.weights):
            error(f"parameter '{name}' lies past the end of weights.bin")
        blob = bytearray(self.weights)
        return blob, np.frombuffer(blob, np.float64, count, entry["offset"])

    def run(self, blob=None):
        """Runs on `blob` (default: the original weights); the results by
        name."""
        with open(self.weights_path, "wb") as f:
            f.write(self.weights if blob is None else blob)
        done = subprocess.run(
            [self.binary, "--inputs", self.inputs, "--outputs", self.results,
             "--weights", self.weights_path], capture_output=True, text=True)
        if done.returncode != 0:
            error(f"{self.binary} exited with {done.returncode}:\n"
                  f"{done.stderr.rstrip()}")
        return {name[:-4]: np.load(os.path.join(self.results, name))
                for name in os.listdir(self.results) if name.endswith(".npy")}

    def loss(self, blob):
        return float(self.run(blob)["loss"])


def sample(gradient, count, rng):
    """Flat indices to check: all, or `count` of them including the
    largest |gradient|."""
    size = gradient.size
    if size <= count:
        return list(range(size))
    largest = int(np.argmax(np.abs(gradient)))
    others = np.delete(np.arange(size), largest)
    return sorted([largest] + list(rng.choice(others, count - 1,
                                              replace=False)))


def check(program, args):
    """(parameters, elements, largest scaled error, failure lines)."""
    analytic = program.run()
    if "loss" not in analytic:
        error("the program returns no 'loss'")
    gradients = {name[len("grad."):]: value for name, value in
                 sorted(analytic.items()) if name.startswith("grad.")}
    for name in gradients:
        if name not in program.layout:
            error(f"parameter '{name}' is not in weights.json")
    for name, entry in sorted(program.layout.items()):
        if entry.get("trainable") and name not in gradients:
            error(f"trainable parameter '{name}' has no grad.{name} result")
    rng = np.random.default_rng(0)
    elements, worst, failures = 0, 0.0, []
    for name, gradient in gradients.items():
        blob, view = program.tensor(name, gradient.shape)
        flat = gradient.reshape(-1).astype(np.float64)
        scale = max(1.0, float(np.max(np.abs(flat), initial=0.0)))
        for index in sample(flat, args.samples, rng):
            original = view[index]
            view[index] = original + args.step
            plus = program.loss(blob)
            view[index] = original - args.step
            minus = program.loss(blob)
            view[index] = original
            fd = (plus - minus) / (2 * args.step)
            scaled = abs(fd - flat[index]) / scale
            worst = max(worst, scaled)
            elements += 1
            if not scaled <= args.tolerance:  # also catches NaN
                where = np.unravel_index(index, gradient.shape)
                failures.append(
                    f"FAIL {name}[{', '.join(map(str, where))}]: analytic "
                    f"{flat[index]:.9g}, finite differences {fd:.9g}")
    return len(gradients), elements, worst, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_bin")
    parser.add_argument("inputs")
    parser.add_argument("--label", help="names the check in the output")
    parser.add_argument("--step", type=float, default=1e-6)
    parser.add_argument("--tolerance", type=float, default=1e-6)
    parser.add_argument("--samples", type=int, default=24,
                        help="elements checked per parameter, at most")
    args = parser.parse_args()
    for folder in (args.out_bin, args.inputs):
        if not os.path.isdir(folder):
            error(f"no folder {folder}")
    label = args.label or os.path.basename(os.path.normpath(args.out_bin))
    scratch = tempfile.mkdtemp(prefix="finite-differences-")
    try:
        program = Program(args.out_bin, args.inputs, scratch)
        parameters, elements, worst, failures = check(program, args)
    finally:
        shutil.rmtree(scratch)
    if failures:
        print("\n".join(failures))
        print(f"finite differences FAILED: {label}, {len(failures)} of "
              f"{elements} elements beyond {args.tolerance:g}, max error "
              f"{worst:.1e}")
        sys.exit(1)
    print(f"finite differences ok: {label}, {parameters} parameters, "
          f"{elements} elements, max error {worst:.1e}")


if __name__ == "__main__":
    main()
