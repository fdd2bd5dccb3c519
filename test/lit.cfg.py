# -*- Python -*-
# lit configuration for the pipe regression tests: hermetic, fast tests of
# pipe-opt on small .mlir and ONNX-text inputs.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "PIPE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".onnxtxt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.pipe_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "Unit"]

config.substitutions.append(("%pipe_src_root", config.pipe_src_root))
config.substitutions.append(("%pipe_obj_root", config.pipe_obj_root))
# Debian's Python (numpy, onnx 1.12) for the scripts that make bad models
# and check plans. What needs PyTorch, onnxruntime, a C++ compiler or MPI is
# an integration test (integration_test/).
config.substitutions.append(("%python", "/usr/bin/python3"))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# FileCheck, not and count live with LLVM's tools; RUN lines may start with
# them.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.pipe_tools_dir, config.llvm_tools_dir]
tools = ["pipe-opt", "pipe-onnx-txt2pb"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# nvcc 13, the CUDA toolkit of these machines (for the CUDA target's errors
# about architectures it cannot build).
import shutil
import subprocess
nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
if os.path.exists(nvcc) and "release 13." in subprocess.run(
        [nvcc, "--version"], capture_output=True, text=True).stdout:
    config.available_features.add("nvcc13")
