#!/bin/sh
# Verdicts under load: they must not depend on timing. Not part of make test
# (tens of minutes); its figures are in the README.
#   overlap (default): with two busy loops per core beside it, grades the
#     reference and the two known mistakes that lose no overlap check but
#     these (a launch that waits, a prefetch ignored) on lc3.2b, lc3.2c and
#     lc4.1c at N = 2, 3, 4, ROUNDS times (default 50): the reference must
#     pass every time and each mistake fail every time.
#   all: with four busy loops per core beside it, grades the reference of
#     every lecture, every check at every N (make solution), ROUNDS times
#     (default 10): full marks every time.
# Prints the load average at the start and the end of each round.
# usage: tests/grader/under_load.sh [BUILD_DIR] [ROUNDS] [overlap|all]
set -u
BUILD=${1:-build}
WHAT=${3:-overlap}
case $WHAT in overlap) ROUNDS=${2:-50} loops=2 ;; all) ROUNDS=${2:-10} loops=4 ;;
  *) echo "usage: tests/grader/under_load.sh [BUILD_DIR] [ROUNDS] [overlap|all]" >&2; exit 2 ;; esac
cd "$(dirname "$0")/../.." || exit 2
top=$(pwd)
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
work=$BUILD/load
rm -rf "$work"
mkdir -p "$work"
tests/references.sh "$BUILD" || exit 1  # made before the load, once

busy=""
for _ in $(seq $((loops * $(nproc)))); do
  sh -c 'while :; do :; done' &
  busy="$busy $!"
done
trap 'kill $busy 2>/dev/null' EXIT INT TERM
load() { cut -d' ' -f1 /proc/loadavg; }
sleep 60  # the load average catches up with the loops

bad=0
if [ "$WHAT" = all ]; then
  full=0
  for r in $(seq "$ROUNDS"); do
    before=$(load) t0=$(date +%s)
    SOLUTION=1 BUILD=$BUILD GRADE_DIR=$work/grade tests/grader/grade.sh >"$work/out-$r" 2>&1
    rc=$?
    score=$(tail -n 1 "$work/out-$r")
    echo "round $r: $score, $(($(date +%s) - t0)) s, load average $before then $(load) on $(nproc) cores"
    if [ "$rc" = 0 ]; then full=$((full + 1)); else bad=1; grep -A3 ' FAIL ' "$work/out-$r"; fi
  done
  echo "every lecture's reference: full marks in $full of $ROUNDS rounds, $loops busy loops per core beside it"
  exit $bad
fi

# Lecture 3 and 4 trees: the reference, and each mistake applied.
for m in none lc3-launch-waits lc4-no-prefetch; do
  mkdir -p "$work/$m"
  [ "$m" = none ] && continue
  file=$(sed -n 's/^# file: //p' "tests/grader/mistakes/$m.sed")
  mkdir -p "$work/$m/$(dirname "$file")"
  sed -f "tests/grader/mistakes/$m.sed" "$file" >"$work/$m/$file"
done

for m in none lc3-launch-waits lc4-no-prefetch; do
  for k in 3 4; do
    case $m in lc3-*) [ $k = 3 ] || continue ;; lc4-*) [ $k = 4 ] || continue ;; esac
    checks=$([ $k = 3 ] && echo "lc3.2b lc3.2c" || echo "lc4.1c")
    for c in $checks; do
      pass=0 failed=0
      for _ in $(seq "$ROUNDS"); do
        if [ "$m" = none ]; then
          SOLUTION=1 LC=$k CHECK=$c N="2 3 4" BUILD=$BUILD GRADE_DIR=$work/grade-$m tests/grader/grade.sh >"$work/out" 2>&1
        else
          MINE=$work/$m LC=$k CHECK=$c N="2 3 4" BUILD=$BUILD GRADE_DIR=$work/grade-$m tests/grader/grade.sh >"$work/out" 2>&1
        fi
        pass=$((pass + $(grep -c ' OK ' "$work/out"))) failed=$((failed + $(grep -c ' FAIL ' "$work/out")))
      done
      runs=$((pass + failed))
      if [ "$m" = none ]; then want="passes"; [ "$failed" -eq 0 ] || bad=1
      else want="fails"; [ "$pass" -eq 0 ] || bad=1; fi
      echo "$([ "$m" = none ] && echo reference || echo "$m") $c at N = 2, 3, 4: $pass passed, $failed failed of $runs (must: $want every time)"
    done
  done
done
uptime
exit $bad
