#!/usr/bin/env python3
"""Exports real models, as a new user would, for the CPU target's tests and
benchmarks: torchvision's networks and PyTorch's own transformer encoder,
with random weights, batch 2, opset 17.

    /usr/bin/python3 python/real_models.py --out DIR [--train] [MODEL...]

Models:
  resnet18, mobilenet_v2, efficientnet_b0, densenet121, vit_b_16
            torchvision (python3-torchvision), 224x224 images. Batch-norm
            statistics are calibrated on random batches first, so that the
            outputs are not vanishingly small.
  transformer  nn.TransformerEncoder: 2 layers, d 128, 4 heads, feed-forward
            512, sequence 64.

Inference exports map `image` (or `x`) to `logits` (or `y`). Training
exports (--train) add integer `labels` and return the mean cross-entropy
`loss`, with batch norm and dropout in training mode; dropout is replaced
by the identity, since pipe does not train through dropout yet.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

VISION = ["resnet18", "mobilenet_v2", "efficientnet_b0", "densenet121",
          "vit_b_16"]
MODELS = VISION + ["transformer"]
BATCH = 2


class Encoder(nn.Module):
    """PyTorch's transformer encoder with a linear head."""

    def __init__(self, dropout: float = 0.1) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=128, nhead=4,
                                           dim_feedforward=512,
                                           dropout=dropout, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2,
                                             enable_nested_tensor=False)
        self.head = nn.Linear(128, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x).mean(dim=1))


class WithLoss(nn.Module):
    """`model`'s mean cross-entropy against `labels`."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.model(x), labels)


def input_shape(name: str) -> list[int]:
    return [BATCH, 64, 128] if name == "transformer" else [BATCH, 3, 224, 224]


def classes(name: str) -> int:
    return 10 if name == "transformer" else 1000


def without_dropout(model: nn.Module) -> nn.Module:
    for parent in model.modules():
        for child_name, child in parent.named_children():
            if isinstance(child, nn.Dropout):
                setattr(parent, child_name, nn.Identity())
    return model


def calibrate(model: nn.Module, name: str, batches: int = 4) -> None:
    """Sets batch-norm running statistics from random batches (a cumulative
    average), as a trained network's would be set from data."""
    norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    if not norms:
        return
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(input_shape(name)))
    model.eval()


def build(name: str, seed: int = 0, dropout: bool = True) -> nn.Module:
    """The model `name` with seeded random weights and calibrated batch
    norm, in eval mode; without `dropout`, its dropout layers are the
    identity (attention's included)."""
    torch.manual_seed(seed)
    if name == "transformer":
        model = Encoder(0.1 if dropout else 0.0)
    elif name in VISION:
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        if name == "vit_b_16":
            # torchvision zeroes the classifier, whose logits would all be 0.
            nn.init.normal_(model.heads.head.weight, std=0.02)
    else:
        raise SystemExit(f"unknown model '{name}'")
    calibrate(model, name)
    if not dropout:
        without_dropout(model)
    return model.eval()


def export(name: str, out: str, train: bool = False, seed: int = 0) -> str:
    """Exports `name` into folder `out`; returns the file's path."""
    model = build(name, seed, dropout=not train)
    x = torch.randn(input_shape(name))
    path = os.path.join(out, f"{name}{'-train' if train else ''}.onnx")
    input_name = "x" if name == "transformer" else "image"
    if train:
        module = WithLoss(model).train()
        labels = torch.randint(0, classes(name), (BATCH,))
        torch.onnx.export(module, (x, labels), path,
                          input_names=[input_name, "labels"],
                          output_names=["loss"], opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False)
    else:
        torch.onnx.export(model, (x,), path, input_names=[input_name],
                          output_names=["logits"], opset_version=17)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=MODELS,
                        help=f"models to export (default: all of {MODELS})")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--train", action="store_true",
                        help="export the training graph with its loss")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    print("\n".join(export(name, args.out, args.train)
                    for name in args.models))
    return 0


if __name__ == "__main__":
    sys.exit(main())
