#!/usr/bin/env python3
"""Renders a pipeline plan from `pipe-opt --emit=plan` as one PNG.

Run with Debian's Python (/usr/bin/python3), which has matplotlib:

    /usr/bin/python3 python/render_plan.py OUT/plan.json [--timeline TRACE.json] -o plan.png

The picture has, on top, the simulated timeline of one iteration (the Chrome
trace written by `pipe-opt --timeline`): one row per stage and per link, bars
colored by kind. Below it, per stage, the predicted peak memory broken down
by part against the device's capacity, and the compute time per iteration.
Without --timeline only the two bottom panels are drawn. A timeline whose
stages or length are not the plan's (a trace another run left behind) is an
error.

Errors print one line `render_plan.py: error: ...` and exit 1; the PNG is
written to a temporary file and renamed, so a failed run leaves none behind.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

PLAN_KEYS = ("schedule", "microbatches", "predicted_iteration_ms", "bubble_fraction", "stages")
STAGE_KEYS = ("index", "device", "kind", "recompute", "predicted_compute_ms", "forward_ms",
              "backward_ms", "recompute_ms", "predicted_peak_memory_bytes",
              "memory_capacity_bytes", "memory")
MEMORY_KEYS = ("parameters", "gradients", "optimizer_state", "stash_per_microbatch",
               "microbatches_in_flight", "recompute_buffer", "workspace")

# Timeline kinds: (legend label, color); keyed by the event name's prefix.
KINDS = {"F": ("forward", "#4c72b0"), "R": ("recompute", "#dd8452"),
         "B": ("backward", "#55a868"), "update": ("optimizer update", "#937860"),
         "activations": ("activations sent", "#8172b3"),
         "gradients": ("gradients sent", "#c44e52")}
OTHER = ("other", "#999999")
MEMORY_PARTS = (("parameters", "#4c72b0"), ("gradients", "#55a868"),
                ("optimizer state", "#c44e52"), ("stash", "#8172b3"),
                ("recompute buffer", "#dd8452"), ("workspace", "#937860"))


class RenderError(Exception):
    """A problem with the inputs or the output, reported in one line."""


def load_json(path: str, what: str):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise RenderError(f"cannot read {what} '{path}': {e.strerror}") from e
    except ValueError as e:
        raise RenderError(f"{what} '{path}' is not valid JSON: {e}") from e


def require(obj, keys, where: str) -> None:
    if not isinstance(obj, dict):
        raise RenderError(f"{where} is not a JSON object")
    for key in keys:
        if key not in obj:
            raise RenderError(f"{where} lacks '{key}'")


def check_plan(plan) -> None:
    require(plan, PLAN_KEYS, "plan")
    if not isinstance(plan["stages"], list) or not plan["stages"]:
        raise RenderError("plan has no stages")
    for i, stage in enumerate(plan["stages"]):
        require(stage, STAGE_KEYS, f"plan stage {i}")
        require(stage["memory"], MEMORY_KEYS, f"plan stage {i} memory")


def load_trace(path: str):
    """Returns [(track label, [(start ms, duration ms, name), ...]), ...]."""
    trace = load_json(path, "timeline")
    events = trace.get("traceEvents") if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        raise RenderError(f"timeline '{path}' has no traceEvents list")
    names, order, bars = {}, {}, {}
    for e in events:
        if not isinstance(e, dict):
            raise RenderError(f"timeline '{path}' has an event that is not an object")
        tid = e.get("tid", 0)
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[tid] = str(e.get("args", {}).get("name", f"track {tid}"))
        elif e.get("ph") == "M" and e.get("name") == "thread_sort_index":
            order[tid] = e.get("args", {}).get("sort_index", tid)
        elif e.get("ph") == "X":
            try:
                bar = (float(e["ts"]) / 1e3, float(e["dur"]) / 1e3, str(e["name"]))
            except (KeyError, TypeError, ValueError) as err:
                raise RenderError(f"timeline '{path}' has a complete event without "
                                  f"numeric ts and dur and a name: {str(e)[:60]}") from err
            bars.setdefault(tid, []).append(bar)
    tids = sorted(set(names) | set(bars), key=lambda t: (
        names.get(t, "").startswith("link"), order.get(t, t), t))
    # Links that carry nothing (the gradient links of inference) are left out.
    return [(names.get(t, f"track {t}"), bars.get(t, [])) for t in tids
            if bars.get(t) or not names.get(t, "").startswith("link")]


def check_trace_matches(plan, tracks, path: str) -> None:
    """A trace of another run (a stale OUT/trace.json) is an error."""
    if not any(bars for _, bars in tracks):
        raise RenderError(f"timeline '{path}' has no events")
    stages = [label for label, _ in tracks if label.startswith("stage ")]
    expected = stage_labels(plan)
    if len(stages) != len(expected):
        raise RenderError(f"timeline '{path}' has {len(stages)} stages, the plan "
                          f"{len(expected)}: it is not this plan's")
    for label, want in zip(stages, expected):
        if label != want:
            raise RenderError(f"timeline '{path}' is not this plan's: it has "
                              f"'{label}' where the plan has '{want}'")
    # The trace ends with the iteration, or with the optimizer updates.
    end = max(s + d for _, bars in tracks for s, d, _ in bars)
    iteration = plan["predicted_iteration_ms"]
    step = max(iteration, plan.get("predicted_step_ms") or 0)
    if not iteration * (1 - 1e-6) <= end <= step * (1 + 1e-6):
        raise RenderError(f"timeline '{path}' ends at {end:.6g} ms, the plan's "
                          f"iteration at {iteration:.6g} ms: it is not this plan's")


def kind_of(name: str):
    prefix = name.split()[0] if " " in name else name.rstrip("0123456789")
    return KINDS.get(prefix, OTHER)


def draw_timeline(fig, ax, plan, tracks) -> None:
    step = plan.get("predicted_step_ms")
    updates = (f" ({step:.3f} ms with the optimizer updates)"
               if plan.get("training") and isinstance(step, (int, float)) else "")
    ax.set_title(f"{plan['schedule']} schedule, M = {plan['microbatches']}: predicted iteration "
                 f"{plan['predicted_iteration_ms']:.3f} ms{updates}, bubble "
                 f"{100 * plan['bubble_fraction']:.1f}%", loc="left", fontsize=12, pad=24)
    end = max([s + d for _, bars in tracks for s, d, _ in bars] +
              [plan["predicted_iteration_ms"], 1e-6])
    used = {}
    for row, (_, bars) in enumerate(tracks):
        # One collection per row and kind: a trace of 65,536 microbatches
        # has hundreds of thousands of bars. White edges part the bars
        # while they are few enough to see apart.
        groups = {}
        for start, dur, name in bars:
            kind = used.setdefault(kind_of(name)[0], kind_of(name))
            groups.setdefault((kind, " " in name), []).append((start, dur))
        edges = len(bars) <= 400
        for ((_, color), transfer), ranges in groups.items():
            ax.broken_barh(ranges, (row - 0.35, 0.7), facecolors=color,
                           edgecolors=color if transfer or not edges else "white",
                           linewidth=(0.8 if transfer else 0.5) if edges else 0)
    ax.axvline(plan["predicted_iteration_ms"], color="black", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(tracks)), [label for label, _ in tracks])
    ax.set_ylim(len(tracks) - 0.5, -0.5)
    ax.set_xlim(0, end * 1.01)
    ax.set_xlabel("time (ms)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(handles=[Patch(color=c, label=l) for l, c in used.values()] +
              [plt.Line2D([], [], color="black", linestyle="--", label="predicted iteration")],
              loc="lower left", bbox_to_anchor=(0, 1), ncol=len(used) + 1, frameon=False,
              fontsize=9, borderaxespad=0.1)
    label_bars(fig, ax, tracks)


def label_bars(fig, ax, tracks) -> None:
    """Writes the microbatch number inside the bars wide enough to hold it."""
    fig.draw_without_rendering()
    px_per_ms = ax.transData.transform((1, 0))[0] - ax.transData.transform((0, 0))[0]
    for row, (_, bars) in enumerate(tracks):
        for start, dur, name in bars:
            number = re.search(r"(\d+)$", name)
            if number and dur * px_per_ms >= 9 + 7 * len(number.group(1)):
                ax.text(start + dur / 2, row, number.group(1), ha="center", va="center",
                        fontsize=8, color="white", clip_on=True)


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return ""


def ms(value: float) -> str:
    return f"{value:.1f}" if value >= 100 else f"{value:.3g}"


def stage_labels(plan):
    return [f"stage {s['index']}: {s['device']} ({s['kind']})" for s in plan["stages"]]


def percent(part: float, whole: float) -> str:
    share = 100 * part / whole
    return "<0.1%" if 0 < share < 0.1 else f"{share:.1f}%"


def draw_memory(ax, plan) -> None:
    stages = plan["stages"]
    peak = max(max(s["predicted_peak_memory_bytes"] for s in stages), 1)
    most = max(s["memory_capacity_bytes"] for s in stages)
    # Show the capacities when they are in sight of the usage; else the
    # bars would be slivers, so the axis fits the usage and the rows say it.
    limit = max(peak * 1.45, most * 1.3 if most <= 3 * peak else 0)
    scale, unit = next((1024.0 ** k, u) for k, u in ((3, "GiB"), (2, "MiB"), (1, "KiB"), (0, "B"))
                       if limit / 1024.0 ** k >= 2 or k == 0)
    used, marked = set(), False
    for row, s in enumerate(stages):
        m = s["memory"]
        parts = (m["parameters"], m["gradients"], m["optimizer_state"],
                 m["stash_per_microbatch"] * m["microbatches_in_flight"],
                 m["recompute_buffer"], m["workspace"])
        left = 0.0
        for value, (label, color) in zip(parts, MEMORY_PARTS):
            if value > 0:
                used.add(label)
                ax.barh(row, value / scale, left=left, height=0.6, color=color)
                left += value / scale
        cap, need = s["memory_capacity_bytes"], s["predicted_peak_memory_bytes"]
        if 0 < cap <= limit:
            marked = True
            ax.plot([cap / scale] * 2, [row - 0.42, row + 0.42], color="black", linewidth=2)
            left = max(left, cap / scale)
        text = f"{human_bytes(need)} of {human_bytes(cap)} ({percent(need, cap)})" if cap else ""
        ax.text(left + limit / scale * 0.01, row, text, va="center", fontsize=8,
                color="#b00000" if need > cap else "black")
    ax.set_xlim(0, limit / scale)
    ax.set_yticks(range(len(stages)), stage_labels(plan))
    ax.set_ylim(len(stages) - 0.5, -0.5)
    ax.set_xlabel(f"predicted peak memory ({unit})")
    ax.set_title("memory per stage", loc="left", fontsize=11)
    ax.grid(axis="x", alpha=0.3)
    handles = [Patch(color=c, label=l) for l, c in MEMORY_PARTS if l in used]
    if marked:
        handles.append(plt.Line2D([], [], color="black", linewidth=2, label="capacity"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=4,
              frameon=False, fontsize=8)


def draw_time(ax, plan) -> None:
    stages, m = plan["stages"], plan["microbatches"]
    iteration = plan["predicted_iteration_ms"]
    longest = max([s["predicted_compute_ms"] for s in stages] + [iteration, 1e-6])
    used = {}
    for row, s in enumerate(stages):
        parts = [("F", m * s["forward_ms"]), ("R", m * s["recompute_ms"]),
                 ("B", m * s["backward_ms"])]
        rest = s["predicted_compute_ms"] - sum(v for _, v in parts)
        parts.append(("", rest if rest > 1e-3 * s["predicted_compute_ms"] else 0))
        left = 0.0
        for key, value in parts:
            if value > 0:
                color = used.setdefault(key, KINDS.get(key, OTHER))[1]
                ax.barh(row, value, left=left, height=0.6, color=color)
                left += value
        ax.text(left + longest * 0.01, row, f"{ms(s['predicted_compute_ms'])} ms, "
                f"recompute {s['recompute']}", va="center", fontsize=8,
                bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=1))
    ax.axvline(iteration, color="black", linestyle="--", linewidth=1)
    ax.set_xlim(0, longest * 1.45)
    ax.set_ylim(len(stages) - 0.5, -0.5)
    ax.tick_params(axis="y", labelleft=False)
    ax.set_xlabel("compute time per iteration (ms)")
    ax.set_title("time per stage", loc="left", fontsize=11)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(handles=[Patch(color=c, label=l) for l, c in used.values()] +
              [plt.Line2D([], [], color="black", linestyle="--", label="predicted iteration")],
              loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=4, frameon=False, fontsize=8)


def render(plan, tracks, output: str, dpi: int) -> None:
    n = len(plan["stages"])
    bottom = 1.9 + 0.45 * n
    top = 1.4 + 0.32 * len(tracks) if tracks is not None else 0
    fig = plt.figure(figsize=(15, top + bottom), layout="constrained")
    grid = fig.add_gridspec(2 if top else 1, 2, height_ratios=[top, bottom] if top else None,
                            width_ratios=[1.15, 1])
    row = 1 if top else 0
    mem_ax = fig.add_subplot(grid[row, 0])
    draw_memory(mem_ax, plan)
    draw_time(fig.add_subplot(grid[row, 1], sharey=mem_ax), plan)
    if top:
        draw_timeline(fig, fig.add_subplot(grid[0, :]), plan, tracks)
    folder = os.path.dirname(os.path.abspath(output))
    try:
        fd, temp = tempfile.mkstemp(prefix=".render_plan-", suffix=".png", dir=folder)
    except OSError as e:
        raise RenderError(f"cannot write to '{folder}': {e.strerror}") from e
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)  # mkstemp makes it private
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format="png", dpi=dpi)
        os.replace(temp, output)
    except BaseException as e:
        if os.path.exists(temp):
            os.unlink(temp)
        if isinstance(e, OSError):
            raise RenderError(f"cannot write '{output}': {e.strerror}") from e
        raise
    finally:
        plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="render_plan.py", description=__doc__.split("\n")[0])
    parser.add_argument("plan", help="plan.json written by pipe-opt --emit=plan")
    parser.add_argument("--timeline", metavar="TRACE", help="Chrome trace from pipe-opt --timeline")
    parser.add_argument("-o", "--output", default="plan.png", help="PNG to write (plan.png)")
    parser.add_argument("--dpi", type=int, default=100, help="resolution (100)")
    args = parser.parse_args(argv)
    if not 10 <= args.dpi <= 600:
        print(f"render_plan.py: error: --dpi must be from 10 to 600, not {args.dpi}",
              file=sys.stderr)
        return 1
    try:
        plan = load_json(args.plan, "plan")
        check_plan(plan)
        tracks = load_trace(args.timeline) if args.timeline else None
        if tracks is not None:
            check_trace_matches(plan, tracks, args.timeline)
        render(plan, tracks, args.output, args.dpi)
    except RenderError as e:
        print(f"render_plan.py: error: {e}", file=sys.stderr)
        return 1
    except (KeyError, TypeError, ValueError) as e:
        print(f"render_plan.py: error: malformed plan '{args.plan}': {e!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
