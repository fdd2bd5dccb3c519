#!/usr/bin/env python3
"""Checks the CUDA target's fused steps against the CPU target, on the CPU.

    check_fused_bodies.py PIPE_OPT CLUSTER HARNESS.cpp WORK

Writes a module whose outputs are each one chain of elementwise ops over
its inputs (broadcasting, comparisons and where, clip, the activations,
integer casts), compiles it for the CPU target and runs it, and compiles
it for a GPU (CLUSTER) as sources. Then compiles the CUDA stage's fused.h
(the arithmetic of each fused step, as a __host__ __device__ function of
one result element, with its broadcast index arithmetic) into HARNESS on
the host, runs every step over the same inputs, and checks each against
the CPU program's output: within 4 float32 ulps (the two are the same
expressions under different loops and vectorization).

Prints `fused bodies ok: N steps` and exits 0, or says what differs.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

RUNTIME = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "runtime")

# Each output: (name, result type, body lines using %a [4x3x8], %b [3x1],
# %c [8], %s [] and %i [4x3x8] i32; the last line defines %<name>). Each
# chain is linear, every op reading the one before, so that it fuses into
# one step.
CHAINS = [
    ("bias_relu_tanh", "tensor<4x3x8xf32>", """
    %bias_relu_tanh.0 = pipe.add %a, %c : tensor<4x3x8xf32>, tensor<8xf32>
    %bias_relu_tanh.1 = pipe.relu %bias_relu_tanh.0 : tensor<4x3x8xf32>
    %bias_relu_tanh = pipe.tanh %bias_relu_tanh.1 : tensor<4x3x8xf32>"""),
    ("gelu", "tensor<4x3x8xf32>", """
    %gelu.0 = pipe.mul %a, %rsqrt2 : tensor<4x3x8xf32>, tensor<f32>
    %gelu.1 = pipe.erf %gelu.0 : tensor<4x3x8xf32>
    %gelu.2 = pipe.add %gelu.1, %one : tensor<4x3x8xf32>, tensor<f32>
    %gelu.3 = pipe.mul %gelu.2, %a : tensor<4x3x8xf32>, tensor<4x3x8xf32>
    %gelu = pipe.mul %gelu.3, %half : tensor<4x3x8xf32>, tensor<f32>"""),
    ("broadcast_mix", "tensor<4x3x8xf32>", """
    %broadcast_mix.0 = pipe.sub %a, %b : tensor<4x3x8xf32>, tensor<3x1xf32>
    %broadcast_mix.1 = pipe.mul %broadcast_mix.0, %c : tensor<4x3x8xf32>, tensor<8xf32>
    %broadcast_mix.2 = pipe.div %broadcast_mix.1, %s : tensor<4x3x8xf32>, tensor<f32>
    %broadcast_mix = pipe.sigmoid %broadcast_mix.2 : tensor<4x3x8xf32>"""),
    ("select", "tensor<4x3x8xf32>", """
    %select.0 = pipe.greater %a, %b : tensor<4x3x8xf32>, tensor<3x1xf32>
    %select.1 = pipe.where %select.0, %a, %c : tensor<4x3x8xi1>, tensor<4x3x8xf32>, tensor<8xf32>
    %select = pipe.exp %select.1 : tensor<4x3x8xf32>"""),
    ("activations", "tensor<4x3x8xf32>", """
    %activations.0 = pipe.elu %a {alpha = 1.5 : f32} : tensor<4x3x8xf32>
    %activations.1 = pipe.selu %activations.0 : tensor<4x3x8xf32>
    %activations.2 = pipe.softplus %activations.1 : tensor<4x3x8xf32>
    %activations.3 = pipe.leaky_relu %activations.2 {alpha = 0.125 : f32} : tensor<4x3x8xf32>
    %activations = pipe.clip %activations.3 {min = -0.5 : f64, max = 2.5 : f64} : tensor<4x3x8xf32>"""),
    ("powers", "tensor<4x3x8xf32>", """
    %powers.0 = pipe.abs %a : tensor<4x3x8xf32>
    %powers.1 = pipe.sqrt %powers.0 : tensor<4x3x8xf32>
    %powers.2 = pipe.pow %powers.1, %c : tensor<4x3x8xf32>, tensor<8xf32>
    %powers.3 = pipe.log %powers.2 : tensor<4x3x8xf32>
    %powers.4 = pipe.max %powers.3, %b : tensor<4x3x8xf32>, tensor<3x1xf32>
    %powers = pipe.neg %powers.4 : tensor<4x3x8xf32>"""),
    ("integers", "tensor<4x3x8xf32>", """
    %integers.0 = pipe.cast %i : tensor<4x3x8xi32> to tensor<4x3x8xf32>
    %integers.1 = pipe.min %integers.0, %a : tensor<4x3x8xf32>, tensor<4x3x8xf32>
    %integers = pipe.reciprocal %integers.1 : tensor<4x3x8xf32>"""),
]

INPUTS = {"a": (4, 3, 8), "b": (3, 1), "c": (8,), "s": ()}


def run(args: list[str]) -> str:
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(f"check_fused_bodies.py: failed: {' '.join(args)}")
    return result.stdout


def module() -> str:
    args = ", ".join(
        f"%{name}: tensor<{'x'.join(map(str, shape)) + 'x' if shape else ''}"
        f"f32> {{pipe.name = \"{name}\"}}" for name, shape in INPUTS.items())
    args += ', %i: tensor<4x3x8xi32> {pipe.name = "i"}'
    results = ", ".join(f'{t} {{pipe.name = "{n}"}}' for n, t, _ in CHAINS)
    lines = [f"func.func @main({args}) -> ({results}) {{"]
    for name, value in [("half", "0.5"), ("rsqrt2", "0.70710678118654752"),
                        ("one", "1.0")]:
        lines.append(f"  %{name} = pipe.constant dense<{value}> : "
                     "tensor<f32>")
    for _, _, body in CHAINS:
        lines.extend(line.rstrip() for line in body.strip("\n").split("\n"))
    lines.append("  return " + ", ".join(f"%{n}" for n, _, _ in CHAINS) +
                 " : " + ", ".join(t for _, t, _ in CHAINS))
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> None:
    pipe_opt, cluster, harness, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    source = os.path.join(work, "chains.mlir")
    with open(source, "w") as f:
        f.write(module())
    rng = np.random.default_rng(7)
    inputs = os.path.join(work, "inputs")
    os.makedirs(inputs, exist_ok=True)
    arrays = {name: rng.normal(size=shape).astype(np.float32)
              for name, shape in INPUTS.items()}
    arrays["s"] = np.array(1.75, dtype=np.float32)
    arrays["i"] = rng.integers(-3, 4, size=(4, 3, 8)).astype(np.int32)
    for name, array in arrays.items():
        np.save(os.path.join(inputs, f"{name}.npy"), array)

    cpu, cuda = os.path.join(work, "cpu"), os.path.join(work, "cuda")
    run([pipe_opt, source, "--emit=binaries", "-o", cpu])
    outputs = os.path.join(work, "cpu-outputs")
    run([os.path.join(cpu, "run"), "--inputs", inputs, "--outputs", outputs])
    run([pipe_opt, source, "--cluster", cluster, "--emit=sources", "-o",
         cuda])

    binary = os.path.join(work, "fused_host")
    run(["c++", "-std=c++17", "-O3", "-march=native", "-include",
         os.path.join(cuda, "stage0", "fused.h"),
         "-I" + os.path.join(RUNTIME, "common"), harness,
         os.path.join(RUNTIME, "common", "Npy.cpp"), "-o", binary])
    results = os.path.join(work, "host-results")
    os.makedirs(results, exist_ok=True)
    # The function's inputs in its argument order: in[k] is the k-th.
    order = list(INPUTS) + ["i"]
    lines = run([binary, os.path.join(cuda, "stage0", "weights.bin"),
                 results] + [os.path.join(inputs, f"{n}.npy")
                             for n in order]).split("\n")
    ran = [line.split()[1] for line in lines if line.startswith("ran ")]
    if len(ran) != len(CHAINS):
        raise SystemExit(f"check_fused_bodies.py: {len(ran)} fused steps "
                         f"ran on the host, expected {len(CHAINS)}: "
                         f"{lines}")
    for step, (name, _, _) in zip(ran, CHAINS):
        expected = np.load(os.path.join(outputs, f"{name}.npy"))
        got = np.fromfile(os.path.join(results, f"{step}.bin"),
                          dtype=np.float32)[:expected.size]
        got = got.reshape(expected.shape)
        if not np.array_equal(np.isnan(got), np.isnan(expected)):
            raise SystemExit(f"check_fused_bodies.py: {name} ({step}): NaNs "
                             "differ from the CPU target's")
        infinite = np.isinf(expected)
        if not np.array_equal(got[infinite], expected[infinite]):
            raise SystemExit(f"check_fused_bodies.py: {name} ({step}): "
                             "infinities differ from the CPU target's")
        finite = np.isfinite(expected)
        ulps = np.abs(got[finite] - expected[finite]) / np.spacing(
            np.abs(expected[finite]).astype(np.float32))
        if ulps.size and ulps.max() > 4:
            raise SystemExit(f"check_fused_bodies.py: {name} ({step}) "
                             f"differs from the CPU target by up to "
                             f"{ulps.max():.1f} ulp")
    print(f"fused bodies ok: {len(ran)} steps")


if __name__ == "__main__":
    main()
