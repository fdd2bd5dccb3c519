#!/usr/bin/env python3
"""Pipelines on this machine's CPUs: measured against predicted.

For S = 2, 3 and 4 stages of a GPT (python/train_reference.py's, larger:
4 layers, d = 128, sequence 64, vocabulary 512, microbatch 8), with M = 8
microbatches under 1F1B and AdamW, on a cluster file that describes this
machine (`--cores` cores, one `cpu` device per stage):

- the step time `OUT/run --metrics` measures (median after 3 steps)
  against the planner's `predicted_step_ms`. With more stages than cores
  the stages share them; the cluster file then gives each device
  cores / S of a core's peak (`peak_tflops`), which is how the cluster
  file describes shared cores;
- the bubble: from `OUT/run --trace`, each stage's idle share of the last
  step (time not computing), against the schedule's (S - 1) / (M + S - 1)
  and the simulator's bubble_fraction;
- compile time: `pipe-opt --emit=binaries` of the whole pipeline (the
  stages compile in parallel) and of the single-stage program.

Not a test: run it by hand and record the table in docs/benchmarks.md.

    /usr/bin/python3 bench/pipeline.py [--pipe-opt build/bin/pipe-opt]
        [--cores 2] [--steps 12]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import train_reference as ref  # noqa: E402

CPU_PEAK_TFLOPS = 0.096  # the catalog's cpu entry, per core


def export_gpt(folder: str) -> None:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    vocab, seq, b = 512, 64, 8
    rows = 8 * b
    model = ref.GPT(vocab=vocab, d=128, heads=4, layers=4, seq=seq)
    start = rng.integers(0, vocab, (rows, 1))
    stream = (start + np.arange(seq + 1)) % vocab
    data = {"tokens": stream[:, :-1].astype(np.int64),
            "labels": stream[:, 1:].astype(np.int64)}
    os.makedirs(os.path.join(folder, "inputs"), exist_ok=True)
    ref.export_onnx(model, data, b, os.path.join(folder, "model.onnx"))
    for name, array in data.items():
        np.save(os.path.join(folder, "inputs", f"{name}.npy"), array)


def cluster(path: str, stages: int, cores: int) -> None:
    share = min(1.0, cores / stages)
    devices = [{"name": f"c{s}", "kind": "cpu", "cores": 1, "memory_gb": 4,
                "peak_tflops": {"fp32": CPU_PEAK_TFLOPS * share}}
               for s in range(stages)]
    with open(path, "w") as f:
        json.dump({"devices": devices}, f)


def bubbles(trace: str, stages: int, microbatches: int) -> list[float]:
    """Each stage's idle share of the last step: the span from the first
    stage's first forward pass of that step to the last update, less the
    stage's compute."""
    with open(trace) as f:
        events = [e for e in json.load(f)["traceEvents"]
                  if e.get("ph") == "X" and e["cat"] == "compute"]
    per_step = 2 * microbatches + 1
    last = {s: sorted((e for e in events if e["tid"] == s),
                      key=lambda e: e["ts"])[-per_step:]
            for s in range(stages)}
    begin = min(e["ts"] for s in last for e in last[s])
    end = max(e["ts"] + e["dur"] for s in last for e in last[s])
    return [1 - sum(e["dur"] for e in last[s]) / (end - begin)
            for s in range(stages)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipe-opt",
                        default=os.path.join(ROOT, "build", "bin", "pipe-opt"))
    parser.add_argument("--cores", type=int, default=os.cpu_count())
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    m = 8
    with tempfile.TemporaryDirectory() as work:
        export_gpt(os.path.join(work, "gpt"))
        model = os.path.join(work, "gpt", "model.onnx")
        inputs = os.path.join(work, "gpt", "inputs")
        flags = ["--train", "--microbatches", str(m), "--optimizer", "adamw"]
        start = time.perf_counter()
        subprocess.run([args.pipe_opt, model, *flags, "--emit=binaries",
                        "-o", os.path.join(work, "one")], check=True)
        single_compile = time.perf_counter() - start
        print(f"{'S':>2} {'measured ms':>12} {'predicted ms':>13} "
              f"{'error':>7} {'bubble':>22} {'(S-1)/(M+S-1)':>14} "
              f"{'simulated':>10} {'compile s':>10}")
        for stages in (2, 3, 4):
            out = os.path.join(work, f"s{stages}")
            path = os.path.join(work, f"cluster{stages}.json")
            cluster(path, stages, args.cores)
            start = time.perf_counter()
            subprocess.run([args.pipe_opt, model, *flags, "--cluster", path,
                            "--stages", str(stages), "--emit=binaries", "-o",
                            out], check=True, stdout=subprocess.DEVNULL)
            compile_s = time.perf_counter() - start
            metrics = os.path.join(work, f"m{stages}.jsonl")
            trace = os.path.join(work, f"t{stages}.json")
            subprocess.run([os.path.join(out, "run"), "--steps",
                            str(args.steps), "--inputs", inputs, "--metrics",
                            metrics, "--trace", trace], check=True,
                           stdout=subprocess.DEVNULL)
            with open(metrics) as f:
                seconds = [json.loads(line)["seconds"] for line in f][3:]
            measured = 1e3 * statistics.median(seconds)
            with open(os.path.join(out, "plan.json")) as f:
                plan = json.load(f)
            predicted = plan["predicted_step_ms"]
            idle = bubbles(trace, stages, m)
            print(f"{stages:>2} {measured:>12.2f} {predicted:>13.2f} "
                  f"{(predicted - measured) / measured:>+7.0%} "
                  f"{' '.join(f'{b:.2f}' for b in idle):>22} "
                  f"{(stages - 1) / (m + stages - 1):>14.2f} "
                  f"{plan['bubble_fraction']:>10.2f} {compile_s:>10.1f}")
        print(f"single-stage program: compiled in {single_compile:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
