#!/bin/sh
# The course's exercise files, found by their markers (// EXERCISE lcK.N:).
#   tools/lectures.sh            the lectures that have exercises: 0 1 2 ...
#   tools/lectures.sh files K    lecture K's files, relative to the top
set -eu
cd "$(dirname "$0")/.."
sources() { ls common/*.c common/*.cu lc*/*.c 2>/dev/null; }
if [ "${1:-}" = files ]; then
  grep -l "// EXERCISE lc${2:?}\." $(sources) 2>/dev/null || true
else
  grep -ho '// EXERCISE lc[0-9]*\.' $(sources) | sed 's|// EXERCISE lc||; s|\.||' | sort -un | tr '\n' ' ' | sed 's/ $//'
  echo
fi
