#!/usr/bin/env python3
"""The planner's cost model against measured runs on this host's CPU.

Without a GPU, the one device the compiler can both price and run is the
host's CPU. For each model this compares what `pipe-opt --emit=plan`
predicts for it (a cluster of one `cpu` device with as many cores as the
program's threads, the catalog's per-core numbers) with what the compiled
program takes on those threads:

  - inference (the models of python/export_models.py): the plan's forward
    time of one stage and one microbatch against `OUT/run --bench N`, the
    median forward pass after a warm-up;
  - training (the models of bench/train_step.py, 4 microbatches, AdamW):
    the plan's `predicted_step_ms` (M times the stage's forward, backward
    and recompute time, then its optimizer update) against the median step
    of `OUT/run --steps N`.

Not a test: run it by hand and record the table in docs/benchmarks.md.

    /usr/bin/python3 bench/cost_model_cpu.py [--threads 2] [--repeat 50]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import cpu_forward  # noqa: E402
import train_step  # noqa: E402


def cpu_cluster(folder: str, threads: int) -> str:
    """A cluster file of this host's CPU, `threads` cores of it."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    path = os.path.join(folder, "cluster.json")
    with open(path, "w") as f:
        json.dump({"devices": [{"name": "cpu0", "kind": "cpu",
                                "host": "localhost", "cores": threads,
                                "memory_gb": memory / 2**30}]}, f)
    return path


def planned_stage(pipe_opt: str, model: str, folder: str, threads: int,
                  extra: list[str]) -> tuple[dict, dict]:
    """The plan for `threads` cores of this host's CPU, and its only
    stage."""
    out = os.path.join(folder, "plan")
    os.makedirs(folder, exist_ok=True)
    cluster = cpu_cluster(folder, threads)
    subprocess.run([pipe_opt, model, "--emit=plan", "-o", out, "--cluster",
                    cluster] + extra, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "plan.json")) as f:
        plan = json.load(f)
    if len(plan["stages"]) != 1:
        raise SystemExit(f"{model}: expected one stage on one CPU")
    return plan, plan["stages"][0]


def inference_row(pipe_opt: str, name: str, folder: str, repeat: int,
                  threads: int, env: dict) -> tuple[float, float]:
    path, _, measured = cpu_forward.bench_pipe(pipe_opt, name, folder, repeat,
                                               env)
    _, stage = planned_stage(pipe_opt, path,
                             os.path.join(folder, name + "-plan"), threads, [])
    return stage["forward_ms"], measured


def training_row(pipe_opt: str, name: str, folder: str, steps: int,
                 threads: int) -> tuple[float, float]:
    model, b, data = train_step.build(name, steps)
    times, _ = train_step.pipe_steps(pipe_opt, folder, model, data, b, steps)
    plan, _ = planned_stage(
        pipe_opt, os.path.join(folder, "model.onnx"), folder, threads,
        ["--train", "--microbatches", str(train_step.MICROBATCHES),
         "--optimizer", "adamw"])
    return plan["predicted_step_ms"], statistics.median(times[1:]) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipe-opt",
                        default=os.path.join(ROOT, "build", "bin", "pipe-opt"))
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--inference", default="mlp,cnn,gpt-eval,resnet18")
    parser.add_argument("--training", default="mlp,cnn,gpt,gpt-4x128")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)
    env = dict(os.environ)

    print(f"threads: {args.threads}")
    print("| model | pass | predicted (ms) | measured (ms) | "
          "measured / predicted |")
    print("|---|---|---|---|---|")
    rows = []
    for name in filter(None, args.inference.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            rows.append((name, "forward",
                         *inference_row(args.pipe_opt, name, folder,
                                        args.repeat, args.threads, env)))
        print_row(rows[-1])
    for name in filter(None, args.training.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            rows.append((name, "training step",
                         *training_row(args.pipe_opt, name, folder,
                                       args.steps, args.threads)))
        print_row(rows[-1])
    return 0


def print_row(row: tuple[str, str, float, float]) -> None:
    name, kind, predicted, measured = row
    print(f"| {name} | {kind} | {predicted:.3f} | {measured:.3f} | "
          f"{measured / predicted:.2f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
