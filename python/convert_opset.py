#!/usr/bin/env python3
"""Converts an ONNX model to another opset with onnx's version_converter.

Needs a current onnx from PyPI (the project's .venv has onnx 1.23); Debian's
onnx 1.12 stops at opset 17:

    .venv/bin/python python/convert_opset.py IN.onnx OUT.onnx --opset 21
"""

from __future__ import annotations

import argparse
import sys

import onnx
from onnx import version_converter


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--opset", type=int, required=True)
    args = parser.parse_args()
    model = onnx.load(args.input)
    converted = version_converter.convert_version(model, args.opset)
    onnx.checker.check_model(converted)
    onnx.save(converted, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
