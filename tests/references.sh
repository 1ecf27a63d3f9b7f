#!/bin/sh
# The references a grade is held to, made now if they are missing or older
# than the build that makes them: lc0's loss curves and models (tests/refs.sh)
# and the tree's own trails, the whole state after every step of the graded
# runs (tests/trails.sh). make grade and make grade-mutants call it before any
# check runs (the mutation run grades several mutants at once, which must not
# each remake them).
# usage: tests/references.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
ref=$BUILD/test/ref
mkdir -p "$ref"
# One at a time: two grades started together (make test beside make grade, the
# mutation run's slots) wait for the one that makes the references.
exec 9>"$ref/.lock"
flock 9 || { echo "cannot lock $ref/.lock" >&2; exit 1; }
if [ ! -s "$ref/plain.loss" ] || [ "$BUILD/bin/lc0_adam" -nt "$ref/plain.loss" ]; then
  echo "making the lc0 references ($ref)"
  tests/refs.sh "$BUILD" >/dev/null || { echo "the lc0 references failed to train (tests/refs.sh $BUILD)" >&2; exit 1; }
fi
stale=0
[ -f "$ref/trails/done" ] || stale=1
for p in test_lc0 test_lc1 test_lc2 test_lc3 test_lc4 test_lc5; do
  [ "$BUILD/test/$p" -nt "$ref/trails/done" ] && stale=1
  [ "$ref/plain.loss" -nt "$ref/trails/done" ] && stale=1
done
if [ "$stale" = 1 ]; then
  echo "recording the reference trails ($ref/trails; a minute or two, once per build)"
  tests/trails.sh "$BUILD" >/dev/null || { echo "the reference trails failed to record (tests/trails.sh $BUILD)" >&2; exit 1; }
fi
exit 0
