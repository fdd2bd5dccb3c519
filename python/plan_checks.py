#!/usr/bin/env python3
"""Checks of pipe-opt --emit=plan output, for the lit tests.

  plan_checks.py plan OUT/plan.json [--stages N] [--schedule S] [--microbatches M]
      The keys of docs/planner.md are there, the stages cover the model in
      order, and no stage's predicted peak exceeds its device's memory.
  plan_checks.py trace TRACE.json --stages N --microbatches M [--training]
      A Chrome trace with M forward (and backward) steps per stage, no two
      steps of one stage overlapping, and every step after its input.
  plan_checks.py hand-vs-auto --pipe-opt BIN --cluster C MODEL -- ARGS...
      No hand-cut plan (every cut point, every device order of the first
      two devices, and --random plans over all devices) is predicted faster
      than the automatic one, nor are the --partition baselines.

Each prints one line saying what held, and exits non-zero on a violation.
"""

import argparse
import itertools
import json
import random
import os
import re
import subprocess
import sys
import tempfile

TOP_KEYS = ["schedule", "microbatches", "predicted_iteration_ms",
            "predicted_step_ms", "lower_bound_ms", "bubble_fraction", "stages", "exact",
            "objective_gap_bound", "iteration_exact", "iteration_gap_bound"]
STAGE_KEYS = ["index", "device", "kind", "arch", "ops", "flops",
              "param_bytes", "predicted_compute_ms",
              "predicted_peak_memory_bytes", "recompute", "first_node",
              "last_node"]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def check_plan(args):
    with open(args.file) as f:
        plan = json.load(f)
    for key in TOP_KEYS:
        if key not in plan:
            fail(f"plan.json lacks '{key}'")
    stages = plan["stages"]
    if args.stages is not None and len(stages) != args.stages:
        fail(f"{len(stages)} stages, expected {args.stages}")
    if args.schedule and plan["schedule"] != args.schedule:
        fail(f"schedule {plan['schedule']}, expected {args.schedule}")
    if args.microbatches and plan["microbatches"] != args.microbatches:
        fail(f"microbatches {plan['microbatches']}")
    devices = set()
    for index, stage in enumerate(stages):
        for key in STAGE_KEYS:
            if key not in stage:
                fail(f"stage {index} lacks '{key}'")
        if stage["index"] != index:
            fail(f"stage {index} has index {stage['index']}")
        if stage["device"] in devices:
            fail(f"device {stage['device']} holds two stages")
        devices.add(stage["device"])
        if stage["predicted_peak_memory_bytes"] > stage["memory_capacity_bytes"]:
            fail(f"stage {index} needs more memory than its device has")
        if stage["recompute"] not in ("none", "selective", "full"):
            fail(f"stage {index} recompute '{stage['recompute']}'")
    if not 0 <= plan["bubble_fraction"] < 1:
        fail(f"bubble fraction {plan['bubble_fraction']}")
    if plan["lower_bound_ms"] > plan["predicted_iteration_ms"]:
        fail("the lower bound exceeds the prediction")
    gap = plan["iteration_gap_bound"]
    if not 0 <= gap < 1 or (plan["iteration_exact"] and gap != 0):
        fail(f"iteration gap bound {gap}")
    if args.iteration_exact and not plan["iteration_exact"]:
        fail("the predicted iteration is not proven the least")
    # The step adds each stage's optimizer update after its last step.
    step, iteration = plan["predicted_step_ms"], plan["predicted_iteration_ms"]
    updates = max(s["optimizer_ms"] for s in stages) if plan["training"] else 0
    if not iteration * (1 - 1e-12) <= step <= (iteration + updates) * (1 + 1e-9):
        fail(f"step {step} ms for an iteration of {iteration} ms and "
             f"updates of at most {updates} ms")
    busiest = max(s["predicted_compute_ms"] for s in stages)
    if plan["predicted_iteration_ms"] < busiest * (1 - 1e-9):
        fail("the iteration is shorter than its busiest stage")
    print(f"plan ok: {len(stages)} stages, "
          f"{plan['predicted_iteration_ms']:.4g} ms")


def check_trace(args):
    with open(args.file) as f:
        trace = json.load(f)
    steps = {}
    for event in trace["traceEvents"]:
        if event.get("ph") != "X" or event.get("cat") != "compute":
            continue
        name = event["name"]
        steps.setdefault(event["tid"], []).append(
            (event["ts"], event["ts"] + event["dur"], name))
    if sorted(steps) != list(range(args.stages)):
        fail(f"tracks {sorted(steps)}, expected {args.stages} stages")
    finish = {}
    updated = 0
    for stage, events in steps.items():
        events.sort()
        for (_, end, _), (start, _, name) in zip(events, events[1:]):
            if start < end - 1e-6:
                fail(f"stage {stage}: {name} overlaps the step before it")
        for start, end, name in events:
            finish[(stage, name)] = (start, end)
        for phase in ["F", "B"] if args.training else ["F"]:
            count = sum(1 for _, _, n in events
                        if re.fullmatch(phase + r"\d+", n))
            if count != args.microbatches:
                fail(f"stage {stage}: {count} {phase} steps")
        # In training, at most one optimizer update, after every step.
        updates = [i for i, (_, _, n) in enumerate(events) if n == "update"]
        if updates and (not args.training or updates != [len(events) - 1]):
            fail(f"stage {stage}: updates at {updates} of {len(events)} "
                 f"events")
        updated += len(updates)
    for (stage, name), (start, _) in finish.items():
        kind, micro = name[0], name[1:]
        source = stage - 1 if kind == "F" else stage + 1
        if kind in "FB" and (source, name) in finish:
            if start < finish[(source, name)][1] - 1e-6:
                fail(f"stage {stage}: {name} starts before its input")
    if args.training and not updated:
        fail("no stage updates its parameters")
    print(f"trace ok: {args.stages} stages x {args.microbatches} microbatches")


def run_plan(pipe_opt, model, extra):
    with tempfile.TemporaryDirectory() as out:
        folder = os.path.join(out, "plan")
        result = subprocess.run([pipe_opt, model, "--emit=plan", "-o", folder]
                                + extra, capture_output=True, text=True)
        if result.returncode != 0:
            return None, result.stderr.strip()
        with open(os.path.join(folder, "plan.json")) as f:
            return json.load(f), ""


def check_hand_vs_auto(args):
    common = args.args + ["--cluster", args.cluster]
    auto, error = run_plan(args.pipe_opt, args.model, common)
    if auto is None:
        fail("automatic plan: " + error)
    best = auto["predicted_iteration_ms"]
    devices = [s["device"] for s in auto["stages"]]
    with open(args.cluster) as f:
        cluster = [d["name"] for d in json.load(f)["devices"]]
    names = [layer["name"] for layer in auto["layers"]]
    tried = 0
    hands = []
    for cut in names[:-1][::args.every]:
        for order in itertools.permutations(cluster[:2]):
            hands.append([f"--cut-after={cut}",
                          "--device-order=" + ",".join(order)])
    # Random plans over every device: random cut points, random order.
    rng = random.Random(args.seed)
    for _ in range(args.random):
        cuts = sorted(rng.sample(range(len(names) - 1), len(cluster) - 1))
        order = rng.sample(cluster, len(cluster))
        hands.append(["--cut-after=" + ",".join(names[c] for c in cuts),
                      "--device-order=" + ",".join(order)])
    # The automatic plan with one cut moved by one or two layers.
    if args.moves:
        ends = [names.index(s["last_node"]) for s in auto["stages"][:-1]]
        for i in range(len(ends)):
            for delta in (-2, -1, 1, 2):
                moved = list(ends)
                moved[i] += delta
                if moved != sorted(set(moved)) or moved[0] < 0 or \
                        moved[-1] >= len(names) - 1:
                    continue
                hands.append(["--cut-after=" +
                              ",".join(names[c] for c in moved),
                              "--device-order=" + ",".join(devices)])
    for partition in ["uniform", "parameters", "speed-blind"]:
        hands.append([f"--partition={partition}"])
    for hand in hands:
        plan, error = run_plan(args.pipe_opt, args.model, common + hand)
        if plan is None:
            # A plan given by hand may not fit; any other failure is a bug.
            if "does not fit" not in error:
                fail(f"{' '.join(hand)}: {error}")
            continue
        tried += 1
        if plan["predicted_iteration_ms"] < best * (1 - 1e-9):
            fail(f"{' '.join(hand)} predicts {plan['predicted_iteration_ms']}"
                 f" ms, faster than the automatic plan's {best} ms")
    if tried == 0:
        fail("no hand plan to compare")
    print(f"hand-vs-auto ok: {tried} hand plans, none faster than "
          f"{best:.4g} ms on {'+'.join(devices)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plan")
    p.add_argument("file")
    p.add_argument("--stages", type=int)
    p.add_argument("--schedule")
    p.add_argument("--microbatches", type=int)
    p.add_argument("--iteration-exact", action="store_true",
                   help="require the predicted iteration proven the least")
    t = sub.add_parser("trace")
    t.add_argument("file")
    t.add_argument("--stages", type=int, required=True)
    t.add_argument("--microbatches", type=int, required=True)
    t.add_argument("--training", action="store_true")
    h = sub.add_parser("hand-vs-auto")
    h.add_argument("--pipe-opt", required=True)
    h.add_argument("--cluster", required=True)
    h.add_argument("--every", type=int, default=1,
                   help="try every Nth node as a cut point")
    h.add_argument("--random", type=int, default=0,
                   help="also try this many random plans over all devices")
    h.add_argument("--seed", type=int, default=1)
    h.add_argument("--moves", action="store_true",
                   help="also try the automatic plan with each cut moved "
                        "by one or two nodes")
    h.add_argument("model")
    h.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.command == "hand-vs-auto" and args.args[:1] == ["--"]:
        args.args = args.args[1:]
    {"plan": check_plan, "trace": check_trace,
     "hand-vs-auto": check_hand_vs_auto}[args.command](args)


if __name__ == "__main__":
    main()
