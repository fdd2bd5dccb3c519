#!/usr/bin/env python3
"""The planner against the usual baselines, and its wall time.

Part 1. For a GPT-2-XL-shaped and a ResNet-152-shaped training graph
(python/shaped_models.py), on three mixed clusters, the predicted iteration
time of pipe's plan and of three baselines, each priced by the same cost
model and simulator (`pipe-opt --emit=plan --partition=...`):
  - uniform: the same number of nodes per stage (Megatron, DeepSpeed);
  - parameters: balanced parameter bytes (DeepSpeed);
  - speed-blind: balanced time as if every device were the first
    (PipeDream's DP).
The baselines place stages on the devices in cluster order, and get the
same recompute choice and memory check as pipe's plan.

Part 2. Planner wall time (plan.json's planner_seconds, and the whole
pipe-opt run) against graph size (GPT-shaped graphs of 100 to 1500 nodes)
and device count (4 to 64 devices, half A100-80GB and half V100-32GB).

Part 3. Past 256 nodes, unless the search over every node is cheap, the
planner plans blocks of nodes and reports a proven gap; this part
compares the default with the exact search on all nodes
(--plan-exact-layers), which is slower.

Not a test: run it by hand and record the tables in docs/benchmarks.md.

    /usr/bin/python3 bench/planner.py [--pipe-opt build/bin/pipe-opt]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CLUSTERS = {
    "2xA100-80GB + 2xV100-32GB":
        [("A100-80GB", "n1")] * 2 + [("V100-32GB", "n2")] * 2,
    "1xH100 + 3xT4":
        [("H100-PCIe", "n1")] + [("T4", "n2")] * 3,
    "4xL4 + 4xA100-40GB":
        [("L4", "n1")] * 4 + [("A100-40GB", "n2")] * 4,
}

MODELS = {
    "GPT-2-XL": ["gpt"],                   # 48 layers, d 1600, seq 1024, b 1
    "ResNet-152": ["resnet", "--batch", "32"],
}

PLAN_ARGS = ["--train", "--microbatches", "16", "--optimizer=adamw",
             "--precision=fp16"]


def write_cluster(path: str, devices: list[tuple[str, str]]) -> None:
    entries = [{"name": f"d{i}", "kind": kind, "host": host}
               for i, (kind, host) in enumerate(devices)]
    with open(path, "w") as f:
        json.dump({"devices": entries}, f)


def shaped_model(work: str, name: str, generator: list[str]) -> str:
    """Writes python/shaped_models.py's IR for `generator` to WORK/NAME."""
    path = os.path.join(work, name)
    subprocess.run([sys.executable,
                    os.path.join(ROOT, "python", "shaped_models.py")]
                   + generator + ["--out", path], check=True)
    return path


def plan(pipe_opt: str, model: str, cluster: str, extra: list[str],
         work: str) -> tuple[dict | None, str, float]:
    out = os.path.join(work, "plan")
    subprocess.run(["rm", "-rf", out], check=True)
    start = time.perf_counter()
    result = subprocess.run([pipe_opt, model, "--emit=plan", "-o", out,
                             "--cluster", cluster] + extra,
                            capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        return None, result.stderr.strip().splitlines()[-1], seconds
    with open(os.path.join(out, "plan.json")) as f:
        return json.load(f), "", seconds


def iteration_proof(result: dict) -> str:
    """Whether the predicted iteration is proven the least, else the gap."""
    if result["iteration_exact"]:
        return "least"
    return f"gap <= {100 * result['iteration_gap_bound']:.1f}%"


def baselines(pipe_opt: str, work: str) -> None:
    print("## Predicted iteration (ms), training, 1F1B, M = 16, AdamW, fp16")
    print()
    print("| model | cluster | pipe | uniform | parameters | speed-blind "
          "| pipe's stages | pipe proven | planner s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for model, generator in MODELS.items():
        path = shaped_model(work, model + ".mlir", generator)
        for name, devices in CLUSTERS.items():
            cluster = os.path.join(work, "cluster.json")
            write_cluster(cluster, devices)
            row = [model, name]
            stages, seconds, proven = "", "", ""
            auto = None
            for partition in ["auto", "uniform", "parameters", "speed-blind"]:
                result, error, _ = plan(pipe_opt, path, cluster,
                                        PLAN_ARGS + [f"--partition={partition}"],
                                        work)
                if result is None:
                    row.append("does not fit" if "does not fit" in error
                               else "error")
                    continue
                ms = result["predicted_iteration_ms"]
                if partition == "auto":
                    auto = ms
                    row.append(f"**{ms:.1f}**")
                    stages = " ".join(
                        f"{s['kind']}:{s['layers']}" for s in result["stages"])
                    seconds = f"{result['planner_seconds']:.2f}"
                    proven = iteration_proof(result)
                else:
                    row.append(f"{ms:.1f} ({ms / auto:.2f}x)" if auto
                               else f"{ms:.1f}")
            print("| " + " | ".join(row + [stages, proven, seconds]) + " |")
    print()


def wall_time(pipe_opt: str, work: str) -> None:
    print("## Planner wall time (s): planner_seconds / whole pipe-opt run")
    print()
    counts = [4, 8, 16, 32, 64]
    print("| nodes | " + " | ".join(f"{d} devices" for d in counts) + " |")
    print("|---|" + "---|" * len(counts))
    for layers in [3, 10, 48]:
        path = shaped_model(work, f"gpt{layers}.mlir",
                            ["gpt", "--layers", str(layers)])
        cells, nodes = [], ""
        for count in counts:
            devices = ([("A100-80GB", "n1")] * (count // 2)
                       + [("V100-32GB", "n2")] * (count - count // 2))
            cluster = os.path.join(work, "cluster.json")
            write_cluster(cluster, devices)
            result, error, seconds = plan(pipe_opt, path, cluster,
                                          PLAN_ARGS, work)
            if result is None:
                cells.append("does not fit" if "does not fit" in error
                             else "error")
                continue
            nodes = str(len(result["layers"]))
            proof = ("exact" if result["exact"] else
                     f"gap <= {100 * result['objective_gap_bound']:.0f}%")
            proof += "; iteration " + iteration_proof(result)
            cells.append(f"{result['planner_seconds']:.2f} / {seconds:.2f} "
                         f"({proof})")
        print(f"| {nodes} | " + " | ".join(cells) + " |")
    print()


def blocks_vs_exact(pipe_opt: str, work: str) -> None:
    print("## The default (blocks past 256 nodes, unless cheap) vs the exact "
          "search")
    print()
    print("| model | cluster | nodes | default: objective / predicted ms, s "
          "| exact: objective / predicted ms, s | proven gap of default |")
    print("|---|---|---|---|---|---|")
    for model, generator in MODELS.items():
        path = shaped_model(work, model + ".mlir", generator)
        for name in list(CLUSTERS)[:2]:
            cluster = os.path.join(work, "cluster.json")
            write_cluster(cluster, CLUSTERS[name])
            cells, gaps = [], []
            for extra in [[], ["--plan-exact-layers=100000"]]:
                result, error, seconds = plan(pipe_opt, path, cluster,
                                              PLAN_ARGS + extra, work)
                if result is None:
                    cells.append(error)
                    continue
                nodes = len(result["layers"])
                gaps.append(result["objective_gap_bound"])
                cells.append(f"{result['search_objective_ms']:.1f} / "
                             f"{result['predicted_iteration_ms']:.1f}, "
                             f"{result['planner_seconds']:.2f}")
            print(f"| {model} | {name} | {nodes} | {cells[0]} | {cells[1]} "
                  f"| {100 * gaps[0]:.0f}% |")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipe-opt",
                        default=os.path.join(ROOT, "build", "bin", "pipe-opt"))
    parser.add_argument("--part",
                        choices=["all", "baselines", "time", "blocks"],
                        default="all")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        if args.part in ("all", "baselines"):
            baselines(args.pipe_opt, work)
        if args.part in ("all", "time"):
            wall_time(args.pipe_opt, work)
        if args.part in ("all", "blocks"):
            blocks_vs_exact(args.pipe_opt, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
