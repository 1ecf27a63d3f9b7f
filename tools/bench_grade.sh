#!/bin/sh
# make bench-grade: how long the grader takes, lecture by lecture: the
# reference graded through the learner's path (make solution LC=K: every check
# at each of its N), R times (default 3), the median and the range of the
# wall-clock seconds, and the processor time of the median run.
# usage: tools/bench_grade.sh BUILD [R]
set -u
BUILD=${1:-build} R=${2:-3}
cd "$(dirname "$0")/.." || exit 2
case $R in ''|*[!0-9]*|0) echo "bench-grade: R is a whole number of runs, 1 or more (got '$R')" >&2; exit 2 ;; esac
out=$BUILD/bench-grade
mkdir -p "$out"
SOLUTION=1 LC=0 BUILD=$BUILD GRADE_DIR=$out/grade tests/grader/grade.sh >"$out/warm" 2>&1 ||
  { echo "bench-grade: the reference does not grade (see $out/warm)" >&2; exit 1; }
echo "lecture  runs  median s  range s      user s  sys s   (make solution LC=K, $(nproc) cores)"
for k in $(tools/lectures.sh); do
  : >"$out/times"
  for _ in $(seq "$R"); do
    /usr/bin/time -f '%e %U %S' -o "$out/t" env SOLUTION=1 LC="$k" BUILD="$BUILD" GRADE_DIR="$out/grade" \
      tests/grader/grade.sh >"$out/log" 2>&1 || { echo "bench-grade: lecture $k does not grade (see $out/log)" >&2; exit 1; }
    cat "$out/t" >>"$out/times"
  done
  sort -n "$out/times" | awk -v k="$k" -v n="$R" '
    { e[NR] = $1; u[NR] = $2; s[NR] = $3 }
    END { m = int((n + 1) / 2); printf "lc%-6s %5d  %8.2f  %5.2f-%-5.2f  %6.2f  %5.2f\n", k, n, e[m], e[1], e[n], u[m], s[m] }'
done
