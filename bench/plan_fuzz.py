#!/usr/bin/env python3
"""Random option sets and hand plans against the planner's invariants.

For a while (--seconds), picks a model (GPT- and ResNet-shaped IR from
python/shaped_models.py), a cluster of test/Plan/Inputs or
integration_test/Plan/Inputs, a schedule, M and
sometimes --recompute, --optimizer, --precision, --stages and
--plan-exact-layers; plans it with a timeline, and checks:
  - pipe-opt exits 0, or 1 with one error line and no output folder;
  - plan.json passes `python/plan_checks.py plan`, the trace
    `plan_checks.py trace`;
  - three random hand plans (--cut-after and --device-order) under the same
    options are never below a proven automatic plan (search_objective_ms
    when `exact`, predicted_iteration_ms when `iteration_exact`), nor
    faster than its iteration_gap_bound allows.
Prints the runs and every violation; exits 1 if there is one.

Not a test (it runs for minutes, and its cases are random): run it after
changing the planner, and record what it found in the commit.

    /usr/bin/python3 bench/plan_fuzz.py [--pipe-opt build/bin/pipe-opt]
        [--seed 1] [--seconds 300]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"
CLUSTERS = ["mixed.json", "eight-devices.json", "two-gpus.json", "no-kind.json",
            "four-mixed-hosts.json"]


def plan(pipe_opt, model, args, out, trace=None):
    shutil.rmtree(out, ignore_errors=True)
    extra = ["--timeline", trace] if trace else []
    return subprocess.run([pipe_opt, model, "--emit=plan", "-o", out] + args + extra,
                          capture_output=True, text=True, timeout=300)


def checks(*args):
    return subprocess.run([PYTHON, os.path.join(ROOT, "python", "plan_checks.py")] +
                          list(args), capture_output=True, text=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipe-opt", default=os.path.join(ROOT, "build", "bin", "pipe-opt"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=300)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="plan_fuzz-")
    models = []
    for name, shape in [("gpt4", ["gpt", "--layers", "4"]), ("gpt6", ["gpt", "--layers", "6"]),
                        ("resnet50", ["resnet", "--blocks", "3,4,6,3"])]:
        path = os.path.join(work, name + ".mlir")
        subprocess.run([PYTHON, os.path.join(ROOT, "python", "shaped_models.py")] + shape +
                       ["--out", path], check=True)
        models.append(path)
    clusters = [path for c in CLUSTERS
                for path in (os.path.join(ROOT, "test", "Plan", "Inputs", c),
                             os.path.join(ROOT, "integration_test", "Plan",
                                          "Inputs", c))
                if os.path.exists(path)]
    auto_dir, hand_dir = os.path.join(work, "auto"), os.path.join(work, "hand")
    trace = os.path.join(work, "trace.json")
    bad, runs, compared = [], 0, 0
    start = time.time()
    try:
        while time.time() - start < args.seconds:
            model, cluster = rng.choice(models), rng.choice(clusters)
            with open(cluster) as f:
                devices = [d["name"] for d in json.load(f)["devices"]]
            m = rng.choice([1, 2, 5, 16, 64])
            options = ["--cluster", cluster, "--microbatches", str(m)]
            training = rng.random() < 0.7
            if training:
                options += ["--train", "--schedule=" + rng.choice(["1f1b", "gpipe"])]
                if rng.random() < 0.3:
                    options.append("--recompute=" + rng.choice(["none", "selective", "full"]))
                if rng.random() < 0.3:
                    options.append("--optimizer=" + rng.choice(["sgd", "adamw", "adam"]))
            if rng.random() < 0.3:
                options.append("--precision=" + rng.choice(["fp32", "tf32", "bf16", "fp16"]))
            if rng.random() < 0.2:
                options.append(f"--plan-exact-layers={rng.choice([4, 8, 16])}")
            case = [os.path.basename(model)] + options
            result = plan(args.pipe_opt, model, options, auto_dir, trace)
            runs += 1
            if result.returncode:
                lines = result.stderr.strip().splitlines()
                if result.returncode != 1 or len(lines) != 1 or os.path.exists(auto_dir):
                    bad.append(("automatic plan fails badly", case, result.stderr[-300:]))
                continue
            with open(os.path.join(auto_dir, "plan.json")) as f:
                auto = json.load(f)
            stages = len(auto["stages"])
            for check in (checks("plan", os.path.join(auto_dir, "plan.json")),
                          checks("trace", trace, "--stages", str(stages), "--microbatches",
                                 str(m), *(["--training"] if training else []))):
                if check.returncode:
                    bad.append(("plan_checks", case, check.stdout[-300:] + check.stderr[-300:]))
            names = [layer["name"] for layer in auto["layers"]]
            for _ in range(3):
                count = rng.randint(1, min(len(devices), len(names)))
                cuts = sorted(rng.sample(range(len(names) - 1), count - 1))
                hand = options + (["--cut-after=" + ",".join(names[c] for c in cuts)]
                                  if cuts else ["--stages", "1"])
                hand.append("--device-order=" + ",".join(rng.sample(devices, count)))
                result = plan(args.pipe_opt, model, hand, hand_dir)
                runs += 1
                if result.returncode:
                    if result.returncode != 1 or "does not fit" not in result.stderr:
                        bad.append(("hand plan fails", case + hand[len(options):],
                                    result.stderr[-300:]))
                    continue
                with open(os.path.join(hand_dir, "plan.json")) as f:
                    given = json.load(f)
                compared += 1
                iteration = auto["predicted_iteration_ms"]
                if auto["exact"] and \
                        given["objective_ms"] < auto["search_objective_ms"] * (1 - 1e-9):
                    bad.append(("hand objective below a proven one", case + hand[len(options):]))
                if given["predicted_iteration_ms"] < \
                        iteration * (1 - auto["iteration_gap_bound"]) * (1 - 1e-9):
                    bad.append(("hand plan faster than the gap allows",
                                case + hand[len(options):]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"plan_fuzz: {runs} runs, {compared} hand plans compared, {len(bad)} violations")
    for violation in bad[:50]:
        print(violation)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
