# -*- Python -*-
# lit configuration for the pipe integration tests: what needs more than
# pipe-opt and small inputs. Each test says what it needs with REQUIRES:
#   torch        Debian's Python with PyTorch (exports and references);
#   onnxruntime  the project's .venv with onnxruntime (a reference);
#   cxx          a C++ compiler (--emit=binaries);
#   mpi          mpirun (pipelines of several stages);
#   matplotlib   Debian's Python with matplotlib (plan pictures);
#   onnx-testdata ONNX's backend test data (libonnx-testdata).
# A test whose feature is missing is reported unsupported, unless
# PIPE_REQUIRE_ALL_FEATURES=1 (CI sets it): then lit stops and names it.

import glob
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "PIPE-INTEGRATION"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.pipe_obj_root, "integration_test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

python = "/usr/bin/python3"
venv_python = os.path.join(config.pipe_src_root, ".venv", "bin", "python")
config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%pipe_src_root", config.pipe_src_root))
config.substitutions.append(("%venv_python", venv_python))
config.substitutions.append(("%python", python))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["pipe-opt", "pipe-onnx-txt2pb"],
    [config.pipe_tools_dir, config.llvm_tools_dir])


def imports(interpreter, module):
    """Whether `interpreter` exists and imports `module`."""
    if not os.path.exists(interpreter):
        return False
    return subprocess.run([interpreter, "-c", "import " + module],
                          stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


# The CUDA toolkit of these machines (nvcc 13), and PyPI's cuobjdump in
# .venv (scripts/install-deps.sh).
nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
nvcc13 = os.path.exists(nvcc) and "release 13." in subprocess.run(
    [nvcc, "--version"], capture_output=True, text=True).stdout
cuobjdump = next(iter(glob.glob(os.path.join(
    config.pipe_src_root, ".venv", "lib", "python3*", "site-packages",
    "nvidia", "cu13", "bin", "cuobjdump"))), "cuobjdump")
config.substitutions.append(("%cuobjdump", cuobjdump))

features = {
    "torch": imports(python, "torch"),
    "onnxruntime": imports(venv_python, "onnxruntime"),
    "cxx": shutil.which("c++") is not None,
    "mpi": shutil.which("mpirun") is not None,
    "matplotlib": imports(python, "matplotlib"),
    "onnx-testdata": os.path.isdir("/usr/share/libonnx-testdata/data/node"),
    "cuobjdump": os.access(cuobjdump, os.X_OK),
    # V100 stages: clang-22 and the CUDA 12 root of .cuda12.
    "cuda12": os.access("/usr/lib/llvm-22/bin/clang++", os.X_OK) and
              os.path.exists(os.path.join(config.pipe_src_root, ".cuda12",
                                          "root", "version.json")),
}
for feature, available in features.items():
    if available:
        config.available_features.add(feature)
# What the machine has or not, which no install script changes: the CUDA
# toolkit (the CUDA target's binaries need it; its sources do not), and a
# GPU (a CUDA program started without one must fail cleanly).
if nvcc13:
    config.available_features.add("nvcc13")
else:
    lit_config.note("no CUDA 13 nvcc: the tests that build CUDA stages "
                    "are skipped")
if not os.path.exists("/dev/nvidia0"):
    config.available_features.add("no-gpu")
missing = sorted(f for f, available in features.items() if not available)
if missing and os.environ.get("PIPE_REQUIRE_ALL_FEATURES") == "1":
    lit_config.fatal("integration tests need what is missing here: " +
                     ", ".join(missing) + " (scripts/install-deps.sh installs it)")
