#!/bin/sh
# Builds the learner's files of lecture K (under MINE) in place of the
# reference ones, everything else from the tree, and prints the build folder.
# One copy of the tree serves every lecture (GRADE_DIR/src): the first copy
# keeps the tree's file times and starts from the reference build's objects;
# after that a file is copied only when it changed, with a new time, so make
# rebuilds only what changed since the last build, of this lecture or another.
# The build log is GRADE_DIR/build.log; if the build fails, its errors go to
# stderr and the status is 1. make grade and make mine use it.
# usage: tests/grader/learner_build.sh K MINE BUILD GRADE_DIR TARGET...   (targets relative to the build folder)
set -u
k=$1 MINE=$2 BUILD=$3 GRADE_DIR=$4
shift 4
cd "$(dirname "$0")/../.." || exit 2
src=$GRADE_DIR/src out=$GRADE_DIR/build
theirs=" $(tools/lectures.sh files "$k" | tr '\n' ' ') "
if [ ! -d "$src" ]; then
  mkdir -p "$src" "$out"
  tar cf - Makefile common tests tools lc*_* | tar xf - -C "$src"
  cp -rp "$BUILD/obj" "$BUILD/lib" "$BUILD/config" "$BUILD/modules" "$out/" 2>/dev/null
fi
# The files the learner's build must hold, as "hash path": the tree's, with the
# learner's in place of theirs; and what the copy holds now. One sha1sum over
# each side (a process per file cost a third of a second a grade); a file whose
# hash differs, or that the copy lacks, is copied, with a new time.
find Makefile common tests tools lc*_* -type f ! -name '*.md' | LC_ALL=C sort >"$GRADE_DIR/files"
source_of() {  # where tree file $1 comes from: the learner's copy of one of theirs, else the tree
  case $theirs in *" $1 "*) [ -e "$MINE/$1" ] && { echo "$MINE/$1"; return; } ;; esac
  echo "$1"
}
want() {
  tr '\n' '\0' <"$GRADE_DIR/files" | xargs -0 sha1sum
  for f in $theirs; do
    s=$(source_of "$f")
    [ "$s" = "$f" ] || printf '%s  %s\n' "$(sha1sum <"$s" | cut -d' ' -f1)" "$f"
  done
}
(cd "$src" && tr '\n' '\0' <"$GRADE_DIR/files" | xargs -0 sha1sum 2>/dev/null) >"$GRADE_DIR/have"
want | awk 'NR == FNR { have[substr($0, 43)] = $1; next }
            { want[substr($0, 43)] = $1 }
            END { for (f in want) if (have[f] != want[f]) print f }' "$GRADE_DIR/have" - |
while read -r f; do
  mkdir -p "$src/$(dirname "$f")"
  cp "$(source_of "$f")" "$src/$f"
done
# The reference build's choice of the products' library, measured once: the
# learner's programs must multiply as the references did.
[ -f "$BUILD/gemm_choice.h" ] && { cmp -s "$BUILD/gemm_choice.h" "$out/gemm_choice.h" || cp -p "$BUILD/gemm_choice.h" "$out/"; }
# And --comm auto's fit, where make comm-fit measured one (make mine runs as
# the build's programs do; the graded checks name their backends).
if [ -f "$BUILD/comm_fit" ]; then cmp -s "$BUILD/comm_fit" "$out/comm_fit" || cp -p "$BUILD/comm_fit" "$out/"
else rm -f "$out/comm_fit"; fi
targets=""
for t in "$@"; do targets="$targets $out/$t"; done
# The reference build's CUDA setting, so its objects serve here too. The test
# programs without debug information (-g0): a third of their compile time, for
# every grade, and GCC's -g never changes the instructions it emits.
# At the lowest priority: ranks that wait on each other beside a compiler
# wait for the processor at every message (make test grades beside other
# grades' builds; the reference of lecture 5 took 19 s there against 3 s
# alone, and 8 s once the compilers made way).
cuda=$(sed -n 's/^CUDA=\([^ ]*\) .*/\1/p' "$BUILD/config" 2>/dev/null)
# shellcheck disable=SC2086
if ! nice -n 19 make -C "$src" --no-print-directory -j"$(nproc)" BUILD="$out" CUDA="${cuda:-0}" TEST_CFLAGS=-g0 $targets \
    >"$GRADE_DIR/build.log" 2>&1; then
  echo "your files do not build (all of $GRADE_DIR/build.log; the errors):" >&2
  grep -E 'error|Error' "$GRADE_DIR/build.log" | head -n 20 | sed 's/^/    /' >&2
  exit 1
fi
echo "$out"
