#!/usr/bin/env bash
# Installs every system package pipe needs to build and test, on Debian 12.
# Non-interactive and idempotent: safe to run again on a machine that has them.
set -euo pipefail

PACKAGES=(
  # Build
  build-essential cmake ninja-build git
  # LLVM/MLIR 22 (lit, FileCheck and not come with llvm-22-tools)
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  # ONNX C++ and protobuf
  libonnx-dev libprotobuf-dev protobuf-compiler
  # ONNX backend test data (conformance suite)
  libonnx-testdata
  # CPU kernels of the runtime: the OpenMP build of OpenBLAS, and oneDNN
  # (built on the same OpenMP runtime) for convolutions
  libopenblas-openmp-dev libdnnl-dev
  # Pipeline stages: one process per stage, launched by mpirun; MPI carries
  # the tensors between CPU stages
  openmpi-bin libopenmpi-dev
  # C++ unit tests
  libgtest-dev
  # Python for test-model generation and references (use /usr/bin/python3)
  python3 python3-numpy python3-onnx python3-torch python3-torchvision
  python3-venv python3-pip
  # Plan and timeline pictures (python/render_plan.py)
  python3-matplotlib
)

# Independent references from PyPI, pinned: a current onnx (version_converter
# to opsets 18-21, onnx.reference) and onnxruntime. They live in .venv, which
# also sees Debian's torch; the compiler never depends on them. cuobjdump
# (not in the machine's CUDA 13 install; PyPI's oldest CUDA 13 one reads
# its cubins) lets the tests check which GPU code each CUDA stage holds.
PIP_PACKAGES=(onnx==1.23.2 onnxruntime==1.31.1 nvidia-cuda-cuobjdump==13.2.86)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} Debian packages present"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

VENV="$(cd "$(dirname "$0")/.." && pwd)/.venv"
if [ ! -x "$VENV/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
installed=$("$VENV/bin/python" -m pip freeze 2>/dev/null || true)
missing_pip=()
for p in "${PIP_PACKAGES[@]}"; do
  if ! grep -qxF -e "$p" <<< "$installed"; then missing_pip+=("$p"); fi
done
if [ "${#missing_pip[@]}" -gt 0 ]; then
  echo "install-deps: installing ${PIP_PACKAGES[*]} into .venv"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PIP_PACKAGES[@]}"
else
  echo "install-deps: .venv has ${PIP_PACKAGES[*]}"
fi
