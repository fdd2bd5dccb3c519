#!/usr/bin/env python3
"""Writes ONNX models that parse but break the format's rules in ways the
ONNX checker of ONNX 1.12 does not catch (it does not run past opset 17,
and never checks initializer data against shapes), for the importer's
error tests (test/Import/ONNX/errors/malformed-graphs.test).

    make_malformed_onnx.py OUTDIR

writes OUTDIR/CASE.onnx for each case:

  written-twice   two nodes write 'a' (opset 18)
  input-twice     two graph inputs are called 'x' (opset 18)
  shadows-input   a node writes 'x', a graph input (opset 18)
  short-data      a float initializer holds 100 bytes, its shape needs 1024
                  (opset 13, where the checker runs)
  no-data         a float[1048576,1048576] initializer holds no data
  opset-22        opset 22 of the default domain
  two-opsets      opsets 13 and 17 of the default domain
  range-huge      Range(0, 2^34, 1): 17 G elements to fold into a constant
  range-inf       Range(0, inf, 1)
  synthetic-name  not malformed: an unnamed MatMul (named MatMul_0 for
                  diagnostics) before a Relu the model calls MatMul_0

Uses only onnx.helper of ONNX 1.12 (Debian's python3-onnx).
"""

import os
import sys

import onnx
from onnx import TensorProto, helper


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def raw_tensor(name, shape, data):
    """A float initializer with `data` as its raw bytes (none: no data),
    whatever its shape needs: onnx.helper would refuse it."""
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(shape)
    if data is not None:
        t.raw_data = data
    return t


def model(nodes, inputs, outputs, opset=18, initializers=(), opsets=None):
    graph = helper.make_graph(nodes, "malformed", inputs, outputs,
                              initializer=list(initializers))
    imports = [helper.make_opsetid("", v) for v in (opsets or [opset])]
    return helper.make_model(graph, opset_imports=imports, ir_version=8)


def range_model(limit, dtype=TensorProto.FLOAT):
    consts = [helper.make_tensor(n, dtype, [], [v])
              for n, v in (("start", 0), ("limit", limit), ("delta", 1))]
    nodes = [helper.make_node("Range", ["start", "limit", "delta"], ["r"],
                              name="range"),
             helper.make_node("ReduceSum", ["r"], ["y"], name="sum",
                              keepdims=0)]
    output = helper.make_tensor_value_info("y", dtype, [])
    return model(nodes, [], [output], opset=13, initializers=consts)


def main(argv):
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    relu = lambda i, o, n: helper.make_node("Relu", [i], [o], name=n)
    cases = {
        "written-twice": model(
            [relu("x", "a", "n1"), relu("x", "a", "n2"), relu("a", "y", "n3")],
            [tensor("x", [2])], [tensor("y", [2])]),
        "input-twice": model(
            [relu("x", "y", "n1")], [tensor("x", [2]), tensor("x", [2])],
            [tensor("y", [2])]),
        "shadows-input": model(
            [relu("x", "x", "n1"), relu("x", "y", "n2")],
            [tensor("x", [2])], [tensor("y", [2])]),
        "short-data": model(
            [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
            [tensor("x", [1, 16])], [tensor("y", [1, 16])], opset=13,
            initializers=[raw_tensor("w", [16, 16], b"\0" * 100)]),
        "no-data": model(
            [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
            [tensor("x", [1, 1048576])], [tensor("y", [1, 1048576])],
            initializers=[raw_tensor("w", [1048576, 1048576], None)]),
        "opset-22": model([relu("x", "y", "n1")], [tensor("x", [2])],
                          [tensor("y", [2])], opset=22),
        "two-opsets": model([relu("x", "y", "n1")], [tensor("x", [2])],
                            [tensor("y", [2])], opsets=[13, 17]),
        "range-huge": range_model(2 ** 34, TensorProto.INT64),
        "range-inf": range_model(float("inf")),
        "synthetic-name": model(
            [helper.make_node("MatMul", ["x", "x"], ["a"]),
             relu("a", "y", "MatMul_0")],
            [tensor("x", [2, 2])], [tensor("y", [2, 2])], opset=13),
    }
    for name, m in cases.items():
        onnx.save(m, os.path.join(out, name + ".onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
