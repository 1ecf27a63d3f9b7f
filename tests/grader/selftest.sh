#!/bin/sh
# The grader graded (make grade-selftest, part of make test):
#   1. the untouched skeleton of every lecture (make exercise) scores 0 on
#      every check, at one N: no stub passes by accident;
#   2. the reference, graded through the same path (make solution), scores full
#      marks on every lecture, at one N (make test runs every check at N = 1..4);
#   3. every known mistake of tests/grader/mistakes/*.sed, applied to a copy of the
#      reference file, loses each check it names, with the message it names
#      ("# check:" and "# says:" lines, in pairs; "# time-scale: S" shortens
#      the checks' budgets for a mistake that hangs; "# ranks: N" grades it
#      at N ranks instead of the lecture's usual N);
#   4. every right solution written another way (tests/grader/variants/*.sed: other
#      roundings, other branches, the same behaviour) scores full marks, at
#      each N its lecture grades (lc0: 1; others 1 to 4): no check fails right code;
#   5. FORMAT=gradescope and FORMAT=junit write files that Python's own parsers
#      read as their formats document them, with the terminal's checks and score.
# The grades run JOBS at once (default: the cores, at most 4), each slot with
# its own copy of the tree and build (the checks' budgets are processor time,
# which grades side by side do not stretch); the lines come out in order.
# usage: tests/grader/selftest.sh [BUILD_DIR]     (SELFTEST_ONLY=name: one mistake or variant)
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/../.." || exit 2
top=$(pwd)
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
work=$BUILD/selftest
mkdir -p "$work"
. tests/at_once.sh
JOBS=$(at_once selftest JOBS) || exit 2
fail() { echo "FAIL: $*"; }

# At which N a lecture's checks run here: one process for lc0, else 3 (uneven shards).
n_of() { [ "$1" = 0 ] && echo 1 || echo 3; }

# ----------------------------------------------------------------------------
# one item each, graded in slot $slot (its folders: $grade, $mine)

# 1. The skeleton of lecture $1: every check fails.
skeleton() {
  k=$1
  rm -rf "$mine"
  tools/learner/exercise.sh "$k" "$mine" >/dev/null || { fail "make exercise LC=$k"; return; }
  out=$work/skeleton-lc$k.out
  MINE=$mine LC=$k N="$(n_of "$k")" BUILD=$BUILD GRADE_DIR=$grade tests/grader/grade.sh >"$out" 2>&1
  passed=$(grep -c ' OK [0-9]*/[0-9]* (' "$out")
  checks=$(grep -c ' \(OK\|FAIL\) [0-9]*/[0-9]* (' "$out")
  if [ "$checks" -eq 0 ]; then fail "skeleton of lecture $k: no check ran"; sed 's/^/    /' "$out"
  elif [ "$passed" -ne 0 ]; then fail "skeleton of lecture $k passes $passed check(s) it must fail:"; grep ' OK ' "$out"
  else echo "skeleton of lecture $k: all $checks checks fail, as they must"; fi
}

# 2. The reference of lecture $1 through the grader's own path, at one N.
solution() {
  k=$1 out=$work/solution-lc$1.out
  if SOLUTION=1 LC=$k N="$(n_of "$k")" BUILD=$BUILD GRADE_DIR=$grade tests/grader/grade.sh >"$out" 2>&1; then
    echo "the reference of lecture $k: $(tail -n 1 "$out")"
  else fail "the reference of lecture $k does not score full marks:"; sed 's/^/    /' "$out"; fi
}

# 3. The known mistake $1 (a .sed file).
mistake() {
  m=$1 name=$(basename "$1" .sed)
  file=$(sed -n 's/^# file: //p' "$m")
  scale=$(sed -n 's/^# time-scale: //p' "$m")
  ranks=$(sed -n 's/^# ranks: //p' "$m")
  rm -rf "$mine"
  mkdir -p "$mine/$(dirname "$file")"
  sed -f "$m" "$file" >"$mine/$file"
  if cmp -s "$file" "$mine/$file"; then fail "$name: the mistake no longer applies to $file"; return; fi
  i=1
  for check in $(sed -n 's/^# check: //p' "$m"); do
    says=$(sed -n 's/^# says: //p' "$m" | sed -n "${i}p")
    i=$((i + 1))
    k=$(echo "$check" | sed 's/^lc\([0-9]*\)\..*/\1/')
    out=$work/mistake-$name-$check.out
    ZC_TIME_SCALE=${scale:-1} MINE=$mine LC=$k CHECK=$check N="${ranks:-$(n_of "$k")}" BUILD=$BUILD \
      GRADE_DIR=$grade \
      tests/grader/grade.sh >"$out" 2>&1
    if grep -q "^$check .* FAIL" "$out" && grep -qF -- "$says" "$out"; then
      echo "mistake $name: $check fails and says '$says'"
    else
      fail "mistake $name: want $check to fail saying '$says'; the grader said:"
      sed 's/^/    /' "$out"
    fi
  done
}

# 4. The right solution $1 (a .sed file) written another way: full marks.
variant() {
  v=$1 name=$(basename "$1" .sed)
  file=$(sed -n 's/^# file: //p' "$v")
  k=$(echo "$name" | sed 's/^lc\([0-9]*\)-.*/\1/')
  rm -rf "$mine"
  mkdir -p "$mine/$(dirname "$file")"
  sed -f "$v" "$file" >"$mine/$file"
  if cmp -s "$file" "$mine/$file"; then fail "$name: the variant no longer applies to $file"; return; fi
  out=$work/variant-$name.out
  if MINE=$mine LC=$k BUILD=$BUILD GRADE_DIR=$grade tests/grader/grade.sh >"$out" 2>&1; then
    echo "right solution $name: $(tail -n 1 "$out")"
  else
    fail "right solution $name does not score full marks:"
    grep -A3 ' FAIL ' "$out" | sed 's/^/    /'
  fi
}

# 5. The results files for a course's tools, from a grade that loses points.
formats() {
  rm -rf "$mine"
  mkdir -p "$mine/lc2_zero1"
  sed -f tests/grader/mistakes/lc2-clip-local-shard.sed lc2_zero1/zero1.c >"$mine/lc2_zero1/zero1.c"
  for format in gradescope junit; do
    out=$work/format-$format.out
    FORMAT=$format RESULTS=$work/results-$format MINE=$mine LC=2 N=3 BUILD=$BUILD GRADE_DIR=$grade \
      tests/grader/grade.sh >"$out" 2>&1
    if why=$(tests/grader/check_results.py "$format" "$work/results-$format" "$out"); then echo "$why"
    else fail "FORMAT=$format: $why"; fi
  done
}

# ----------------------------------------------------------------------------
# the items, in slots

items=$work/items
rm -rf "$items"
mkdir -p "$items"
{
  if [ -z "${SELFTEST_ONLY:-}" ]; then
    for k in $(tools/lectures.sh); do echo "skeleton $k"; done
    for k in $(tools/lectures.sh); do echo "solution $k"; done
  fi
  for m in tests/grader/mistakes/*.sed; do
    [ -z "${SELFTEST_ONLY:-}" ] || [ "$SELFTEST_ONLY" = "$(basename "$m" .sed)" ] && echo "mistake $m"
  done
  for v in tests/grader/variants/*.sed; do
    [ -z "${SELFTEST_ONLY:-}" ] || [ "$SELFTEST_ONLY" = "$(basename "$v" .sed)" ] && echo "variant $v"
  done
  [ -n "${SELFTEST_ONLY:-}" ] || echo "formats"
} | awk '{ printf "%d %s\n", NR, $0 }' >"$items/list"
# Each slot takes the next item no other slot has taken (mkdir is atomic), so
# a slot held by a mistake that hangs leaves the rest to the others; each
# item's lines in its own file, and a mark beside it where one failed.
j=0
while [ "$j" -lt "$JOBS" ]; do
  (
    grade=$work/grade$j mine=$work/mine$j
    # (item, not i: the functions above use i, k and out as their own)
    while read -r item what arg; do
      mkdir "$items/$item.taken" 2>/dev/null || continue  # another slot's
      "$what" $arg >"$items/$item.out" 2>&1 </dev/null
      grep -q '^FAIL: ' "$items/$item.out" && : >"$items/$item.failed"
    done <"$items/list"
  ) &
  j=$((j + 1))
done
wait
bad=0
while read -r item _; do
  cat "$items/$item.out" 2>/dev/null || { echo "FAIL: item $item gave no output"; bad=1; }
  [ -e "$items/$item.failed" ] && bad=1
done <"$items/list"
[ $bad -eq 0 ] && echo "grading self-test: passed"
exit $bad
