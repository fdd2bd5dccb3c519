#!/usr/bin/env python3
"""The CUDA target's GPU check: prepare here, run on the GPU machine.

    gpu_check.py prepare FOLDER   (here: Debian's torch 1.13 and pipe-opt)
    gpu_check.py run FOLDER       (the GPU machine: torch 2.x with CUDA;
                                   no MLIR, no MPI of its own)

`prepare` compiles every program for an H200 (sm_90) into FOLDER:
- gpt/: the GPT of python/train_reference.py (b 4, M 4, AdamW), its inputs
  for 20 steps, and the CPU target's losses over them (cpu-losses.json);
  gpt-1/, the model as one CUDA stage; gpt-2/, two stage processes that
  share the one GPU (two devices with "gpu": 0, so host-staged MPI).
- gpt2s/: a GPT-2-small-sized training stage (vocabulary 50257, d 768, 12
  layers, 12 heads, T 512, microbatch 4, SGD), one CUDA stage; its
  weights.bin with the parameters zeroed and gzipped (they are drawn on
  the GPU machine: 500 MB do not travel).
- elementwise/: relu(x * 0.5 + 0.25) over 64 Mi floats (256 MiB), an
  inference program of one fused kernel.
- gemm/: the sum of A B for two 8192 x 8192 float32 parameters, an
  inference program dominated by one cuBLASLt call site.
- mpi/ (Debian's OpenMPI, unpacked) and lib/ (libonnx, libprotobuf).

`run` then, in one call:
1. trains gpt-1 and gpt-2 for 20 steps and checks every loss against the
   CPU target's within 1e-4 relative (fp32, TF32 off: the exact mode);
   bf16 is reported as not built until --precision exists;
2. times, from each program's --trace: the GPT-2-small stage's forward plus
   backward per microbatch, against PyTorch eager on the same model and
   shapes (fp32, TF32 off), and torch.compile where it runs; the fused
   kernel's bandwidth against a device-to-device copy; the GEMM program
   against torch.matmul in fp32, and an 8192^3 bf16 GEMM as the ceiling;
3. prints one table, and writes every log under $OUT (or FOLDER/logs).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = 20
MICROBATCHES = 4
RTOL = 1e-4
GPT2S = {"vocab": 50257, "d": 768, "heads": 12, "layers": 12, "seq": 512,
         "b": 4}
ELEMENTS = 64 << 20
GEMM_N = 8192
H200 = '{"name": "%s", "kind": "H200", "host": "gpu-host", "gpu": 0}'


def run(args: list[str], log: str | None = None, **kwargs) -> str:
    result = subprocess.run(args, capture_output=True, text=True, **kwargs)
    if log:
        with open(log, "a") as f:
            f.write("$ " + " ".join(args) + "\n" + result.stdout +
                    result.stderr + "\n")
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-4000:] + result.stderr[-4000:])
        raise SystemExit(f"gpu_check.py: failed: {' '.join(args)}")
    return result.stdout


def write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


# --------------------------------------------------------------------------
# prepare

def cluster(folder: str, devices: int) -> str:
    path = os.path.join(folder, f"h200x{devices}.json")
    write(path, '{"devices": [' + ", ".join(
        H200 % f"g{i}" for i in range(devices)) + "]}\n")
    return path


def zero_parameters(stage: str) -> None:
    """Zeroes the parameters of stage/weights.bin (constants stay) and
    gzips it, so that it travels; `draw_parameters` fills them there."""
    index = json.load(open(os.path.join(stage, "weights.json")))
    path = os.path.join(stage, "weights.bin")
    blob = bytearray(open(path, "rb").read())
    for tensor in index["tensors"]:
        blob[tensor["offset"]:tensor["offset"] + tensor["bytes"]] = bytes(
            tensor["bytes"])
    with gzip.open(path + ".gz", "wb", compresslevel=6) as f:
        f.write(blob)
    os.remove(path)


def export_gpt2s(folder: str) -> str:
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import torch
    import train_reference as ref
    c = GPT2S
    torch.manual_seed(0)
    model = ref.GPT(vocab=c["vocab"], d=c["d"], heads=c["heads"],
                    layers=c["layers"], seq=c["seq"])
    rng = np.random.default_rng(0)
    data = {"tokens": rng.integers(0, c["vocab"], (c["b"], c["seq"])),
            "labels": rng.integers(0, c["vocab"], (c["b"], c["seq"]))}
    ref.export_onnx(model, data, c["b"], os.path.join(folder, "model.onnx"))
    inputs = os.path.join(folder, "inputs")
    os.makedirs(inputs, exist_ok=True)
    for name, array in data.items():
        np.save(os.path.join(inputs, f"{name}.npy"), array.astype(np.int64))
    return os.path.join(folder, "model.onnx")


def prepare(folder: str) -> None:
    pipe_opt = os.path.join(ROOT, "build", "bin", "pipe-opt")
    if os.path.exists(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    log = os.path.join(folder, "prepare.log")
    one, two = cluster(folder, 1), cluster(folder, 2)

    # The GPT: the CPU target's losses, and the CUDA programs.
    ref = os.path.join(folder, "ref")
    run(["/usr/bin/python3", os.path.join(ROOT, "python",
                                          "train_reference.py"),
         "--out", ref, "--models", "gpt", "--optimizers", "adamw",
         "--steps", str(STEPS), "--microbatches", str(MICROBATCHES)], log)
    gpt = os.path.join(ref, "gpt")
    common = [os.path.join(gpt, "model.onnx"), "--train", "--optimizer=adamw",
              "--lr=1e-3", "--weight-decay=0.01",
              f"--microbatches={MICROBATCHES}"]
    run([pipe_opt] + common + ["--emit=binaries", "-o",
                               os.path.join(folder, "gpt-cpu")], log)
    metrics = os.path.join(folder, "cpu-metrics.jsonl")
    run([os.path.join(folder, "gpt-cpu", "run"), "--steps", str(STEPS),
         "--inputs", os.path.join(gpt, "inputs"), "--metrics", metrics], log)
    losses = [json.loads(line)["loss"] for line in open(metrics)]
    write(os.path.join(folder, "cpu-losses.json"), json.dumps(losses) + "\n")
    shutil.rmtree(os.path.join(folder, "gpt-cpu"))
    run([pipe_opt] + common + ["--cluster", one, "--emit=binaries", "-o",
                               os.path.join(folder, "gpt-1")], log)
    run([pipe_opt] + common + ["--cluster", two, "--stages", "2",
                               "--emit=binaries", "-o",
                               os.path.join(folder, "gpt-2")], log)
    shutil.copytree(os.path.join(gpt, "inputs"),
                    os.path.join(folder, "gpt-inputs"))
    shutil.rmtree(ref)

    # The GPT-2-small-sized stage.
    work = os.path.join(folder, "gpt2s-model")
    os.makedirs(work)
    model = export_gpt2s(work)
    run([pipe_opt, model, "--train", "--optimizer=sgd", "--lr=1e-4",
         "--cluster", one, "--emit=binaries", "-o",
         os.path.join(folder, "gpt2s")], log)
    shutil.copytree(os.path.join(work, "inputs"),
                    os.path.join(folder, "gpt2s-inputs"))
    shutil.rmtree(work)
    os.remove(os.path.join(folder, "gpt2s", "model.onnx"))
    zero_parameters(os.path.join(folder, "gpt2s", "stage0"))

    # One fused kernel over 256 MiB, and one large GEMM.
    write(os.path.join(folder, "elementwise.mlir"), f"""
func.func @main(%x: tensor<{ELEMENTS}xf32> {{pipe.name = "x"}}) -> (tensor<{ELEMENTS}xf32> {{pipe.name = "y"}}) {{
  %half = pipe.constant dense<0.5> : tensor<f32>
  %quarter = pipe.constant dense<0.25> : tensor<f32>
  %a = pipe.mul %x, %half : tensor<{ELEMENTS}xf32>, tensor<f32>
  %b = pipe.add %a, %quarter : tensor<{ELEMENTS}xf32>, tensor<f32>
  %y = pipe.relu %b : tensor<{ELEMENTS}xf32>
  return %y : tensor<{ELEMENTS}xf32>
}}
""")
    n = GEMM_N
    write(os.path.join(folder, "gemm.mlir"), f"""
pipe.parameter @a : tensor<{n}x{n}xf32> trainable = dense<0.0> : tensor<{n}x{n}xf32>
pipe.parameter @b : tensor<{n}x{n}xf32> trainable = dense<0.0> : tensor<{n}x{n}xf32>
func.func @main(%s: tensor<f32> {{pipe.name = "s"}}) -> (tensor<f32> {{pipe.name = "y"}}) {{
  %a = pipe.param_ref @a : tensor<{n}x{n}xf32>
  %b = pipe.param_ref @b : tensor<{n}x{n}xf32>
  %p = pipe.matmul %a, %b : tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>
  %r = pipe.reduce_sum %p axes [0, 1] : tensor<{n}x{n}xf32>
  %y = pipe.mul %r, %s : tensor<f32>, tensor<f32>
  return %y : tensor<f32>
}}
""")
    for name in ("elementwise", "gemm"):
        run([pipe_opt, os.path.join(folder, f"{name}.mlir"), "--cluster", one,
             "--emit=binaries", "-o", os.path.join(folder, name)], log)
    zero_parameters(os.path.join(folder, "gemm", "stage0"))

    # MPI for the two-process run, and the libraries the GPU machine lacks.
    mpi = os.path.join(folder, "mpi")
    debs = os.path.join(folder, "debs")
    os.makedirs(debs)
    run(["apt-get", "download", "openmpi-bin", "libopenmpi3",
         "openmpi-common", "libpmix2", "libhwloc15", "libevent-core-2.1-7",
         "libevent-pthreads-2.1-7", "libfabric1", "libucx0", "libpsm2-2",
         "libpsm-infinipath1", "librdmacm1", "libibverbs1", "libnl-3-200",
         "libnl-route-3-200"], log, cwd=debs)
    for deb in sorted(os.listdir(debs)):
        run(["dpkg", "-x", os.path.join(debs, deb), mpi], log)
    shutil.rmtree(debs)
    # dpkg -x makes no alternatives: mpirun is Debian's link to orterun.
    os.symlink("orterun", os.path.join(mpi, "usr", "bin", "mpirun"))
    lib = os.path.join(folder, "lib")
    os.makedirs(lib)
    arch = "/usr/lib/x86_64-linux-gnu"
    for name in ("libonnx.so.1", "libonnx_proto.so.1", "libprotobuf.so.32"):
        shutil.copy(os.path.realpath(os.path.join(arch, name)),
                    os.path.join(lib, name))
    size = run(["du", "-sm", folder]).split()[0]
    print(f"gpu_check.py: prepared {folder} ({size} MiB; the device tool "
          "carries up to 64)")


# --------------------------------------------------------------------------
# run

def draw_parameters(stage: str) -> None:
    """Unpacks weights.bin.gz and draws its parameters: LayerNorm scales
    1, biases 0, every other weight normal(0, 0.02), as GPT-2 does."""
    path = os.path.join(stage, "weights.bin")
    blob = bytearray(gzip.open(path + ".gz").read())
    rng = np.random.default_rng(0)
    for tensor in json.load(open(os.path.join(stage,
                                              "weights.json")))["tensors"]:
        count = tensor["bytes"] // 4
        name = tensor["name"]
        if "ln" in name.split(".")[-2:][0] and name.endswith("weight"):
            values = np.ones(count, np.float32)
        elif name.endswith("bias"):
            values = np.zeros(count, np.float32)
        else:
            values = (rng.standard_normal(count) * 0.02).astype(np.float32)
        blob[tensor["offset"]:tensor["offset"] + tensor["bytes"]] = \
            values.tobytes()
    with open(path, "wb") as f:
        f.write(blob)


def trace_spans(path: str) -> dict[str, list[float]]:
    """The durations (ms) of a --trace's compute events, by name's kind:
    F, B, update."""
    events = json.load(open(path))["traceEvents"]
    spans: dict[str, list[float]] = {}
    for event in events:
        if event.get("ph") == "X" and event.get("cat") == "compute":
            kind = event["name"].rstrip("0123456789")
            spans.setdefault(kind, []).append(event["dur"] / 1000)
    return spans


def median_after_first(values: list[float]) -> float:
    return statistics.median(values[1:] if len(values) > 1 else values)


def torch_gpt2s_ms(compiled: bool) -> float:
    """PyTorch's forward plus backward of the same model and shapes, per
    microbatch, fp32 with TF32 off: the median of 10 after 3 warm-ups."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import train_reference as ref
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    c = GPT2S
    model = ref.GPT(vocab=c["vocab"], d=c["d"], heads=c["heads"],
                    layers=c["layers"], seq=c["seq"]).cuda()
    for block in model.blocks:
        block.mask = block.mask.cuda()
    step = torch.compile(model) if compiled else model
    tokens = torch.randint(0, c["vocab"], (c["b"], c["seq"]), device="cuda")
    labels = torch.randint(0, c["vocab"], (c["b"], c["seq"]), device="cuda")
    times = []
    for i in range(13):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        step(tokens, labels).backward()
        end.record()
        torch.cuda.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end))
        model.zero_grad(set_to_none=True)
    return statistics.median(times)


def torch_ceilings() -> dict[str, float]:
    """A 1 GiB device-to-device copy (GB/s), an 8192^3 bf16 GEMM (TFLOP/s)
    and an 8192^3 fp32 GEMM with TF32 off (ms), medians of 10."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False

    def timed(fn) -> float:
        for _ in range(3):
            fn()
        times = []
        for _ in range(10):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)

    source = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    target = torch.empty_like(source)
    copy_ms = timed(lambda: target.copy_(source))
    n = GEMM_N
    a16 = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    bf16_ms = timed(lambda: a16 @ a16)
    a32 = torch.randn(n, n, device="cuda")
    fp32_ms = timed(lambda: a32 @ a32)
    return {"copy_gbps": 2 * source.numel() * 4 / copy_ms / 1e6,
            "bf16_tflops": 2 * n**3 / bf16_ms / 1e9, "fp32_gemm_ms": fp32_ms}


def cuda_library_dirs() -> list[str]:
    """Where the GPU machine keeps libcudart, libcublasLt and libnccl: its
    CUDA install, and PyTorch's nvidia-* packages (NCCL comes in
    nvidia-nccl-cu13)."""
    dirs = ["/usr/local/cuda/lib64", "/usr/local/cuda/lib"]
    try:
        import nvidia
        for base in nvidia.__path__:
            for root, _, files in os.walk(base):
                if any(f.startswith(("libnccl.so", "libcudart.so",
                                     "libcublasLt.so")) for f in files):
                    dirs.append(root)
    except ImportError:
        pass
    return [d for d in dirs if os.path.isdir(d)]


def row(rows: list[tuple[str, str, str]], *cells: str) -> None:
    """Adds a row of the table and prints it at once, so that a run cut
    short still shows what it measured."""
    rows.append(cells)
    print("  " + " | ".join(cells), flush=True)


def run_checks(folder: str) -> None:
    out = os.environ.get("OUT") or os.path.join(folder, "logs")
    os.makedirs(out, exist_ok=True)
    # Large inputs and outputs stay off $OUT, which brings back few files.
    scratch = os.path.join("/tmp", "gpu-check")
    os.makedirs(scratch, exist_ok=True)
    log = os.path.join(out, "gpu-check.log")
    mpi = os.path.join(folder, "mpi", "usr")
    env = os.environ
    env["PATH"] = os.path.join(mpi, "bin") + ":" + env["PATH"]
    env["OPAL_PREFIX"] = mpi
    env["LD_LIBRARY_PATH"] = ":".join(
        [os.path.join(mpi, "lib", "x86_64-linux-gnu"),
         os.path.join(folder, "lib")] + cuda_library_dirs() +
        [env.get("LD_LIBRARY_PATH", "")])
    # Debian's settings file is not where the carried OpenMPI looks: TCP
    # and shared memory without cross-process copies, no UCX or OFI.
    env["OMPI_MCA_pml"] = "ob1"
    env["OMPI_MCA_btl"] = "self,vader,tcp"
    env["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"
    rows: list[tuple[str, str, str]] = []
    print(run(["nvidia-smi", "-L"], log).strip())
    print(run(["mpirun", "--version"], log).splitlines()[0])
    missing = run(["ldd", os.path.join(folder, "gpt-1", "stage0", "stage0")],
                  log)
    if "not found" in missing:
        print("gpu_check.py: libraries not found:\n" + "\n".join(
            line for line in missing.splitlines() if "not found" in line))

    # 1. Correctness against the CPU target.
    reference = json.load(open(os.path.join(folder, "cpu-losses.json")))
    for program, what in (("gpt-1", "GPT, 1 stage"),
                          ("gpt-2", "GPT, 2 stages on one GPU")):
        metrics = os.path.join(out, f"{program}.jsonl")
        run([os.path.join(folder, program, "run"), "--steps", str(STEPS),
             "--inputs", os.path.join(folder, "gpt-inputs"), "--metrics",
             metrics], log)
        losses = [json.loads(line)["loss"] for line in open(metrics)]
        error = max(abs(a - b) / max(abs(b), 1e-30)
                    for a, b in zip(losses, reference))
        ok = len(losses) == STEPS and error <= RTOL
        row(rows, f"{what}: fp32 losses vs CPU, {STEPS} steps",
            f"max rel {error:.2e}", "ok" if ok else "FAIL")
    row(rows, "GPT: bf16 losses vs CPU (2e-2)", "not built",
        "--precision not in the CUDA target yet")

    # 2. Timing.
    ceilings = torch_ceilings()
    draw_parameters(os.path.join(folder, "gpt2s", "stage0"))
    trace = os.path.join(out, "gpt2s.trace.json")
    run([os.path.join(folder, "gpt2s", "run"), "--steps", "4", "--inputs",
         os.path.join(folder, "gpt2s-inputs"), "--trace", trace], log)
    spans = trace_spans(trace)
    ours = median_after_first(spans["F"]) + median_after_first(spans["B"])
    eager = torch_gpt2s_ms(compiled=False)
    row(rows, "GPT-2-small stage F+B per microbatch (b 4, T 512)",
        f"{ours:.2f} ms", f"eager {eager:.2f} ms ({eager / ours:.2f}x)")

    inputs = os.path.join(scratch, "elementwise-inputs")
    os.makedirs(inputs, exist_ok=True)
    np.save(os.path.join(inputs, "x.npy"),
            np.random.default_rng(0).standard_normal(ELEMENTS, np.float32))
    trace = os.path.join(out, "elementwise.trace.json")
    run([os.path.join(folder, "elementwise", "run"), "--inputs", inputs,
         "--outputs", os.path.join(scratch, "elementwise-outputs"), "--bench",
         "10", "--trace", trace], log)
    kernel_ms = median_after_first(trace_spans(trace)["F"])
    # The step reads x and writes its arena buffer (the fused kernel), then
    # copies that buffer into the output slot: 4 x 256 MiB in its span.
    bandwidth = 4 * ELEMENTS * 4 / kernel_ms / 1e6
    row(rows, "fused step over 256 MiB (kernel + output copy)",
        f"{bandwidth:.0f} GB/s", f"{bandwidth / ceilings['copy_gbps']:.0%} of "
        f"copy {ceilings['copy_gbps']:.0f} GB/s (target 70%)")

    draw_parameters(os.path.join(folder, "gemm", "stage0"))
    inputs = os.path.join(scratch, "gemm-inputs")
    os.makedirs(inputs, exist_ok=True)
    np.save(os.path.join(inputs, "s.npy"), np.array(1.0, np.float32))
    trace = os.path.join(out, "gemm.trace.json")
    run([os.path.join(folder, "gemm", "run"), "--inputs", inputs, "--outputs",
         os.path.join(scratch, "gemm-outputs"), "--bench", "10", "--trace",
         trace], log)
    gemm_ms = median_after_first(trace_spans(trace)["F"])
    row(rows, f"GEMM site {GEMM_N}^3 fp32 (+ a sum)", f"{gemm_ms:.2f} ms",
        f"torch.matmul {ceilings['fp32_gemm_ms']:.2f} ms "
        f"({ceilings['fp32_gemm_ms'] / gemm_ms:.0%}; target 90%)")
    row(rows, f"ceiling: bf16 GEMM {GEMM_N}^3", "-",
        f"{ceilings['bf16_tflops']:.0f} TFLOP/s")

    # Last: torch.compile may take long, or not run there.
    try:
        compiled = torch_gpt2s_ms(compiled=True)
        row(rows, "  GPT-2-small vs torch.compile", f"{ours:.2f} ms",
            f"compiled {compiled:.2f} ms ({compiled / ours:.2f}x)")
    except Exception as error:
        row(rows, "  GPT-2-small vs torch.compile", "-",
            f"did not run: {error}"[:60])

    # 3. The table.
    width = max(len(row[0]) for row in rows)
    table = "\n".join(f"{a:<{width}}  {b:>16}  {c}" for a, b, c in rows)
    write(os.path.join(out, "table.txt"), table + "\n")
    print(table)
    if any(row[2] == "FAIL" for row in rows):
        raise SystemExit("gpu_check.py: a correctness check failed")


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in ("prepare", "run"):
        raise SystemExit("usage: gpu_check.py prepare|run FOLDER")
    start = time.time()
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2])
    else:
        run_checks(sys.argv[2])
    print(f"gpu_check.py: {sys.argv[1]} took {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
