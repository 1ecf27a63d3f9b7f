#!/bin/sh
# make mine LC=K [N=n] [ARGS='...']: your build of lecture K's stage, run the
# way make run runs the reference: the training, the words, the memory and
# communication reports and the summary line, from your code. Your files
# (MINE, default mywork/) replace the reference ones; lecture K's stage runs
# on N ranks (default 4; lc0 on 1). ARGS are the stage's own options (e.g.
# ARGS='--steps 300 --comm ring': lecture 1's ring is used with --comm ring).
set -u
cd "$(dirname "$0")/../.." || exit 2
top=$(pwd)
. tools/shown.sh
K=${LC:-}
MINE=${MINE:-mywork}
BUILD=${BUILD:-build}
GRADE_DIR=${GRADE_DIR:-$BUILD/grade}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
case $GRADE_DIR in /*) ;; *) GRADE_DIR=$top/$GRADE_DIR ;; esac
case $K in
  [0-9]) ;;
  *) echo "make mine: give the lecture, e.g. make mine LC=2 (one of: $(tools/lectures.sh))" >&2; exit 2 ;;
esac
stage=$(ls -d lc"$K"_*/ 2>/dev/null | head -n 1)
stage=${stage%/}
[ -n "$stage" ] || { echo "make mine: no lecture $K (one of: $(tools/lectures.sh))" >&2; exit 2; }
n=${N:-4}
[ "$K" = 0 ] && n=1
case $n in ''|*[!0-9]*|0) printf '%s\n' "make mine: N=$(shown "$n"): a number of ranks, 1 or more" >&2; exit 2 ;; esac
# A rank takes about 180 MiB here (MPI, the word list, the default model): more
# ranks than the node's memory holds would wake the out-of-memory killer.
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo 2>/dev/null)
if [ ${#n} -gt 6 ] || { [ -n "$avail" ] && [ "$n" -gt $((avail / 200)) ]; }; then
  echo "make mine: N=$n: this node has ${avail:-?} MiB available, room for about $((${avail:-0} / 200)) ranks of 200 MiB" >&2
  exit 2
fi
started=""
for f in $(tools/lectures.sh files "$K"); do [ -e "$MINE/$f" ] && started="$started $MINE/$f"; done
[ -n "$started" ] || printf '%s\n' "make mine: nothing of lecture $K under $(shown "$MINE")/ yet (make exercise LC=$K): this is the reference" >&2
out=$(tests/grader/learner_build.sh "$K" "$MINE" "$BUILD" "$GRADE_DIR" "bin/$stage") || exit 1  # it said why
echo "== $stage from your files:${started:- none (the reference)}, $n rank$([ "$n" -gt 1 ] && echo s)"
# ARGS are split into words, never expanded as file patterns.
set -f
# shellcheck disable=SC2086
exec tools/launch "$n" "$out/bin/$stage" ${ARGS:-}
