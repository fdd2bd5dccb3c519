#!/usr/bin/env python3
"""Exports the reference models of the test suite to ONNX with PyTorch.

Run with Debian's Python (/usr/bin/python3), which has python3-torch 1.13 and
python3-torchvision:

    /usr/bin/python3 python/export_models.py --out DIR [--models mlp,cnn,...]

Models (all small and with fixed seeds, so exports are reproducible):
  mlp       Linear-ReLU-Linear-Tanh-Linear, forward only.
  cnn       Conv-BN-ReLU (non-default batch-norm statistics), a residual
            block, max-pool, linear head.
  gpt       token and position embeddings, causal nn.MultiheadAttention,
            LayerNorm, GELU MLP, cross-entropy loss; exported in training
            mode, so its single output is the loss.
  gpt-eval  the same GPT exported in inference mode (no dropout).
  resnet18  torchvision's ResNet-18 (random weights), inference.
  gpt2-small  a GPT-2-small-sized model (124M parameters) for the import
            benchmark; not exported unless asked for.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(torch.tanh(self.fc2(F.relu(self.fc1(x)))))


class ResidualCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(8 * 4 * 4, 10)
        # Running statistics and affine terms away from their defaults, so
        # that inference (where pipe folds the batch norm into the
        # convolution before it) tests every term.
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.bn(self.stem(x)))
        h = F.relu(h + self.conv2(F.relu(self.conv1(h))))
        h = self.pool(h)
        return self.head(torch.flatten(h, 1))


class Block(nn.Module):
    def __init__(self, d: int, heads: int, seq: int, dropout: float) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, dropout=dropout,
                                          batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                 nn.Linear(4 * d, d), nn.Dropout(dropout))
        self.register_buffer(
            "mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=self.mask, need_weights=False)
        x = x + a
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab: int = 64, d: int = 32, heads: int = 4,
                 layers: int = 2, seq: int = 16, dropout: float = 0.1,
                 tie_weights: bool = False) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.blocks = nn.Sequential(
            *[Block(d, heads, seq, dropout) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=not tie_weights)
        if tie_weights:
            # GPT-2 shares the output projection with the token embedding.
            self.head.weight = self.tok.weight
        self.register_buffer("positions", torch.arange(seq))

    def forward(self, tokens: torch.Tensor,
                targets: torch.Tensor) -> torch.Tensor:
        x = self.tok(tokens) + self.pos(self.positions)
        logits = self.head(self.ln(self.blocks(x)))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               targets.reshape(-1))


def export(model: nn.Module, args: tuple, names: list[str], outputs: list[str],
           path: str, opset: int, training: bool) -> None:
    mode = (torch.onnx.TrainingMode.TRAINING if training
            else torch.onnx.TrainingMode.EVAL)
    model.train(training)
    torch.onnx.export(model, args, path, input_names=names,
                      output_names=outputs, opset_version=opset,
                      training=mode, do_constant_folding=False)


def export_model(name: str, out: str, opset: int) -> str:
    torch.manual_seed(0)
    path = os.path.join(out, f"{name}.onnx")
    if name == "mlp":
        export(MLP(), (torch.randn(8, 16),), ["x"], ["y"], path, opset, False)
    elif name == "cnn":
        export(ResidualCNN(), (torch.randn(2, 3, 8, 8),), ["image"],
               ["logits"], path, opset, False)
    elif name == "gpt":
        tokens = torch.randint(0, 64, (2, 16))
        targets = torch.randint(0, 64, (2, 16))
        export(GPT(), (tokens, targets), ["tokens", "targets"], ["loss"],
               path, opset, True)
    elif name == "gpt-eval":
        # The same GPT in inference mode: dropout off, so any runtime
        # computes the same loss.
        tokens = torch.randint(0, 64, (2, 16))
        targets = torch.randint(0, 64, (2, 16))
        export(GPT(), (tokens, targets), ["tokens", "targets"], ["loss"],
               path, opset, False)
    elif name == "resnet18":
        import torchvision
        export(torchvision.models.resnet18(weights=None),
               (torch.randn(1, 3, 224, 224),), ["image"], ["logits"], path,
               opset, False)
    elif name == "gpt2-small":
        # GPT-2 small: 12 layers, d=768, 12 heads, vocab 50257, tied output
        # projection, context 1024 (here 128 to keep the export quick):
        # about 124M parameters.
        model = GPT(vocab=50257, d=768, heads=12, layers=12, seq=128,
                    dropout=0.1, tie_weights=True)
        tokens = torch.randint(0, 50257, (1, 128))
        export(model, (tokens, tokens.clone()), ["tokens", "targets"],
               ["loss"], path, opset, True)
    else:
        raise SystemExit(f"unknown model '{name}'")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--models", default="mlp,cnn,gpt,resnet18",
                        help="comma-separated model names")
    parser.add_argument("--opset", type=int, default=17)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.models.split(","):
        print(export_model(name, args.out, args.opset))
    return 0


if __name__ == "__main__":
    sys.exit(main())
