#!/bin/sh
# make exercise LC=K: the learner's copies of lecture K's exercise files under
# MINE (default mywork/, which git ignores), at the same relative paths, with
# the lecture's exercise regions replaced by stubs (tools/learner/exercise.awk). A file
# that is already there is never overwritten.
# usage: tools/learner/exercise.sh [K [MINE]]      (else LC and MINE from the environment)
set -eu
cd "$(dirname "$0")/../.."
K=${1:-${LC:-}}
MINE=${2:-${MINE:-mywork}}
case $K in
  [0-9]) ;;
  *) echo "make exercise: give the lecture, e.g. make exercise LC=2 (LC is one of: $(tools/lectures.sh))" >&2; exit 2 ;;
esac
files=$(tools/lectures.sh files "$K")
if [ -z "$files" ]; then
  echo "make exercise: lecture $K has no exercises (LC is one of: $(tools/lectures.sh))" >&2; exit 2
fi
echo "lecture $K, your files (under $MINE/):"
for f in $files; do
  dst=$MINE/$f
  if [ -e "$dst" ]; then
    echo "  kept     $dst  (already yours: delete it to start over)"
    continue
  fi
  mkdir -p "$(dirname "$dst")"
  awk -v lc="lc$K." -f tools/learner/exercise.awk "$f" > "$dst.tmp"
  mv "$dst.tmp" "$dst"
  echo "  created  $dst"
done
echo
echo "the exercises:"
grep -h "// EXERCISE lc$K\." $files | sed 's|^[ \t]*// EXERCISE |  |' | awk -F: '!seen[$1]++' | sort -s -V -t: -k1,1
readme=$(ls -d lc"$K"_*/ | head -n 1)README.md
cat <<MSG

Each stub says what to write and prints "exercise lc$K.N not done yet" when it
runs, so the stage still builds and runs. Read $readme ("Exercise"), then:
  make grade LC=$K                    grade your files (each check at each of its N)
  make grade LC=$K CHECK=lc$K.1a N=3   one check, at one N
  make diff-mine LC=$K                your code against the reference
  make solution LC=$K                 the reference, graded the same way
MSG
