#!/bin/sh
# make diff-mine LC=K: the learner's files of lecture K against the reference,
# as a unified diff (inside the exercise regions: your code and the reference's).
# usage: tools/learner/diff_mine.sh [K [MINE]]     (else LC and MINE from the environment)
set -eu
cd "$(dirname "$0")/../.."
K=${1:-${LC:-}}
MINE=${2:-${MINE:-mywork}}
[ -n "$K" ] || { echo "make diff-mine: give the lecture, e.g. make diff-mine LC=2" >&2; exit 2; }
files=$(tools/lectures.sh files "$K")
[ -n "$files" ] || { echo "make diff-mine: lecture $K has no exercises" >&2; exit 2; }
for f in $files; do
  if [ -e "$MINE/$f" ]; then diff -u "$f" "$MINE/$f" || true
  else echo "($MINE/$f not started: make exercise LC=$K)"; fi
done
