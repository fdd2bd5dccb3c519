#!/usr/bin/env python3
"""Writes ONNX models whose initializer lives in external data, for the
importer's error tests (test/Import/ONNX/errors/external-data-*.onnxtxt).

    make_bad_onnx.py OUTDIR CASE [--opset N]

writes OUTDIR/CASE/model.onnx and the side files it needs. Cases that point
outside the model's folder use OUTDIR/outside.bin, which the script also
writes, so that the file they name exists and only the path is at fault.

The model is `y = Add(x, W)` with x: float[2,3] and the float initializer
W: float[2,3] (24 bytes) stored externally. Cases:

  good        W in CASE/weights.bin (offset 8, length 24, after 8 junk bytes)
  missing     W in CASE/weights.bin, which does not exist
  absolute    W at the absolute location /etc/passwd
  dotdot      W at ../outside.bin (exists, but outside the model's folder)
  symlink     W at link.bin, a symbolic link in the folder to ../outside.bin
  overrun     W at weights.bin offset 16 length 24, but the file has 32 bytes
  pastend     W at weights.bin offset 64, but the file has 32 bytes
  nolocation  W stored externally with offset/length but no location
  badoffset   W at weights.bin with offset "abc" (not a number)

Uses only onnx.helper / onnx.numpy_helper of ONNX 1.12 (Debian's python3-onnx);
external_data entries are written by hand.
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CASES = ("good", "missing", "absolute", "dotdot", "symlink", "overrun",
         "pastend", "nolocation", "badoffset")

WEIGHTS = np.arange(6, dtype=np.float32).reshape(2, 3)


def external_tensor(name, entries):
    """A float[2,3] TensorProto whose data is external, with the given
    (key, value) external_data entries in order."""
    tensor = numpy_helper.from_array(WEIGHTS, name)
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in entries:
        entry = tensor.external_data.add()
        entry.key = key
        entry.value = str(value)
    return tensor


def make_model(tensor, opset):
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "W"], ["y"], name="y")],
        "external",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        initializer=[tensor],
    )
    return helper.make_model(graph, ir_version=8,
                             opset_imports=[helper.make_opsetid("", opset)])


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    parser.add_argument("case", choices=CASES)
    parser.add_argument("--opset", type=int, default=17)
    args = parser.parse_args(argv)

    folder = os.path.join(args.outdir, args.case)
    os.makedirs(folder, exist_ok=True)
    payload = WEIGHTS.tobytes()  # 24 bytes
    write(os.path.join(args.outdir, "outside.bin"), payload)

    weights = os.path.join(folder, "weights.bin")
    case = args.case
    if case == "good":
        write(weights, b"JUNKJUNK" + payload)
        entries = [("location", "weights.bin"), ("offset", 8), ("length", 24)]
    elif case == "missing":
        entries = [("location", "weights.bin")]
    elif case == "absolute":
        entries = [("location", "/etc/passwd"), ("offset", 0), ("length", 24)]
    elif case == "dotdot":
        entries = [("location", "../outside.bin")]
    elif case == "symlink":
        link = os.path.join(folder, "link.bin")
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.join("..", "outside.bin"), link)
        entries = [("location", "link.bin")]
    elif case == "overrun":
        write(weights, b"\0" * 32)
        entries = [("location", "weights.bin"), ("offset", 16), ("length", 24)]
    elif case == "pastend":
        write(weights, b"\0" * 32)
        entries = [("location", "weights.bin"), ("offset", 64)]
    elif case == "nolocation":
        entries = [("offset", 0), ("length", 24)]
    elif case == "badoffset":
        write(weights, payload)
        entries = [("location", "weights.bin"), ("offset", "abc")]
    else:
        raise AssertionError(case)

    model = make_model(external_tensor("W", entries), args.opset)
    write(os.path.join(folder, "model.onnx"), model.SerializeToString())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
