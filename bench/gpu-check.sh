#!/usr/bin/env bash
# The CUDA target's GPU check (docs/cuda-target.md), in two halves:
#
#   bash bench/gpu-check.sh prepare   here: compiles every program for an
#                                     H200 (sm_90), computes the CPU
#                                     target's reference losses, and packs
#                                     MPI and the libraries the programs
#                                     need into bench/out/gpu-check/
#   bash bench/gpu-check.sh run       on the GPU machine, in one call of the
#                                     device tool with
#                                     carry=["bench/out/gpu-check"]: checks,
#                                     times, and prints one table; logs go
#                                     under $OUT
#
# bench/gpu_check.py does the work; see its docstring for what is checked
# and timed.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  prepare) exec /usr/bin/python3 bench/gpu_check.py prepare bench/out/gpu-check ;;
  run) exec python3 -u bench/gpu_check.py run bench/out/gpu-check ;;
  *) echo "usage: bench/gpu-check.sh prepare|run" >&2; exit 2 ;;
esac
