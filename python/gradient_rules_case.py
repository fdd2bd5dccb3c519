#!/usr/bin/env python3
"""A model that exercises every gradient rule of --pipe-autodiff, written
both as pipe IR and as PyTorch, for test/Train/gradient-rules.test.

    gradient_rules_case.py OUT

writes OUT/model.mlir (parameters inline), OUT/in/x.npy, and OUT/ref/ with
PyTorch's float64 loss.npy and grad.<parameter>.npy. The model:

    h = x W + B                      batched matmul with a broadcast weight
    d = sigmoid(h) / (exp(-h) + 2)   sigmoid, neg, exp, scalar add, div
    r = reshape(transpose(d, [0, 2, 1]), [10, 3])
    g = 0.5 r V^T + 2 C              gemm trans_b, alpha, beta, bias
    k = g^T U                        gemm trans_a
    loss = sum((k - Q)^2)            broadcast sub, mul, reduce_sum
"""

import os
import sys

import numpy as np
import torch

SHAPES = {"W": (4, 5), "B": (5,), "V": (4, 3), "C": (4,), "U": (10, 6),
          "Q": (6,)}


def dense(array):
    return "dense<" + np.array2string(
        array, separator=", ", threshold=10**6, floatmode="unique",
        max_line_width=10**6).replace("\n", "") + ">"


def ir(params):
    lines = []
    for name, shape in SHAPES.items():
        type_ = "tensor<" + "x".join(map(str, shape)) + "xf32>"
        lines.append(f"pipe.parameter @{name} : {type_} trainable = "
                     f"{dense(params[name])} : {type_}")
    lines.append('''func.func @main(%x: tensor<2x3x4xf32> {pipe.name = "x"}) -> (tensor<f32> {pipe.name = "loss"}) {
  %W = pipe.param_ref @W : tensor<4x5xf32>
  %B = pipe.param_ref @B : tensor<5xf32>
  %V = pipe.param_ref @V : tensor<4x3xf32>
  %C = pipe.param_ref @C : tensor<4xf32>
  %U = pipe.param_ref @U : tensor<10x6xf32>
  %Q = pipe.param_ref @Q : tensor<6xf32>
  %two = pipe.constant dense<2.0> : tensor<f32>
  %m = pipe.matmul %x, %W : tensor<2x3x4xf32>, tensor<4x5xf32>
  %h = pipe.add %m, %B : tensor<2x3x5xf32>, tensor<5xf32>
  %s = pipe.sigmoid %h : tensor<2x3x5xf32>
  %n = pipe.neg %h : tensor<2x3x5xf32>
  %e = pipe.exp %n : tensor<2x3x5xf32>
  %p = pipe.add %e, %two : tensor<2x3x5xf32>, tensor<f32>
  %d = pipe.div %s, %p : tensor<2x3x5xf32>, tensor<2x3x5xf32>
  %t = pipe.transpose %d perm [0, 2, 1] : tensor<2x3x5xf32>
  %r = pipe.reshape %t : tensor<2x5x3xf32> to tensor<10x3xf32>
  %g = pipe.gemm %r, %V, %C trans_b {alpha = 5.0e-01 : f32, beta = 2.0 : f32} : tensor<10x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  %k = pipe.gemm %g, %U trans_a : tensor<10x4xf32>, tensor<10x6xf32>
  %q = pipe.sub %k, %Q : tensor<4x6xf32>, tensor<6xf32>
  %sq = pipe.mul %q, %q : tensor<4x6xf32>, tensor<4x6xf32>
  %loss = pipe.reduce_sum %sq axes [0, 1] : tensor<4x6xf32>
  return %loss : tensor<f32>
}''')
    return "\n".join(lines) + "\n"


def reference(params, x):
    p = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in params.items()}
    x = torch.tensor(x, dtype=torch.float64)
    h = x @ p["W"] + p["B"]
    d = torch.sigmoid(h) / (torch.exp(-h) + 2)
    r = d.transpose(1, 2).reshape(10, 3)
    g = 0.5 * r @ p["V"].T + 2 * p["C"]
    k = g.T @ p["U"]
    loss = ((k - p["Q"]) ** 2).sum()
    loss.backward()
    return loss.item(), {k: v.grad.numpy() for k, v in p.items()}


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(7)
    params = {k: rng.normal(0, 0.5, s).astype(np.float32)
              for k, s in SHAPES.items()}
    x = rng.normal(0, 1, (2, 3, 4)).astype(np.float32)
    os.makedirs(os.path.join(out, "in"), exist_ok=True)
    os.makedirs(os.path.join(out, "ref"), exist_ok=True)
    with open(os.path.join(out, "model.mlir"), "w") as f:
        f.write(ir(params))
    np.save(os.path.join(out, "in", "x.npy"), x)
    loss, grads = reference(params, x)
    np.save(os.path.join(out, "ref", "loss.npy"), np.array(loss))
    for name, grad in grads.items():
        np.save(os.path.join(out, "ref", f"grad.{name}.npy"), grad)
    print(f"wrote {out}: loss {loss:.6f}")


if __name__ == "__main__":
    main()
