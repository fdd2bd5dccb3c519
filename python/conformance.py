#!/usr/bin/env python3
"""ONNX backend tests through the CPU target.

For every case of Debian's libonnx-testdata (model.onnx plus
test_data_set_*/{input,output}_N.pb), compiles the model with
`pipe-opt --emit=binaries`, runs OUT/run on each data set and compares the
outputs with ONNX's tolerances (rtol 1e-3, atol 1e-7, as onnx.backend.test).

A case is *selected* when pipe-opt imports it: an import error (an
unsupported op, a shape input that is not a constant, ...) leaves it out,
and the report counts those by reason. A selected case that fails is a
failure unless the expected-failures file lists it with a reason; a listed
case that passes is reported too, so the list cannot go stale.

    /usr/bin/python3 python/conformance.py [--suites node,pytorch]
        [--cases GLOB] [--jobs N] [--expected-failures FILE]
        [--pipe-opt PATH] [--work DIR]

Suites: `node` (ONNX's operator tests, data/node; a case is named
test_...), `pytorch` (PyTorch's exported modules and operators, most at
opset 6: data/pytorch-converted and data/pytorch-operator; a case is named
pytorch-converted/test_...).

Prints `N passed, N failed` last; exits non-zero on any unexpected result.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import fnmatch
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = "/usr/share/libonnx-testdata/data"
SUITES = {"node": ["node"],
          "pytorch": ["pytorch-converted", "pytorch-operator"]}


def case_dir(case: str) -> str:
    """Node cases are named bare, others by their folder."""
    return os.path.join(
        DATA, case if "/" in case else os.path.join("node", case))


def load_expected(path: str) -> dict[str, str]:
    expected = {}
    if not path or not os.path.exists(path):
        return expected
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, _, reason = line.partition(":")
            if not reason.strip():
                raise SystemExit(f"{path}: '{name}' has no reason")
            expected[name.strip()] = reason.strip()
    return expected


def run_case(case: str, pipe_opt: str, work: str) -> tuple[str, str, str]:
    """Returns (case, status, detail); status is pass, fail or skip."""
    model_path = os.path.join(case_dir(case), "model.onnx")
    out = os.path.join(work, case.replace("/", "_"))
    shutil.rmtree(out, ignore_errors=True)
    proc = subprocess.run([pipe_opt, model_path, "--emit=binaries", "-o", out],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        message = proc.stderr.strip().splitlines()
        first = message[0] if message else f"exit {proc.returncode}"
        if "error:" in first and ("unsupported ONNX op" in first or
                                  "must be a constant" in first or
                                  "must be constants" in first or
                                  "unsupported element type" in first or
                                  "unsupported target type" in first or
                                  "is not a tensor" in first or
                                  "not supported" in first):
            return case, "skip", first.split("error: ", 1)[-1]
        return case, "fail", "compile: " + "\n".join(message[-20:])
    model = onnx.load(model_path)
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    outputs = [o.name for o in model.graph.output]
    sets = sorted(glob.glob(os.path.join(case_dir(case), "test_data_set_*")))
    for data_set in sets:
        in_dir = os.path.join(out, "in", os.path.basename(data_set))
        out_dir = os.path.join(out, "out", os.path.basename(data_set))
        os.makedirs(in_dir, exist_ok=True)
        for i, name in enumerate(inputs):
            tensor = onnx.TensorProto()
            with open(os.path.join(data_set, f"input_{i}.pb"), "rb") as f:
                tensor.ParseFromString(f.read())
            np.save(os.path.join(in_dir, f"{name}.npy"),
                    numpy_helper.to_array(tensor))
        proc = subprocess.run([os.path.join(out, "run"), "--inputs", in_dir,
                               "--outputs", out_dir],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return case, "fail", "run: " + proc.stderr.strip()[-2000:]
        for i, name in enumerate(outputs):
            tensor = onnx.TensorProto()
            with open(os.path.join(data_set, f"output_{i}.pb"), "rb") as f:
                tensor.ParseFromString(f.read())
            want = numpy_helper.to_array(tensor)
            got = np.load(os.path.join(out_dir, f"{name}.npy"))
            if got.shape != want.shape or got.dtype != want.dtype:
                return case, "fail", (f"output '{name}': got {got.dtype}"
                                      f"{got.shape}, want {want.dtype}"
                                      f"{want.shape}")
            try:
                if want.dtype.kind in "fc":
                    np.testing.assert_allclose(got, want, rtol=1e-3,
                                               atol=1e-7)
                else:
                    np.testing.assert_array_equal(got, want)
            except AssertionError as error:
                return case, "fail", f"output '{name}': {str(error)[:800]}"
    shutil.rmtree(out, ignore_errors=True)
    return case, "pass", ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", default="node",
                        help="comma-separated: " + ", ".join(SUITES))
    parser.add_argument("--cases", default="*", help="glob over case names")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--expected-failures", default=os.path.join(
        ROOT, "integration_test", "Conformance", "expected-failures.txt"))
    parser.add_argument("--pipe-opt",
                        default=os.path.join(ROOT, "build", "bin", "pipe-opt"))
    parser.add_argument("--work", default="")
    args = parser.parse_args()

    expected = load_expected(args.expected_failures)
    cases = []
    for suite in args.suites.split(","):
        if suite not in SUITES:
            raise SystemExit(f"unknown suite '{suite}'")
        for folder in SUITES[suite]:
            for name in os.listdir(os.path.join(DATA, folder)):
                case = name if folder == "node" else f"{folder}/{name}"
                if fnmatch.fnmatch(case, args.cases):
                    cases.append(case)
    cases.sort()
    work = args.work or tempfile.mkdtemp(prefix="pipe-conformance-")
    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for result in pool.map(lambda c: run_case(c, args.pipe_opt, work),
                               cases):
            results.append(result)

    skipped = collections.Counter()
    passed = failed = expected_failed = 0
    unexpected = []
    for case, status, detail in results:
        if status == "skip":
            reason = re.sub(r"'[^']*'", "'...'", detail)
            skipped[reason] += 1
        elif status == "pass":
            passed += 1
            if case in expected:
                unexpected.append(f"UNEXPECTED PASS {case} (listed: "
                                  f"{expected[case]})")
        elif case in expected:
            expected_failed += 1
        else:
            failed += 1
            unexpected.append(f"FAIL {case}: {detail}")
    for line in unexpected:
        print(line)
    selected = passed + failed + expected_failed
    print(f"\n{len(cases)} cases; {selected} selected (imported), "
          f"{sum(skipped.values())} not selected:")
    for reason, count in skipped.most_common():
        print(f"  {count:4d}  {reason}")
    print(f"expected failures: {expected_failed}")
    print(f"{passed} passed, {failed + sum(1 for u in unexpected if u.startswith('UNEXPECTED'))} failed")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
