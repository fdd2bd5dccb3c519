#!/usr/bin/env bash
# Command 2 of the README: install what is needed, build, and run the whole
# test suite (lit + FileCheck regression and integration tests and the
# GoogleTest units).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}

# check-pipe builds every test dependency, then runs lit over the hermetic
# regression tests (test/) and the unit tests; check-pipe-integration over
# the integration tests (integration_test/: PyTorch exports, compiled
# programs, MPI), each of which must find what it needs.
log=$(mktemp)
status=0
LIT_OPTS="${LIT_OPTS:--sv}" ninja -C "$BUILD_DIR" check-pipe 2>&1 | tee "$log" || status=$?
PIPE_REQUIRE_ALL_FEATURES=1 LIT_OPTS="${LIT_OPTS:--sv}" \
  ninja -C "$BUILD_DIR" check-pipe-integration 2>&1 | tee -a "$log" || status=$?
# One summary line for CI, in the form "N passed, N failed".
awk '/^ *Passed *:/ {p += $NF} /^ *(Failed|Unresolved|Timed Out|Unexpectedly Passed) *:/ {f += $NF}
     END {printf "lit: %d passed, %d failed\n", p, f}' FS=':' "$log"
rm -f "$log"
exit "$status"
