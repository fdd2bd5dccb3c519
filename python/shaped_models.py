#!/usr/bin/env python3
"""Writes `pipe` dialect models with realistic shapes and no weights.

The planner benchmarks (bench/planner.py) need big, real-world model
*shapes* -- GPT-2-XL, ResNet-152 -- but not their weights: the planner only
looks at types, op kinds and which ONNX node each op came from. This script
writes such a module directly, the way the ONNX importer would have:

  * every weight is a `pipe.parameter @name : tensor<...> trainable` without
    an initial value, read in `@main` with `pipe.param_ref`;
  * every op carries `loc("<node name>"("<op type>"))`, which the planner
    uses to group ops into layers;
  * `@main` takes the inputs and labels and returns the scalar training loss.

Standard library only:

  python3 python/shaped_models.py gpt --layers 48 --d-model 1600 --heads 25 \\
      --seq 1024 --batch 1 --vocab 50257 --out /tmp/gpt2xl.mlir
  python3 python/shaped_models.py resnet --blocks 3,8,36,3 --width 64 \\
      --image 224 --batch 32 --classes 1000 --out /tmp/resnet152.mlir
"""

import argparse
import math
import sys


def tensor(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def ints(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


class Emitter:
    """Hands out SSA names, remembers their shapes and writes op lines."""

    def __init__(self):
        self.params = []  # (name, shape, trainable)
        self.lines = []
        self.shapes = {}  # SSA name -> (shape, dtype)
        self.count = 0

    def type(self, value):
        return tensor(*self.shapes[value])

    def _result(self, shape, dtype="f32"):
        name = f"%{self.count}"
        self.count += 1
        self.shapes[name] = (list(shape), dtype)
        return name

    def arg(self, name, shape, dtype="f32"):
        self.shapes[name] = (list(shape), dtype)
        return name

    def param(self, name, shape, trainable=True):
        """Declares the parameter `name` (once) and reads it."""
        if all(name != declared for declared, _, _ in self.params):
            self.params.append((name, list(shape), trainable))
        result = self._result(shape)
        self.lines.append(f"{result} = pipe.param_ref @{name} : "
                          f'{tensor(shape)} loc("{name}"("Initializer"))')
        return result

    def constant(self, node, value, shape):
        result = self._result(shape)
        self.lines.append(f"{result} = pipe.constant dense<{value}> : "
                          f'{tensor(shape)} loc("{node}"("Constant"))')
        return result

    def op(self, node, op_type, mnemonic, operands, shape, dtype="f32",
           attrs="", typed=None, suffix=""):
        """`%r = pipe.<mnemonic> <operands><attrs> : <types><suffix> loc(...)`.

        `typed` lists the operands whose types the syntax spells out (all of
        them by default); `shape` is the result's.
        """
        result = self._result(shape, dtype)
        types = ", ".join(self.type(v) for v in (operands if typed is None
                                                 else typed))
        self.lines.append(
            f"{result} = pipe.{mnemonic} {', '.join(operands)}{attrs} : "
            f'{types}{suffix} loc("{node}"("{op_type}"))')
        return result

    def split(self, node, value, axis, pieces):
        shape, dtype = self.shapes[value]
        piece = list(shape)
        piece[axis] //= pieces
        base = f"%{self.count}"
        self.count += 1
        results = [f"{base}#{i}" for i in range(pieces)]
        for r in results:
            self.shapes[r] = (piece, dtype)
        self.lines.append(
            f"{base}:{pieces} = pipe.split {value} axis {axis} : "
            f"{self.type(value)} to "
            f"{', '.join([tensor(piece, dtype)] * pieces)}"
            f' loc("{node}"("Split"))')
        return results

    # Shape-keeping and shape-changing helpers.
    def binary(self, node, op_type, lhs, rhs):
        a, b = self.shapes[lhs][0], self.shapes[rhs][0]
        rank = max(len(a), len(b))
        a, b = [1] * (rank - len(a)) + a, [1] * (rank - len(b)) + b
        shape = [max(x, y) for x, y in zip(a, b)]
        return self.op(node, op_type, op_type.lower(), [lhs, rhs], shape)

    def unary(self, node, op_type, mnemonic, value, attrs=""):
        return self.op(node, op_type, mnemonic, [value],
                       self.shapes[value][0], attrs=attrs)

    def matmul(self, node, lhs, rhs):
        a, b = self.shapes[lhs][0], self.shapes[rhs][0]
        batch = a[:-2] if len(a) >= len(b) else b[:-2]
        return self.op(node, "MatMul", "matmul", [lhs, rhs],
                       batch + [a[-2], b[-1]])

    def reshape(self, node, value, shape):
        shape = list(shape)
        return self.op(node, "Reshape", "reshape", [value], shape,
                       dtype=self.shapes[value][1],
                       suffix=" to " + tensor(shape, self.shapes[value][1]))

    def transpose(self, node, value, perm):
        shape = [self.shapes[value][0][p] for p in perm]
        return self.op(node, "Transpose", "transpose", [value], shape,
                       attrs=" perm " + ints(perm))

    def loss(self, node, logits, labels):
        return self.op(node, "SoftmaxCrossEntropyLoss",
                       "softmax_cross_entropy", [logits, labels], [],
                       attrs=" reduction mean {ignore_index = -100 : i64}")

    def module(self, inputs, result):
        out = []
        for name, shape, trainable in self.params:
            flag = " trainable" if trainable else ""
            out.append(f"pipe.parameter @{name} : {tensor(shape)}{flag}"
                       f' loc("{name}"("Initializer"))')
        args = ", ".join(f"{v}: {self.type(v)}" for v in inputs)
        out.append(f"func.func @main({args}) -> {self.type(result)} {{")
        out += ["  " + line for line in self.lines]
        out.append(f"  return {result} : {self.type(result)}")
        out.append("}")
        return "\n".join(out) + "\n"


def gpt(a):
    e, B, S, D, H, V = Emitter(), a.batch, a.seq, a.d_model, a.heads, a.vocab
    assert D % H == 0, "--d-model must be a multiple of --heads"
    hd = D // H
    ids = e.arg("%ids", [B, S], "i64")
    labels = e.arg("%labels", [B, S], "i64")

    wte = e.param("wte", [V, D])
    tok = e.op("wte/Gather", "Gather", "gather", [wte, ids], [B, S, D],
               attrs=" axis 0")
    x = e.binary("wpe/Add", "Add", tok, e.param("wpe", [S, D]))

    def linear(node, name, value, n_in, n_out):
        y = e.matmul(node + "/MatMul", value, e.param(name + ".weight",
                                                      [n_in, n_out]))
        return e.binary(node + "/Add", "Add", y, e.param(name + ".bias",
                                                         [n_out]))

    def layer_norm(node, name, value):
        return e.op(node + "/LayerNormalization", "LayerNormalization",
                    "layer_norm", [value, e.param(name + ".weight", [D]),
                                   e.param(name + ".bias", [D])],
                    e.shapes[value][0], attrs=" axis 2")

    for i in range(a.layers):
        n, p = f"h.{i}", f"h.{i}."
        # Attention.
        h = layer_norm(n + "/ln_1", p + "ln_1", x)
        qkv = linear(n + "/attn/qkv", p + "attn.qkv", h, D, 3 * D)
        q, k, v = e.split(n + "/attn/Split", qkv, 2, 3)
        heads = {}
        for name, value, perm in (("q", q, [0, 2, 1, 3]),
                                  ("k", k, [0, 2, 3, 1]),
                                  ("v", v, [0, 2, 1, 3])):
            r = e.reshape(f"{n}/attn/{name}/Reshape", value, [B, S, H, hd])
            heads[name] = e.transpose(f"{n}/attn/{name}/Transpose", r, perm)
        s = e.matmul(n + "/attn/scores/MatMul", heads["q"], heads["k"])
        s = e.binary(n + "/attn/scale/Mul", "Mul", s, e.constant(
            n + "/attn/scale/Constant", f"{1 / math.sqrt(hd):.8e}", []))
        s = e.binary(n + "/attn/mask/Add", "Add", s, e.constant(
            n + "/attn/mask/Constant", "0.0", [S, S]))
        s = e.unary(n + "/attn/Softmax", "Softmax", "softmax", s, " axis 3")
        o = e.matmul(n + "/attn/context/MatMul", s, heads["v"])
        o = e.transpose(n + "/attn/context/Transpose", o, [0, 2, 1, 3])
        o = e.reshape(n + "/attn/context/Reshape", o, [B, S, D])
        o = linear(n + "/attn/proj", p + "attn.proj", o, D, D)
        x = e.binary(n + "/attn/residual/Add", "Add", x, o)
        # MLP with the exact (erf) GELU.
        h = layer_norm(n + "/ln_2", p + "ln_2", x)
        h = linear(n + "/mlp/fc", p + "mlp.fc", h, D, 4 * D)
        g = n + "/mlp/gelu"
        t = e.binary(g + "/Div", "Div", h, e.constant(
            g + "/sqrt2/Constant", f"{math.sqrt(2):.8e}", []))
        t = e.unary(g + "/Erf", "Erf", "erf", t)
        t = e.binary(g + "/Add", "Add", t, e.constant(
            g + "/one/Constant", "1.0", []))
        t = e.binary(g + "/Mul", "Mul", h, t)
        t = e.binary(g + "/half/Mul", "Mul", t, e.constant(
            g + "/half/Constant", "0.5", []))
        h = linear(n + "/mlp/proj", p + "mlp.proj", t, 4 * D, D)
        x = e.binary(n + "/mlp/residual/Add", "Add", x, h)

    x = layer_norm("ln_f", "ln_f", x)
    # The language-model head reuses the token embedding, transposed.
    head = e.transpose("lm_head/Transpose", e.param("wte", [V, D]), [1, 0])
    logits = e.matmul("lm_head/MatMul", x, head)
    logits = e.reshape("loss/logits/Reshape", logits, [B * S, V])
    flat = e.reshape("loss/labels/Reshape", labels, [B * S])
    loss = e.loss("loss/SoftmaxCrossEntropyLoss", logits, flat)
    return e.module([ids, labels], loss)


def resnet(a):
    e, B = Emitter(), a.batch
    image = x = e.arg("%x", [B, 3, a.image, a.image])
    labels = e.arg("%labels", [B], "i64")

    def conv(node, name, value, out_ch, kernel, stride=1):
        n, c, h, w = e.shapes[value][0]
        pad = kernel // 2
        weight = e.param(name + ".weight", [out_ch, c, kernel, kernel])
        size = [(d + 2 * pad - kernel) // stride + 1 for d in (h, w)]
        return e.op(node + "/Conv", "Conv", "conv", [value, weight],
                    [n, out_ch] + size,
                    attrs=f" strides {ints([stride] * 2)} pads "
                          f"{ints([pad] * 4)} dilations [1, 1] group 1")

    def batch_norm(node, name, value):
        ch = [e.shapes[value][0][1]]
        stats = [e.param(name + ".weight", ch), e.param(name + ".bias", ch),
                 e.param(name + ".running_mean", ch, trainable=False),
                 e.param(name + ".running_var", ch, trainable=False)]
        return e.op(node + "/BatchNormalization", "BatchNormalization",
                    "batch_norm", [value] + stats, e.shapes[value][0],
                    typed=[value, stats[0]])

    def relu(node, value):
        return e.unary(node + "/Relu", "Relu", "relu", value)

    x = relu("relu", batch_norm("bn1", "bn1", conv("conv1", "conv1", x,
                                                  a.width, 7, stride=2)))
    n, c, h, w = e.shapes[x][0]
    x = e.op("maxpool/MaxPool", "MaxPool", "max_pool", [x],
             [n, c, (h - 1) // 2 + 1, (w - 1) // 2 + 1],
             attrs=" kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] "
                   "dilations [1, 1]")

    for stage, blocks in enumerate(a.blocks):
        width = a.width * 2 ** stage
        for block in range(blocks):
            n = p = f"layer{stage + 1}.{block}"
            stride = 2 if stage > 0 and block == 0 else 1
            y = relu(n + "/relu1", batch_norm(n + "/bn1", p + ".bn1", conv(
                n + "/conv1", p + ".conv1", x, width, 1)))
            y = relu(n + "/relu2", batch_norm(n + "/bn2", p + ".bn2", conv(
                n + "/conv2", p + ".conv2", y, width, 3, stride)))
            y = batch_norm(n + "/bn3", p + ".bn3",
                           conv(n + "/conv3", p + ".conv3", y, 4 * width, 1))
            if block == 0:
                x = batch_norm(n + "/downsample.1", p + ".downsample.1", conv(
                    n + "/downsample.0", p + ".downsample.0", x, 4 * width, 1,
                    stride))
            x = relu(n + "/relu3", e.binary(n + "/Add", "Add", y, x))

    channels = e.shapes[x][0][1]
    x = e.op("avgpool/GlobalAveragePool", "GlobalAveragePool",
             "global_average_pool", [x], [B, channels, 1, 1])
    x = e.reshape("flatten/Reshape", x, [B, channels])
    fc = [e.param("fc.weight", [a.classes, channels]),
          e.param("fc.bias", [a.classes])]
    logits = e.op("fc/Gemm", "Gemm", "gemm", [x] + fc, [B, a.classes],
                  attrs=" trans_b")
    loss = e.loss("loss/SoftmaxCrossEntropyLoss", logits, labels)
    return e.module([image, labels], loss)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    models = parser.add_subparsers(dest="model", required=True)
    g = models.add_parser("gpt", help="GPT-2 decoder (default: GPT-2-XL)")
    g.add_argument("--layers", type=int, default=48)
    g.add_argument("--d-model", type=int, default=1600)
    g.add_argument("--heads", type=int, default=25)
    g.add_argument("--seq", type=int, default=1024)
    g.add_argument("--batch", type=int, default=1)
    g.add_argument("--vocab", type=int, default=50257)
    r = models.add_parser("resnet", help="bottleneck ResNet "
                                         "(default: ResNet-152)")
    r.add_argument("--blocks", default="3,8,36,3",
                   type=lambda s: [int(b) for b in s.split(",")])
    r.add_argument("--width", type=int, default=64)
    r.add_argument("--image", type=int, default=224)
    r.add_argument("--batch", type=int, default=32)
    r.add_argument("--classes", type=int, default=1000)
    for p in (g, r):
        p.add_argument("--out", help="output file (default: stdout)")
    args = parser.parse_args(argv)

    text = gpt(args) if args.model == "gpt" else resnet(args)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
