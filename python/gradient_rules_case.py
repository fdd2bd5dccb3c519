#!/usr/bin/env python3
"""A model that exercises every gradient rule of --pipe-autodiff, written
both as pipe IR and as PyTorch, for integration_test/Train/gradient-rules.test.

    gradient_rules_case.py OUT [--case arithmetic|normalization]

writes OUT/model.mlir (parameters inline), OUT/in/*.npy, and OUT/ref/ with
PyTorch's float64 loss.npy and grad.<parameter>.npy. The arithmetic case:

    h = x W + B                      batched matmul with a broadcast weight
    d = sigmoid(h) / (exp(-h) + 2)   sigmoid, neg, exp, scalar add, div
    r = reshape(transpose(d, [0, 2, 1]), [10, 3])
    g = 0.5 r V^T + 2 C              gemm trans_b, alpha, beta, bias
    k = g^T U                        gemm trans_a
    loss = sum((k - Q)^2)            broadcast sub, mul, reduce_sum

The convolution case:

    c1 = conv(x, K1, B1)             stride 2, padding [1, 0, 2, 1], dilation 2
    c2 = conv(relu(c1), K2)          stride 1, no padding or bias
    loss = sum(max_pool(c2, 2x2)^2)

The normalization case:

    h = layer_norm(x, G, Bn)         over the last axis, with a bias
    a = erf(h) W
    z = sqrt(softmax(a) + 1) + log(softmax(a) + 2) + log_softmax(a)
    loss = cross_entropy(z, labels)  mean, one label ignored (-100)
"""

import argparse

import os
import sys

import numpy as np
import torch

ARITHMETIC = {"W": (4, 5), "B": (5,), "V": (4, 3), "C": (4,), "U": (10, 6),
              "Q": (6,)}
NORMALIZATION = {"G": (6,), "Bn": (6,), "W": (6, 5)}
CONVOLUTION = {"K1": (4, 3, 3, 3), "B1": (4,), "K2": (2, 4, 2, 2)}


def dense(array):
    return "dense<" + np.array2string(
        array, separator=", ", threshold=10**6, floatmode="unique",
        max_line_width=10**6).replace("\n", "") + ">"


def declarations(shapes, params):
    lines = []
    for name, shape in shapes.items():
        type_ = "tensor<" + "x".join(map(str, shape)) + "xf32>"
        lines.append(f"pipe.parameter @{name} : {type_} trainable = "
                     f"{dense(params[name])} : {type_}")
    return lines


def arithmetic_ir(params):
    lines = declarations(ARITHMETIC, params)
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


def normalization_ir(params):
    lines = declarations(NORMALIZATION, params)
    lines.append('''func.func @main(%x: tensor<4x6xf32> {pipe.name = "x"}, %labels: tensor<4xi64> {pipe.name = "labels"}) -> (tensor<f32> {pipe.name = "loss"}) {
  %G = pipe.param_ref @G : tensor<6xf32>
  %Bn = pipe.param_ref @Bn : tensor<6xf32>
  %W = pipe.param_ref @W : tensor<6x5xf32>
  %one = pipe.constant dense<1.0> : tensor<f32>
  %two = pipe.constant dense<2.0> : tensor<f32>
  %h = pipe.layer_norm %x, %G, %Bn axis 1 : tensor<4x6xf32>, tensor<6xf32>, tensor<6xf32>
  %e = pipe.erf %h : tensor<4x6xf32>
  %a = pipe.matmul %e, %W : tensor<4x6xf32>, tensor<6x5xf32>
  %sm = pipe.softmax %a axis 1 : tensor<4x5xf32>
  %ls = pipe.log_softmax %a axis 1 : tensor<4x5xf32>
  %p1 = pipe.add %sm, %one : tensor<4x5xf32>, tensor<f32>
  %q = pipe.sqrt %p1 : tensor<4x5xf32>
  %p2 = pipe.add %sm, %two : tensor<4x5xf32>, tensor<f32>
  %lg = pipe.log %p2 : tensor<4x5xf32>
  %z1 = pipe.add %q, %lg : tensor<4x5xf32>, tensor<4x5xf32>
  %z = pipe.add %z1, %ls : tensor<4x5xf32>, tensor<4x5xf32>
  %loss = pipe.softmax_cross_entropy %z, %labels reduction mean {ignore_index = -100 : i64} : tensor<4x5xf32>, tensor<4xi64>
  return %loss : tensor<f32>
}''')
    return "\n".join(lines) + "\n"


def convolution_ir(params):
    lines = declarations(CONVOLUTION, params)
    lines.append('''func.func @main(%x: tensor<2x3x15x12xf32> {pipe.name = "x"}) -> (tensor<f32> {pipe.name = "loss"}) {
  %K1 = pipe.param_ref @K1 : tensor<4x3x3x3xf32>
  %B1 = pipe.param_ref @B1 : tensor<4xf32>
  %K2 = pipe.param_ref @K2 : tensor<2x4x2x2xf32>
  %c1 = pipe.conv %x, %K1, %B1 strides [2, 2] pads [1, 0, 2, 1] dilations [2, 2] group 1 : tensor<2x3x15x12xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>
  %r = pipe.relu %c1 : tensor<2x4x7x5xf32>
  %c2 = pipe.conv %r, %K2 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<2x4x7x5xf32>, tensor<2x4x2x2xf32>
  %p = pipe.max_pool %c2 kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<2x2x6x4xf32>
  %sq = pipe.mul %p, %p : tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>
  %loss = pipe.reduce_sum %sq axes [0, 1, 2, 3] : tensor<2x2x3x2xf32>
  return %loss : tensor<f32>
}''')
    return "\n".join(lines) + "\n"


def convolution_reference(p, inputs):
    x = torch.tensor(inputs["x"], dtype=torch.float64)
    F = torch.nn.functional
    padded = F.pad(x, (0, 1, 1, 2))  # (left, right, top, bottom)
    c1 = F.conv2d(padded, p["K1"], p["B1"], stride=2, dilation=2)
    c2 = F.conv2d(torch.relu(c1), p["K2"])
    return (F.max_pool2d(c2, 2) ** 2).sum()


def normalization_reference(p, inputs):
    x = torch.tensor(inputs["x"], dtype=torch.float64)
    labels = torch.tensor(inputs["labels"])
    h = torch.nn.functional.layer_norm(x, (6,), p["G"], p["Bn"], 1e-5)
    a = torch.erf(h) @ p["W"]
    sm = torch.softmax(a, 1)
    z = torch.sqrt(sm + 1) + torch.log(sm + 2) + torch.log_softmax(a, 1)
    return torch.nn.functional.cross_entropy(z, labels, ignore_index=-100)


def arithmetic_reference(p, inputs):
    x = torch.tensor(inputs["x"], dtype=torch.float64)
    h = x @ p["W"] + p["B"]
    d = torch.sigmoid(h) / (torch.exp(-h) + 2)
    r = d.transpose(1, 2).reshape(10, 3)
    g = 0.5 * r @ p["V"].T + 2 * p["C"]
    k = g.T @ p["U"]
    return ((k - p["Q"]) ** 2).sum()


CASES = {
    "arithmetic": (ARITHMETIC, arithmetic_ir, arithmetic_reference),
    "normalization": (NORMALIZATION, normalization_ir,
                      normalization_reference),
    "convolution": (CONVOLUTION, convolution_ir, convolution_reference),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--case", choices=sorted(CASES), default="arithmetic")
    args = parser.parse_args()
    shapes, write_ir, reference = CASES[args.case]
    rng = np.random.default_rng(7)
    params = {k: rng.normal(0, 0.5, s).astype(np.float32)
              for k, s in shapes.items()}
    if args.case == "arithmetic":
        inputs = {"x": rng.normal(0, 1, (2, 3, 4)).astype(np.float32)}
    elif args.case == "convolution":
        inputs = {"x": rng.normal(0, 1, (2, 3, 15, 12)).astype(np.float32)}
    else:
        inputs = {"x": rng.normal(0, 1, (4, 6)).astype(np.float32),
                  "labels": np.array([3, -100, 0, 4], dtype=np.int64)}
    for folder in ("in", "ref"):
        os.makedirs(os.path.join(args.out, folder), exist_ok=True)
    with open(os.path.join(args.out, "model.mlir"), "w") as f:
        f.write(write_ir(params))
    for name, value in inputs.items():
        np.save(os.path.join(args.out, "in", name + ".npy"), value)
    p = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in params.items()}
    loss = reference(p, inputs)
    loss.backward()
    np.save(os.path.join(args.out, "ref", "loss.npy"), np.array(loss.item()))
    for name, value in p.items():
        np.save(os.path.join(args.out, "ref", f"grad.{name}.npy"),
                value.grad.numpy())
    print(f"wrote {args.out}: {args.case}, loss {loss.item():.6f}")


if __name__ == "__main__":
    main()
