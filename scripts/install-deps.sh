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
  # V100 (sm_70) stages: CUDA 13 cannot build Volta; clang compiles them
  # against the CUDA 12 pieces below
  clang-22
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

# CUDA 12 for V100 (sm_70) stages, which CUDA 13 cannot build: PyPI's
# wheels hold ptxas and libdevice, the runtime, cuBLASLt and NCCL (2.28.9,
# the CUDA 13 install's version) but no nvcc; clang-22 compiles against the
# CUDA root assembled from them in .cuda12/root (docs/cuda-target.md).
CUDA12_WHEELS=(nvidia-cuda-nvcc-cu12==12.9.86 nvidia-cuda-runtime-cu12==12.9.79
               nvidia-cublas-cu12==12.9.1.4 nvidia-nccl-cu12==2.28.9)
CUDA12="$(cd "$(dirname "$0")/.." && pwd)/.cuda12"
stamp="${CUDA12_WHEELS[*]}"
if [ "$(cat "$CUDA12/root/.wheels" 2>/dev/null)" = "$stamp" ]; then
  echo "install-deps: .cuda12 has ${CUDA12_WHEELS[*]}"
else
  echo "install-deps: installing ${CUDA12_WHEELS[*]} into .cuda12"
  rm -rf "$CUDA12"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
    --target "$CUDA12/wheels" "${CUDA12_WHEELS[@]}"
  wheels="$CUDA12/wheels/nvidia"
  root="$CUDA12/root"
  mkdir -p "$root/bin" "$root/include" "$root/lib64"
  ln -s "$wheels/cuda_nvcc/bin/ptxas" "$root/bin/ptxas"
  ln -s "$wheels/cuda_nvcc/nvvm" "$root/nvvm"
  for part in cuda_runtime cuda_nvcc cublas nccl; do
    for entry in "$wheels/$part/include/"*; do
      [ -e "$root/include/$(basename "$entry")" ] || ln -s "$entry" "$root/include/"
    done
  done
  for library in cuda_runtime/lib/libcudart.so.12 cublas/lib/libcublasLt.so.12 \
                 nccl/lib/libnccl.so.2; do
    ln -s "$wheels/$library" "$root/lib64/"
    ln -s "$(basename "$library")" "$root/lib64/$(basename "$library" | sed 's/\.so\..*/.so/')"
  done
  echo '{"cuda": {"name": "CUDA SDK", "version": "12.9.1"}}' > "$root/version.json"
  echo "$stamp" > "$root/.wheels"
fi
