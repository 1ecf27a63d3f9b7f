#!/bin/sh
# The overlap checks under load: their verdicts must not depend on timing. With
# two busy loops per core running beside it, grades the reference and the two
# known mistakes that lose no overlap check but these (a launch that waits, a
# prefetch ignored) on lc3.2b, lc3.2c and lc4.1c at N = 2, 3, 4, ROUNDS times
# (default 50): the reference must pass every time and each mistake fail every
# time. Not part of make test (about 35 minutes for 50 rounds on 2 cores); its figures
# are in the README.
# usage: tests/grade_under_load.sh [BUILD_DIR] [ROUNDS]
set -u
BUILD=${1:-build}
ROUNDS=${2:-50}
cd "$(dirname "$0")/.." || exit 2
top=$(pwd)
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
work=$BUILD/load
rm -rf "$work"
mkdir -p "$work"

busy=""
for _ in $(seq $((2 * $(nproc)))); do
  sh -c 'while :; do :; done' &
  busy="$busy $!"
done
trap 'kill $busy 2>/dev/null' EXIT INT TERM

# Lecture 3 and 4 trees: the reference, and each mistake applied.
for m in none lc3-launch-waits lc4-no-prefetch; do
  mkdir -p "$work/$m"
  [ "$m" = none ] && continue
  file=$(sed -n 's/^# file: //p' "tests/mistakes/$m.sed")
  mkdir -p "$work/$m/$(dirname "$file")"
  sed -f "tests/mistakes/$m.sed" "$file" >"$work/$m/$file"
done

bad=0
for m in none lc3-launch-waits lc4-no-prefetch; do
  for k in 3 4; do
    case $m in lc3-*) [ $k = 3 ] || continue ;; lc4-*) [ $k = 4 ] || continue ;; esac
    checks=$([ $k = 3 ] && echo "lc3.2b lc3.2c" || echo "lc4.1c")
    for c in $checks; do
      pass=0 failed=0
      for _ in $(seq "$ROUNDS"); do
        if [ "$m" = none ]; then
          SOLUTION=1 LC=$k CHECK=$c N="2 3 4" BUILD=$BUILD GRADE_DIR=$work/grade-$m tools/grade.sh >"$work/out" 2>&1
        else
          MINE=$work/$m LC=$k CHECK=$c N="2 3 4" BUILD=$BUILD GRADE_DIR=$work/grade-$m tools/grade.sh >"$work/out" 2>&1
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
