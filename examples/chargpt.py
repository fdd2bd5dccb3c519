#!/usr/bin/env python3
"""Exports the bundled example: a character-level GPT and its training data.

    /usr/bin/python3 examples/chargpt.py --text examples/tiny-text.txt --out DIR

Writes DIR/model.onnx, the GPT of python/train_reference.py (token and
position embeddings, causal self-attention blocks, LayerNorm, a linear
head, next-character cross-entropy) over the text's characters, exported
for training at a microbatch of --batch sequences of --seq characters; and
DIR/inputs/{tokens,labels}.npy, every --seq-character window of the text
and the same window shifted by one character, for `OUT/run --inputs`.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
from train_reference import GPT, export_onnx  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    with open(args.text, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    ids = np.array([index[c] for c in text], dtype=np.int64)
    # Windows of seq + 1 characters, half a window apart.
    step = args.seq // 2
    starts = np.arange(0, len(ids) - args.seq - 1, step)
    windows = np.stack([ids[s:s + args.seq + 1] for s in starts])
    # Whole microbatches only.
    rows = len(windows) // args.batch * args.batch
    rng = np.random.default_rng(args.seed)
    windows = windows[rng.permutation(len(windows))[:rows]]
    data = {"tokens": windows[:, :-1].copy(), "labels": windows[:, 1:].copy()}

    torch.manual_seed(args.seed)
    model = GPT(vocab=len(chars), d=args.width, heads=4, layers=args.layers,
                seq=args.seq)
    os.makedirs(os.path.join(args.out, "inputs"), exist_ok=True)
    export_onnx(model, data, args.batch, os.path.join(args.out, "model.onnx"))
    for name, array in data.items():
        np.save(os.path.join(args.out, "inputs", f"{name}.npy"), array)
    with open(os.path.join(args.out, "vocabulary.txt"), "w",
              encoding="utf-8") as f:
        f.write("".join(chars))
    print(f"chargpt: {len(chars)} characters, {rows} sequences of "
          f"{args.seq} ({rows // args.batch} microbatches of {args.batch}), "
          f"{sum(p.numel() for p in model.parameters())} parameters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
