#!/usr/bin/env python3
"""Checks pipelines of stages against the single-stage program.

    check_pipeline.py PIPE_OPT MODEL.onnx INPUTS CLUSTER WORK CONFIG...
        [--steps 5] [--rtol 1e-5] [--inference [--random K --int-high N]]

Each CONFIG is comma-separated `key=value`s: `S` (stages, forced with
--stages), `M` (microbatches), `schedule` (gpipe, 1f1b), `recompute`
(none, selective, full) and `optimizer` (momentum: SGD with momentum 0.9;
adamw). For each, compiles MODEL for the CPUs of CLUSTER
(`--target=cpu`) as a pipeline and as one stage with the same M and
optimizer, trains both for --steps steps on INPUTS, and checks that every
step's loss and every weight --save-onnx writes agree within rtol
(relative to the largest magnitude of the tensor). Each pipeline's stages
must also stash what the plan predicts, within 5%: per microbatch as
compiled, and at most as they run (`run --trace`). With --inference,
compiles inference programs instead (S only) and checks every output;
--random K first writes K microbatches of random inputs into INPUTS
(floats from a normal distribution, integers in [0, N)).

Prints one line starting `pipeline ok:` and exits 0, or says what differs
and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

OPTIMIZERS = {
    "momentum": ["--optimizer", "sgd", "--lr", "0.05", "--momentum", "0.9"],
    "adamw": ["--optimizer", "adamw", "--lr", "1e-3", "--weight-decay",
              "0.01"],
}
STASH_RTOL = 0.05
DEFAULTS = {"M": "4", "schedule": "1f1b", "recompute": "none",
            "optimizer": "adamw"}


def run(args: list[str]) -> str:
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(f"check_pipeline.py: failed: {' '.join(args)}")
    return result.stdout


def parse(config: str) -> dict[str, str]:
    values = dict(DEFAULTS)
    for item in config.split(","):
        key, _, value = item.partition("=")
        if key not in ("S", "M", "schedule", "recompute", "optimizer"):
            raise SystemExit(f"check_pipeline.py: unknown key '{key}'")
        values[key] = value
    if "S" not in values:
        raise SystemExit(f"check_pipeline.py: '{config}' gives no S")
    return values


def losses(metrics: str) -> list[float]:
    with open(metrics) as f:
        return [json.loads(line)["loss"] for line in f]


def weights(path: str) -> dict[str, np.ndarray]:
    return {t.name: numpy_helper.to_array(t).astype(np.float64)
            for t in onnx.load(path).graph.initializer}


def train(a, name: str, flags: list[str],
          trace: bool = False) -> tuple[list[float], dict]:
    out = os.path.join(a.work, name)
    run([a.pipe_opt, a.model, "--train", "--emit=binaries", "-o", out]
        + flags)
    metrics, saved = out + ".jsonl", out + ".onnx"
    run([os.path.join(out, "run"), "--steps", str(a.steps), "--inputs",
         a.inputs, "--metrics", metrics, "--save-onnx", saved]
        + (["--trace", out + ".trace.json"] if trace else []))
    return losses(metrics), weights(saved)


def stash_error(out: str) -> str | None:
    """Compares each stage's stash with the plan's prediction: the stash
    the compiled stage keeps per microbatch (plan.json) and the most the
    running stage held at once (the trace's counters) must be within
    STASH_RTOL of the planner's stash per microbatch and of that times the
    microbatches in flight."""
    with open(os.path.join(out, "plan.json")) as f:
        plan = json.load(f)
    if plan["stash_pricing"] != "derived":
        return f"the plan's stash is priced {plan['stash_pricing']}"
    with open(out + ".trace.json") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    held: dict[int, int] = {}
    for event in events:
        name = event.get("name", "")
        if event.get("ph") == "C" and name.startswith("stash of stage "):
            stage = int(name.rsplit(" ", 1)[1])
            held[stage] = max(held.get(stage, 0), event["args"]["bytes"])
    for stage in plan["stages"]:
        memory = stage["memory"]
        predicted = memory["stash_per_microbatch"]
        pairs = [("stash per microbatch", stage["stash_bytes_per_microbatch"],
                  predicted),
                 ("most stash held", held.get(stage["index"], 0),
                  predicted * memory["microbatches_in_flight"])]
        for what, got, want in pairs:
            if abs(got - want) > STASH_RTOL * want:
                return (f"stage {stage['index']}: {what} {got} bytes, the "
                        f"plan predicts {want}")
    return None


def model_name(path: str) -> str:
    """The model's name: its file's, or its folder's for a model.onnx."""
    base = os.path.basename(path)
    if base == "model.onnx":
        return os.path.basename(os.path.dirname(os.path.abspath(path)))
    return base[:-5] if base.endswith(".onnx") else base


def relative(a: np.ndarray, b: np.ndarray) -> float:
    scale = max(float(np.max(np.abs(a))), 1e-30)
    return float(np.max(np.abs(a - b))) / scale if a.size else 0.0


def check_training(a) -> int:
    references: dict[tuple[str, str], tuple[list[float], dict]] = {}
    worst_loss = worst_weight = 0.0
    for config in a.configs:
        c = parse(config)
        flags = ["--microbatches", c["M"]] + OPTIMIZERS[c["optimizer"]]
        key = (c["M"], c["optimizer"])
        if key not in references:
            references[key] = train(a, f"one-M{c['M']}-{c['optimizer']}",
                                    flags)
        ref_losses, ref_weights = references[key]
        tag = (f"S{c['S']}-M{c['M']}-{c['schedule']}-{c['recompute']}-"
               f"{c['optimizer']}")
        got_losses, got_weights = train(
            a, tag, flags + ["--cluster", a.cluster, "--target=cpu",
                             "--stages", c["S"], "--schedule", c["schedule"],
                             "--recompute", c["recompute"]], trace=True)
        if error := stash_error(os.path.join(a.work, tag)):
            print(f"{config}: {error}")
            return 1
        if len(got_losses) != len(ref_losses):
            print(f"{config}: {len(got_losses)} steps, expected "
                  f"{len(ref_losses)}")
            return 1
        for step, (got, ref) in enumerate(zip(got_losses, ref_losses), 1):
            error = abs(got - ref) / max(abs(ref), 1e-30)
            worst_loss = max(worst_loss, error)
            if error > a.rtol:
                print(f"{config}: step {step} loss {got}, one stage {ref}")
                return 1
        if set(got_weights) != set(ref_weights):
            print(f"{config}: saved initializers differ: "
                  f"{sorted(set(got_weights) ^ set(ref_weights))}")
            return 1
        for name, ref in ref_weights.items():
            error = relative(ref, got_weights[name])
            worst_weight = max(worst_weight, error)
            if error > a.rtol:
                print(f"{config}: weight '{name}' differs by {error:.2e} "
                      f"(relative)")
                return 1
    print(f"pipeline ok: {model_name(a.model)}, {len(a.configs)} "
          f"configurations, {a.steps} steps, losses within {worst_loss:.1e}, "
          f"weights within {worst_weight:.1e}")
    return 0


TYPES = {1: np.float32, 11: np.float64, 7: np.int64, 6: np.int32}


def write_random_inputs(a) -> None:
    """K microbatches of every graph input of the model, stacked."""
    model = onnx.load(a.model)
    initializers = {t.name for t in model.graph.initializer}
    rng = np.random.default_rng(0)
    os.makedirs(a.inputs, exist_ok=True)
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        shape = [d.dim_value for d in tensor.shape.dim]
        shape[0] *= a.random
        dtype = TYPES[tensor.elem_type]
        if dtype in (np.float32, np.float64):
            array = rng.standard_normal(shape).astype(dtype)
        else:
            array = rng.integers(0, a.int_high, shape, dtype=dtype)
        np.save(os.path.join(a.inputs, f"{value.name}.npy"), array)


def check_inference(a) -> int:
    if a.random:
        write_random_inputs(a)
    def infer(name: str, flags: list[str]) -> dict[str, np.ndarray]:
        out = os.path.join(a.work, name)
        run([a.pipe_opt, a.model, "--emit=binaries", "-o", out] + flags)
        results = out + "-outputs"
        run([os.path.join(out, "run"), "--inputs", a.inputs, "--outputs",
             results])
        return {f[:-4]: np.load(os.path.join(results, f))
                for f in sorted(os.listdir(results))}

    reference = infer("one", [])
    worst = 0.0
    for config in a.configs:
        c = parse(config)
        got = infer(f"S{c['S']}", ["--cluster", a.cluster, "--target=cpu",
                                   "--stages", c["S"]])
        if set(got) != set(reference):
            print(f"{config}: outputs {sorted(got)}, expected "
                  f"{sorted(reference)}")
            return 1
        for name, ref in reference.items():
            if got[name].shape != ref.shape:
                print(f"{config}: output '{name}' has shape "
                      f"{got[name].shape}, expected {ref.shape}")
                return 1
            error = relative(ref.astype(np.float64),
                             got[name].astype(np.float64))
            worst = max(worst, error)
            if error > a.rtol:
                print(f"{config}: output '{name}' differs by {error:.2e}")
                return 1
    print(f"pipeline ok: {model_name(a.model)}, {len(a.configs)} "
          f"inference pipelines, outputs within {worst:.1e}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="check_pipeline.py")
    parser.add_argument("pipe_opt")
    parser.add_argument("model")
    parser.add_argument("inputs")
    parser.add_argument("cluster")
    parser.add_argument("work")
    parser.add_argument("configs", nargs="+")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--inference", action="store_true")
    parser.add_argument("--random", type=int, default=0)
    parser.add_argument("--int-high", type=int, default=10)
    a = parser.parse_args()
    os.makedirs(a.work, exist_ok=True)
    return check_inference(a) if a.inference else check_training(a)


if __name__ == "__main__":
    sys.exit(main())
