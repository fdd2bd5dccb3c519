#!/usr/bin/env python3
"""Checks pipe's gradients against PyTorch autograd.

    check_gradients.py prepare REFDIR MODEL OUT   # first microbatch -> OUT/*.npy
    check_gradients.py compare REFDIR MODEL RESULTS [--rtol 1e-4]
    check_gradients.py compare-npy EXPECTED RESULTS [--rtol 1e-4]

REFDIR is the output of python/train_reference.py. `prepare` writes the
first microbatch of MODEL's data as .npy inputs for OUT/run. `compare`
rebuilds MODEL in PyTorch with the initial weights, computes the loss and
its gradients on that microbatch in float64, and compares them with pipe's
`loss.npy` and `grad.<parameter>.npy` in RESULTS: each within rtol of the
largest magnitude of the reference tensor. `compare-npy` does the same
comparison against the .npy files in EXPECTED.
"""

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_reference  # noqa: E402


def first_microbatch(refdir, model):
    folder = os.path.join(refdir, model, "inputs")
    b = train_reference.MODELS[model][1]
    return {name[:-4]: np.load(os.path.join(folder, name))[:b]
            for name in sorted(os.listdir(folder))}


def prepare(args):
    os.makedirs(args.out, exist_ok=True)
    for name, value in first_microbatch(args.refdir, args.model).items():
        np.save(os.path.join(args.out, name + ".npy"), value)
    print(f"wrote the first microbatch of {args.model} to {args.out}")


def compare(args):
    model, _, order = train_reference.build(args.model, 0, 1, 1)
    initial = os.path.join(args.refdir, args.model, "initial")
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            parameter.copy_(torch.from_numpy(
                np.load(os.path.join(initial, name + ".npy"))))
    model = model.double()
    data = first_microbatch(args.refdir, args.model)
    # In the order of the model's forward arguments.
    inputs = [torch.from_numpy(data[name].astype(np.float64)
                               if data[name].dtype == np.float32
                               else data[name]) for name in order]
    loss = model(*inputs)
    loss.backward()
    expected = {"loss": np.array(loss.item())}
    for name, parameter in model.named_parameters():
        expected["grad." + name] = parameter.grad.numpy()
    check(expected, args.results, args.rtol, args.model)


def compare_npy(args):
    expected = {name[:-4]: np.load(os.path.join(args.expected, name))
                for name in sorted(os.listdir(args.expected))}
    check(expected, args.results, args.rtol,
          args.label or os.path.basename(args.expected))


def check(expected, results, rtol, label):
    """Compares each expected array with RESULTS/<name>.npy, relative to
    the expected array's largest magnitude."""
    failures = 0
    for name, want in expected.items():
        path = os.path.join(results, name + ".npy")
        if not os.path.exists(path):
            print(f"FAIL {name}: no {path}")
            failures += 1
            continue
        got = np.load(path).astype(np.float64)
        if got.shape != want.shape:
            print(f"FAIL {name}: shape {got.shape} vs {want.shape}")
            failures += 1
            continue
        scale = max(np.abs(want).max(), 1e-12)
        worst = np.abs(got - want).max() / scale
        if worst > rtol:
            print(f"FAIL {name}: worst error {worst:.2e} of the largest value")
            failures += 1
    if failures:
        sys.exit(1)
    grads = sum(1 for name in expected if name.startswith("grad."))
    print(f"gradients ok: {label}, loss and {grads} parameters within {rtol:g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("refdir")
    p.add_argument("model")
    p.add_argument("out")
    c = sub.add_parser("compare")
    c.add_argument("refdir")
    c.add_argument("model")
    c.add_argument("results")
    c.add_argument("--rtol", type=float, default=1e-4)
    n = sub.add_parser("compare-npy")
    n.add_argument("expected")
    n.add_argument("results")
    n.add_argument("--rtol", type=float, default=1e-4)
    n.add_argument("--label", default="", help="the name to report")
    args = parser.parse_args()
    {"prepare": prepare, "compare": compare,
     "compare-npy": compare_npy}[args.command](args)


if __name__ == "__main__":
    main()
