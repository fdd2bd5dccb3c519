#!/usr/bin/env python3
"""Writes PyTorch training references for `pipe-opt --train` and `OUT/run`.

Run with Debian's Python (/usr/bin/python3), which has python3-torch 1.13
and python3-onnx 1.12:

    /usr/bin/python3 python/train_reference.py --out DIR
        [--models mlp,cnn,gpt] [--optimizers sgd,momentum,adamw]
        (also: model bncnn; optimizers adam, dampened)
        [--steps 6] [--microbatches 4] [--seed 0]
    /usr/bin/python3 python/train_reference.py --list-ops [--models ...]

For each model it writes DIR/<model>/:
  model.onnx              the model exported for training at microbatch size
                          b: the graph inputs are the data and the target,
                          the single output is the scalar `loss`, and the
                          initializers are exactly the trainable parameters,
                          named as in the PyTorch state_dict (opset 17,
                          TRAINING mode, no constant folding), plus, for a
                          model with batch norm, each BatchNorm's
                          running_mean and running_var buffers (not
                          num_batches_tracked), read by BatchNormalization
                          nodes with training_mode = 1.
  inputs/<input>.npy      steps*M microbatches of seeded data (k*b rows along
                          axis 0), read in order; integer targets are int64.
  initial/<init>.npy      the initial weights and running statistics (what
                          the initializers hold).
  first_loss.json         the loss of the first microbatch and of each of the
                          first step's M microbatches, with the initial
                          weights (checked by check_train_reference.py).
  <opt>/losses.json       one loss per step: the mean of the step's M
                          microbatch losses, taken before the update.
  <opt>/weights/<init>.npy  the weights after the last step (float32).
  <opt>/statistics/<init>.npy  for a model with batch norm: the running
                          statistics after the last step (float32), as the
                          ONNX model defines them (see below).
  <opt>/config.json       the optimizer and its exact hyperparameters.
  zero_gradients.json     the parameter elements whose gradient is zero on
                          every microbatch, in float64 at the initial
                          weights (the attention key bias: softmax ignores
                          a shift shared by all keys; in bncnn, the head's
                          weights for a feature that ReLU zeroes on every
                          microbatch). Their computed gradients are
                          rounding noise (or zero), which Adam scales
                          up to steps of about lr, so no two
                          implementations agree on them;
                          check_training.py compares them loosely.

Training follows docs/architecture.md section 2 ("OUT/run"): step s uses
microbatches s*M .. s*M+M-1; the gradient is the mean of the M microbatch
gradients (each microbatch does (loss_i / M).backward()), then
optimizer.step() and zero_grad(). Every optimizer starts from the same
initial weights.

Batch norm (model bncnn, not in the default --models): in training mode
each BatchNorm normalizes with the microbatch's statistics and updates its
running statistics on every forward pass, that is once per microbatch.
ONNX's BatchNormalization (training_mode = 1, momentum = 1 - PyTorch's
momentum = 0.9) defines

    running_mean = running_mean * momentum + mean(x) * (1 - momentum)
    running_var  = running_var * momentum + var(x) * (1 - momentum)

with the BIASED variance var(x) = mean((x - mean(x))^2) over the batch and
spatial axes (n = b*H*W values per channel). PyTorch's own running_var
uses the UNBIASED variance, var(x) * n / (n - 1), so its buffer is not what
the exported model computes. <opt>/statistics/ therefore comes from our own
float64 copies, updated by a forward pre-hook on each BatchNorm with the
microbatch it receives (ONNX's formulas); the script checks that the
running_mean copy matches PyTorch's buffer, and that a copy updated with
the unbiased variance matches PyTorch's running_var (within 1e-5 of the
largest magnitude), so the hooks see exactly PyTorch's updates. Exporting
traces one forward pass in training mode, which already updates the
buffers with microbatch 0 (torch.onnx writes the updated values); those
are the initial running statistics, in model.onnx and initial/. The first
losses are evaluated without changing them.

--list-ops prints each model's histogram of ONNX op types and marks the ops
that the compiler's importer does not list.
"""

from __future__ import annotations

import argparse
import collections
import copy
import io
import json
import math
import os
import sys
import time
import warnings

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

OPSET = 17

# The ONNX op types the brief for the training work lists as supported by
# the importer ("elementwise ops", "reductions" and "Shape-arithmetic
# folding" spelled out). Anything else is reported by --list-ops.
SUPPORTED_OPS = {
    # elementwise
    "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Neg", "Abs", "Exp", "Log",
    "Reciprocal", "Relu", "Max", "Min", "Clip", "Equal", "Less", "Greater",
    "Not", "Cast", "Identity", "Erf", "Tanh", "Sigmoid",
    # nn
    "MatMul", "Gemm", "Conv", "MaxPool", "AveragePool",
    "LayerNormalization", "Softmax", "LogSoftmax",
    # bncnn only, in training mode
    "BatchNormalization",
    "SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss",
    # reductions
    "ReduceMean", "ReduceSum", "ReduceMax",
    # shapes
    "Reshape", "Transpose", "Slice", "Concat", "Split", "Gather", "Where",
    "Expand", "Unsqueeze", "Squeeze", "Shape", "Constant",
}


# --------------------------------------------------------------------------
# Models. Each takes (inputs..., target) and returns the scalar loss.

class MLP(nn.Module):
    """Linear-ReLU-Linear-Tanh-Linear with a mean-squared-error loss."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        pred = self.fc3(torch.tanh(self.fc2(F.relu(self.fc1(x)))))
        # (pred - y)^2 averaged over every element, which is F.mse_loss;
        # torch 1.13 cannot export aten::mse_loss, so it is spelled out
        # (Sub, Mul, ReduceMean), and training uses the same expression.
        diff = pred - y
        return (diff * diff).mean()


class CNN(nn.Module):
    """Conv(pad 1)-ReLU-MaxPool, a residual block relu(h + conv(h)),
    flatten, linear head, cross-entropy over 10 classes."""

    def __init__(self, channels: int = 8, size: int = 8,
                 classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.res = nn.Conv2d(channels, channels, 3, padding=1)
        self.features = channels * (size // 2) * (size // 2)
        self.head = nn.Linear(self.features, classes)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        h = self.pool(F.relu(self.stem(x)))
        h = F.relu(h + self.res(h))
        # A reshape with a constant shape rather than torch.flatten, which
        # exports the Flatten op.
        logits = self.head(h.reshape(-1, self.features))
        return F.cross_entropy(logits, labels)


class BNCNN(nn.Module):
    """Conv(pad 1)-BatchNorm-ReLU-MaxPool, Conv(pad 1)-BatchNorm-ReLU,
    flatten, linear head, cross-entropy over 10 classes.

    The convolutions have no bias, as usual before batch norm: the batch
    mean cancels a bias, so its gradient is rounding noise (about 4e-8 in
    float32), which Adam scales into steps of about lr, and the running
    mean follows the drifting bias. No two implementations would agree on
    either (AdamW here: 1e-2 on the biases and on running_mean between
    float32 and float64 PyTorch)."""

    def __init__(self, channels: int = 8, size: int = 8,
                 classes: int = 10) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.features = channels * (size // 2) * (size // 2)
        self.head = nn.Linear(self.features, classes)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        h = self.pool(F.relu(self.bn1(self.conv1(x))))
        h = F.relu(self.bn2(self.conv2(h)))
        logits = self.head(h.reshape(-1, self.features))
        return F.cross_entropy(logits, labels)


class Block(nn.Module):
    def __init__(self, d: int, heads: int, mask: torch.Tensor) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, dropout=0.0,
                                          batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d),
                                 nn.GELU(approximate="none"),
                                 nn.Linear(4 * d, d))
        # A plain attribute, not a buffer: the tracer records it as a
        # Constant, so the initializers are exactly the parameters.
        self.mask = mask

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=self.mask, need_weights=False)
        x = x + a
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """Token and learned position embeddings, causal self-attention blocks,
    final LayerNorm, linear head, next-token cross-entropy."""

    def __init__(self, vocab: int = 64, d: int = 32, heads: int = 4,
                 layers: int = 2, seq: int = 16, tied: bool = False) -> None:
        super().__init__()
        self.vocab = vocab
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        # A float mask (0 on and below the diagonal, -inf above), so that
        # MultiheadAttention adds it instead of converting a boolean mask
        # with zeros_like/masked_fill.
        mask = torch.full((seq, seq), float("-inf")).triu(1)
        self.blocks = nn.Sequential(
            *[Block(d, heads, mask) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)
        # With `tied`, the head reads the token embedding's table (as GPT-2
        # does): one parameter, two uses at the two ends of the model.
        if tied:
            self.head.weight = self.tok.weight

    def forward(self, tokens: torch.Tensor,
                labels: torch.Tensor) -> torch.Tensor:
        # Every position is used, so the position table is added whole
        # (no positions buffer and no Gather).
        x = self.tok(tokens) + self.pos.weight
        logits = self.head(self.ln(self.blocks(x)))
        return F.cross_entropy(logits.reshape(-1, self.vocab),
                               labels.reshape(-1))


# --------------------------------------------------------------------------
# Data. Seeded NumPy generators; k = steps * M microbatches of b rows.

def make_mlp(rng: np.random.Generator, rows: int):
    x = rng.standard_normal((rows, 16)).astype(np.float32)
    # A smooth target the MLP can fit, plus a little noise.
    w = rng.standard_normal((16, 4)).astype(np.float32) / 4.0
    y = np.tanh(x @ w) + 0.05 * rng.standard_normal((rows, 4))
    return MLP(), {"x": x, "y": y.astype(np.float32)}


def make_cnn(rng: np.random.Generator, rows: int):
    x = rng.standard_normal((rows, 3, 8, 8)).astype(np.float32)
    # Labels that depend on the image: the class of the brightest of ten
    # fixed random projections.
    proj = rng.standard_normal((3 * 8 * 8, 10))
    labels = np.argmax(x.reshape(rows, -1) @ proj, axis=1).astype(np.int64)
    return CNN(), {"x": x, "labels": labels}


def make_bncnn(rng: np.random.Generator, rows: int):
    # The data of make_cnn (the same draws).
    x = rng.standard_normal((rows, 3, 8, 8)).astype(np.float32)
    proj = rng.standard_normal((3 * 8 * 8, 10))
    labels = np.argmax(x.reshape(rows, -1) @ proj, axis=1).astype(np.int64)
    return BNCNN(), {"x": x, "labels": labels}


def make_gpt(rng: np.random.Generator, rows: int):
    vocab, seq = 64, 16
    # Sequences that mostly count up by a per-sequence stride, so the next
    # token is predictable; labels are the tokens shifted left by one.
    start = rng.integers(0, vocab, (rows, 1))
    stride = rng.integers(1, 4, (rows, 1))
    stream = (start + stride * np.arange(seq + 1)) % vocab
    noise = rng.random((rows, seq + 1)) < 0.1
    stream = np.where(noise, rng.integers(0, vocab, (rows, seq + 1)), stream)
    tokens = stream[:, :-1].astype(np.int64)
    labels = stream[:, 1:].astype(np.int64)
    return GPT(vocab=vocab, seq=seq), {"tokens": tokens, "labels": labels}


def make_gpt_tied(rng: np.random.Generator, rows: int):
    # The data of make_gpt (the same draws), for a GPT whose head is tied to
    # its token embedding.
    _, data = make_gpt(rng, rows)
    return GPT(vocab=64, seq=16, tied=True), data


# name -> (constructor of the model and its data, microbatch size b)
MODELS = {"mlp": (make_mlp, 8), "cnn": (make_cnn, 4), "gpt": (make_gpt, 4),
          "bncnn": (make_bncnn, 4), "gpt-tied": (make_gpt_tied, 4)}


# --------------------------------------------------------------------------
# Optimizers.

OPTIMIZERS = {
    "sgd": {"type": "SGD", "lr": 0.05, "momentum": 0.0, "dampening": 0.0,
            "nesterov": False, "weight_decay": 0.0},
    "momentum": {"type": "SGD", "lr": 0.05, "momentum": 0.9,
                 "dampening": 0.0, "nesterov": True, "weight_decay": 1e-4},
    "adamw": {"type": "AdamW", "lr": 1e-3, "betas": [0.9, 0.999],
              "eps": 1e-8, "weight_decay": 0.01, "amsgrad": False},
    # Not in the default set: Adam with (coupled) weight decay, and heavy
    # ball momentum with dampening.
    "adam": {"type": "Adam", "lr": 2e-3, "betas": [0.8, 0.99],
             "eps": 1e-7, "weight_decay": 0.01, "amsgrad": False},
    "dampened": {"type": "SGD", "lr": 0.03, "momentum": 0.8,
                 "dampening": 0.25, "nesterov": False, "weight_decay": 0.0},
}


def make_optimizer(name: str, params) -> torch.optim.Optimizer:
    c = OPTIMIZERS[name]
    if c["type"] == "SGD":
        return torch.optim.SGD(params, lr=c["lr"], momentum=c["momentum"],
                               dampening=c["dampening"],
                               nesterov=c["nesterov"],
                               weight_decay=c["weight_decay"])
    adam = torch.optim.Adam if c["type"] == "Adam" else torch.optim.AdamW
    return adam(params, lr=c["lr"], betas=tuple(c["betas"]), eps=c["eps"],
                weight_decay=c["weight_decay"], amsgrad=c["amsgrad"])


# --------------------------------------------------------------------------

def build(name: str, seed: int, steps: int, microbatches: int):
    """Returns (model, b, data): the weights come from torch's generator
    seeded with `seed` and the data from a NumPy generator seeded with
    `seed`, so they are independent of each other and of `steps`/M (except
    for how many rows are drawn)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    # make_* draws the data with `rng` only; the model's constructor is the
    # only user of torch's generator.
    make, b = MODELS[name]
    model, data = make(rng, steps * microbatches * b)
    return model, b, data


def microbatch(data: dict[str, np.ndarray], b: int,
               i: int) -> list[torch.Tensor]:
    return [torch.from_numpy(np.ascontiguousarray(v[i * b:(i + 1) * b]))
            for v in data.values()]


def batch_norms(model: nn.Module) -> dict[str, nn.Module]:
    """The model's BatchNorm modules by name."""
    return {name: m for name, m in model.named_modules()
            if isinstance(m, nn.modules.batchnorm._BatchNorm)}


def statistics(model: nn.Module) -> dict[str, np.ndarray]:
    """The running statistics buffers of the model's BatchNorms, by their
    state_dict names (float32 copies)."""
    return {f"{name}.{kind}":
            getattr(m, kind).detach().numpy().astype(np.float32).copy()
            for name, m in batch_norms(model).items()
            for kind in ("running_mean", "running_var")}


def export_onnx(model: nn.Module, data: dict[str, np.ndarray], b: int,
                path: str | None) -> onnx.ModelProto:
    """Exports `model` for training at microbatch size `b`, checks that the
    initializers are exactly the parameters and the BatchNorms' running
    statistics (same names, same values; the tracer's forward pass has
    already updated the statistics, and the export holds the updated
    values), that every BatchNormalization is in training mode, and writes
    it to `path` when given."""
    args = tuple(microbatch(data, b, 0))
    buffer = io.BytesIO()
    # TRAINING, not EVAL: batch norm (bncnn) must be exported in training
    # mode (training_mode = 1: batch statistics, updated running
    # statistics). The other models have no dropout or batch norm, so the
    # graph is the same, but in EVAL mode torch 1.13 merges initializers
    # with equal values (every LayerNorm's ones and zeros, for instance)
    # into one, and the initializers would no longer be the parameters.
    model.train()
    with warnings.catch_warnings():
        # Batch norm: torch warns that the graph does not count batches in
        # num_batches_tracked, which a fixed momentum does not use.
        warnings.filterwarnings(
            "ignore", message=r".*Removing mutation from node aten::add_ on "
            r"block input: '[\w.]*num_batches_tracked'")
        torch.onnx.export(model, args, buffer, input_names=list(data),
                          output_names=["loss"], opset_version=OPSET,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, export_params=True,
                          keep_initializers_as_inputs=False)
    proto = onnx.load_from_string(buffer.getvalue())
    onnx.checker.check_model(proto, full_check=True)

    graph = proto.graph
    inputs = [v.name for v in graph.input]
    if inputs != list(data):
        raise SystemExit(f"graph inputs {inputs}, expected {list(data)}")
    outputs = [v.name for v in graph.output]
    if outputs != ["loss"]:
        raise SystemExit(f"graph outputs {outputs}, expected ['loss']")
    dims = [d.dim_value for d in graph.output[0].type.tensor_type.shape.dim]
    if dims:
        raise SystemExit(f"loss has shape {dims}, expected a scalar")
    for value in graph.input:
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        want = [b] + list(data[value.name].shape[1:])
        if shape != want:
            raise SystemExit(f"input {value.name} has shape {shape}, "
                             f"expected {want}")

    params = dict(model.named_parameters())
    stats = statistics(model)
    counters = {f"{name}.num_batches_tracked" for name in batch_norms(model)}
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    # A tied parameter appears once among the parameters and the
    # initializers, but under each of its names in the state dict.
    seen: set[int] = set()
    state_names = set()
    for name, tensor in model.state_dict(keep_vars=True).items():
        if id(tensor) not in seen:
            seen.add(id(tensor))
            state_names.add(name)
    if set(inits) != set(params) | set(stats) or \
            state_names != set(params) | set(stats) | counters:
        raise SystemExit(
            f"initializers and parameters differ: only initializers "
            f"{sorted(set(inits) - set(params) - set(stats))}, only "
            f"parameters and running statistics "
            f"{sorted((set(params) | set(stats)) - set(inits))}, state_dict "
            f"{sorted(state_names ^ (set(params) | set(stats) | counters))}")
    for pname, p in params.items():
        value = p.detach().numpy()
        if inits[pname].dtype != np.float32 or \
                not np.array_equal(inits[pname], value):
            raise SystemExit(f"initializer {pname} differs from the "
                             f"parameter")
    for sname, value in stats.items():
        if inits[sname].dtype != np.float32 or \
                not np.array_equal(inits[sname], value):
            raise SystemExit(f"initializer {sname} differs from the "
                             f"BatchNorm buffer")
    # Batch norm: training mode, reading exactly the running statistics,
    # with ONNX's momentum = 1 - PyTorch's.
    modules = batch_norms(model)
    read = []
    for node in graph.node:
        if node.op_type != "BatchNormalization":
            continue
        attrs = {a.name: onnx.helper.get_attribute_value(a)
                 for a in node.attribute}
        if attrs.get("training_mode", 0) != 1:
            raise SystemExit(f"BatchNormalization node '{node.name}' is not "
                             f"in training mode (training_mode = "
                             f"{attrs.get('training_mode', 0)})")
        read += list(node.input[3:5])
        owner = modules.get(node.input[3].rsplit(".", 1)[0])
        momentum = attrs.get("momentum", 0.9)
        if owner is None or abs(momentum - (1 - owner.momentum)) > 1e-6:
            raise SystemExit(f"BatchNormalization node '{node.name}' reads "
                             f"{list(node.input[3:5])} with momentum "
                             f"{momentum}, not a BatchNorm's running "
                             f"statistics with 1 - its momentum")
    if sorted(read) != sorted(stats):
        raise SystemExit(f"the BatchNormalization nodes read {sorted(read)}, "
                         f"expected the running statistics "
                         f"{sorted(stats)}")
    if path is not None:
        onnx.save(proto, path)
    return proto


def op_histogram(proto: onnx.ModelProto) -> collections.Counter:
    return collections.Counter(n.op_type for n in proto.graph.node)


def print_ops(name: str, proto: onnx.ModelProto) -> list[str]:
    hist = op_histogram(proto)
    outside = sorted(op for op in hist if op not in SUPPORTED_OPS)
    print(f"{name}: {sum(hist.values())} nodes, "
          f"{len(proto.graph.initializer)} initializers")
    for op, count in sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])):
        mark = "  (outside the supported list)" if op in outside else ""
        print(f"  {op:28s}{count:4d}{mark}")
    return outside


def save_arrays(folder: str, arrays: dict[str, np.ndarray]) -> None:
    os.makedirs(folder, exist_ok=True)
    for key, value in arrays.items():
        np.save(os.path.join(folder, f"{key}.npy"), value)


def state(model: nn.Module) -> dict[str, np.ndarray]:
    return {k: p.detach().numpy().astype(np.float32).copy()
            for k, p in model.named_parameters()}


class OnnxStatistics:
    """The running statistics as ONNX's BatchNormalization (training mode)
    updates them, in float64: a forward pre-hook on each BatchNorm of
    `model` takes the microbatch it normalizes and updates
    running = (1 - m) * running + m * batch statistic (m = PyTorch's
    momentum, 0.1; ONNX's momentum is 1 - m), with the biased variance.
    A second variance follows PyTorch's update (unbiased), to check the
    hooks against PyTorch's own buffers."""

    def __init__(self, model: nn.Module) -> None:
        self.modules = batch_norms(model)
        self.mean, self.var, self.torch_var = {}, {}, {}
        for name, m in self.modules.items():
            self.mean[name] = m.running_mean.detach().double().clone()
            self.var[name] = m.running_var.detach().double().clone()
            self.torch_var[name] = self.var[name].clone()
        self.handles = [m.register_forward_pre_hook(self.hook(name))
                        for name, m in self.modules.items()]

    def hook(self, name: str):
        def update(module: nn.Module, inputs) -> None:
            x = inputs[0].detach().double()
            axes = [d for d in range(x.dim()) if d != 1]
            n = x.numel() // x.shape[1]
            mean = x.mean(axes)
            var = x.var(axes, unbiased=False)
            m = module.momentum
            self.mean[name] = (1 - m) * self.mean[name] + m * mean
            self.var[name] = (1 - m) * self.var[name] + m * var
            self.torch_var[name] = ((1 - m) * self.torch_var[name] +
                                    m * var * n / (n - 1))
        return update

    def finish(self) -> tuple[dict[str, np.ndarray], float, float]:
        """Removes the hooks and returns the ONNX statistics (float32, by
        state_dict name) and the largest differences, relative to the
        tensor's largest magnitude, of running_mean and of the unbiased
        copy from PyTorch's buffers."""
        for handle in self.handles:
            handle.remove()
        result, mean_error, var_error = {}, 0.0, 0.0
        for name, m in self.modules.items():
            for ours, torch_buffer, kind in (
                    (self.mean[name], m.running_mean, "running_mean"),
                    (self.torch_var[name], m.running_var, "running_var")):
                theirs = torch_buffer.detach().double()
                error = float((ours - theirs).abs().max() /
                              max(float(ours.abs().max()), 1e-30))
                if kind == "running_mean":
                    mean_error = max(mean_error, error)
                else:
                    var_error = max(var_error, error)
                if error > 1e-5:
                    raise SystemExit(f"{name}.{kind}: the hooks' statistics "
                                     f"differ from PyTorch's buffer "
                                     f"({error:.2e} of the largest)")
            result[f"{name}.running_mean"] = \
                self.mean[name].numpy().astype(np.float32)
            result[f"{name}.running_var"] = \
                self.var[name].numpy().astype(np.float32)
        return result, mean_error, var_error


def train(model: nn.Module, opt_name: str, data: dict[str, np.ndarray],
          b: int, steps: int, microbatches: int) -> list[float]:
    model.train()
    optimizer = make_optimizer(opt_name, model.parameters())
    optimizer.zero_grad(set_to_none=False)
    losses = []
    for step in range(steps):
        step_losses = []
        for j in range(microbatches):
            loss = model(*microbatch(data, b, step * microbatches + j))
            (loss / microbatches).backward()
            step_losses.append(float(loss.detach()))
        losses.append(float(math.fsum(step_losses) / microbatches))
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
    return losses


def zero_gradients(model: nn.Module, data: dict[str, np.ndarray], b: int,
                   count: int, threshold: float = 1e-12) -> dict:
    """The elements of each parameter whose float64 gradient is at most
    `threshold` times the tensor's largest on all `count` microbatches."""
    twin = copy.deepcopy(model).double()
    small = {}
    for i in range(count):
        twin.zero_grad(set_to_none=True)
        inputs = [t.double() if t.is_floating_point() else t
                  for t in microbatch(data, b, i)]
        twin(*inputs).backward()
        for name, p in twin.named_parameters():
            g = p.grad.abs().flatten()
            below = (g <= threshold * max(float(g.max()), 1e-300)).numpy()
            small[name] = below if name not in small else small[name] & below
    return {name: np.flatnonzero(mask).tolist()
            for name, mask in small.items() if mask.any()}


def write_json(path: str, value) -> None:
    with open(path, "w") as f:
        json.dump(value, f, indent=2)
        f.write("\n")


def run_model(name: str, args: argparse.Namespace) -> None:
    start = time.perf_counter()
    model, b, data = build(name, args.seed, args.steps, args.microbatches)
    folder = os.path.join(args.out, name)
    os.makedirs(folder, exist_ok=True)
    proto = export_onnx(model, data, b, os.path.join(folder, "model.onnx"))
    save_arrays(os.path.join(folder, "inputs"), data)
    initial = state(model)
    stats = statistics(model)
    save_arrays(os.path.join(folder, "initial"), {**initial, **stats})

    # In training mode, batch norm updates its running statistics on every
    # forward pass: keep them as exported.
    buffers = {k: v.detach().clone() for k, v in model.named_buffers()}
    with torch.no_grad():
        first = [float(model(*microbatch(data, b, j)))
                 for j in range(args.microbatches)]
        for k, v in model.named_buffers():
            v.copy_(buffers[k])
    write_json(os.path.join(folder, "first_loss.json"),
               {"loss": first[0], "microbatch_size": b,
                "step1_microbatch_losses": first})

    zeros = zero_gradients(model, data, b, args.steps * args.microbatches)
    write_json(os.path.join(folder, "zero_gradients.json"),
               {"threshold": 1e-12, "elements": zeros})

    print(f"{name}: b={b}, {len(initial)} parameters "
          f"({sum(v.size for v in initial.values())} values), "
          f"{len(proto.graph.node)} ONNX nodes" +
          (f", {len(stats)} running statistics" if stats else ""))
    for opt_name in args.optimizers:
        t0 = time.perf_counter()
        trained = copy.deepcopy(model)
        tracker = OnnxStatistics(trained) if stats else None
        losses = train(trained, opt_name, data, b, args.steps,
                       args.microbatches)
        out = os.path.join(folder, opt_name)
        save_arrays(os.path.join(out, "weights"), state(trained))
        note = ""
        if tracker is not None:
            onnx_stats, mean_error, var_error = tracker.finish()
            save_arrays(os.path.join(out, "statistics"), onnx_stats)
            note = (f"  (vs PyTorch's buffers: running_mean {mean_error:.1e},"
                    f" unbiased running_var {var_error:.1e})")
        write_json(os.path.join(out, "losses.json"), losses)
        config = {"optimizer": opt_name, **OPTIMIZERS[opt_name],
                  # One parameter group: the hyperparameters, weight decay
                  # included, apply to every parameter (biases and
                  # LayerNorm too), as torch.optim does by default.
                  "param_groups": "one group: every parameter",
                  "steps": args.steps, "microbatches": args.microbatches,
                  "microbatch_size": b, "seed": args.seed,
                  "torch": torch.__version__}
        write_json(os.path.join(out, "config.json"), config)
        print(f"  {opt_name:9s} " + " ".join(f"{l:.6f}" for l in losses) +
              f"  ({time.perf_counter() - t0:.2f} s)" + note)
    print(f"  total {time.perf_counter() - start:.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="output folder")
    parser.add_argument("--models", default="mlp,cnn,gpt")
    parser.add_argument("--optimizers", default="sgd,momentum,adamw")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--list-ops", action="store_true",
                        help="print each model's ONNX op histogram and exit")
    args = parser.parse_args()
    args.models = [m for m in args.models.split(",") if m]
    args.optimizers = [o for o in args.optimizers.split(",") if o]
    for m in args.models:
        if m not in MODELS:
            parser.error(f"unknown model '{m}' (known: {', '.join(MODELS)})")
    for o in args.optimizers:
        if o not in OPTIMIZERS:
            parser.error(f"unknown optimizer '{o}' "
                         f"(known: {', '.join(OPTIMIZERS)})")
    if args.steps < 1 or args.microbatches < 1:
        parser.error("--steps and --microbatches must be positive")
    torch.use_deterministic_algorithms(True)

    if args.list_ops:
        outside = {}
        for name in args.models:
            model, b, data = build(name, args.seed, 1, 1)
            bad = print_ops(name, export_onnx(model, data, b, None))
            if bad:
                outside[name] = bad
        for name, ops in outside.items():
            print(f"warning: {name} uses ops outside the supported list: "
                  f"{', '.join(ops)}", file=sys.stderr)
        return 0

    if not args.out:
        parser.error("--out is required (unless --list-ops)")
    os.makedirs(args.out, exist_ok=True)
    for name in args.models:
        run_model(name, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
