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
  # C++ unit tests
  libgtest-dev
  # Python for test-model generation and references (use /usr/bin/python3)
  python3 python3-numpy python3-onnx python3-torch python3-torchvision
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
