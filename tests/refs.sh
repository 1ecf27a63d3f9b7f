#!/bin/sh
# Trains lc0 (the tree's, in BUILD) once on each configuration of
# tests/ref_configs and keeps its loss curve and final model in REF_DIR
# (default BUILD/test/ref): the reference that later stages are graded against
# (tests/run.sh, make grade). Prints the reason and exits 1 if a reference
# fails to train.
# usage: tests/refs.sh [BUILD_DIR [REF_DIR]]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
ref=${2:-$BUILD/test/ref}
mkdir -p "$ref"
bad=0
# Read from the file, not a pipe, so the verdict survives the loop.
while IFS='|' read -r name common _only; do
  case $name in ''|'#'*) continue ;; esac
  # shellcheck disable=SC2086
  if ! timeout 900 "$BUILD/bin/lc0_adam" $common --sample 0 --log-every 0 --loss-log "$ref/$name.loss" \
    --save-model "$ref/$name.safetensors" >"$ref/$name.out" 2>&1; then
    echo "FAILED: reference $name"; cat "$ref/$name.out"
    bad=1
  fi
done < tests/ref_configs
exit $bad
