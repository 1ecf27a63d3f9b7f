#!/bin/sh
# Records the reference trails (tests/trail.h): the graded checks of each
# stage's test program, run by the tree's own build at every N they are graded
# at; those that train end to end keep the whole training state after every
# step in REF_DIR/trails (default BUILD/test/ref, where lc0's references are).
# A learner's build is compared with them (make grade), and so is the reference
# itself (make test: the same bits). Prints the reason and exits 1 if a check
# fails while recording.
# usage: tests/trails.sh [BUILD_DIR [REF_DIR]]     (TRAIL_JOBS: programs
#        recorded at once; default the cores, at most 4)
set -u
BUILD=${1:-build}
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.." || exit 2
# (the --one runs below inherit it)
[ "${2:-}" = --one ] || export ZC_REF="${2:-$BUILD/test/ref}"
export CK_FORK=no ZC_TRAIL=record

# (internal) One test program at one N: tests/trails.sh BUILD --one DIR P N,
# its output in DIR/P-N<N>.out and a file DIR/P-N<N>.failed (the checks' ids)
# if a check failed.
if [ "${2:-}" = --one ]; then
  dir=$3 p=$4 n=$5
  export ZC_TRAILS=$dir
  ids=$(awk -F'|' -v n="$n" '{ split($2, ns, " "); for (i in ns) if (ns[i] == n) print $1 }' "$dir/$p.checks" |
        tr '\n' ' ')
  launch="tools/launch $n"
  [ "$n" = 1 ] && launch=""
  # shellcheck disable=SC2086
  ZC_CHECKS="$ids" timeout 600 $launch "$BUILD/test/$p" >"$dir/$p-N$n.out" 2>&1 </dev/null ||
    echo "$ids" >"$dir/$p-N$n.failed"
  exit 0
fi

. tests/at_once.sh
jobs=$(at_once trails TRAIL_JOBS) || exit 2
# A new set is recorded beside the old one and takes its place only when
# complete: a grade never reads a half-written trail.
trails=$ZC_REF/trails.new.$$
export ZC_TRAILS=$trails
rm -rf "$trails"
mkdir -p "$trails"
trap 'rm -rf "$trails"' EXIT
# Each program at each of its N is a run of its own (its files are its stage's,
# its N's and its ranks'), so several run at once, the longest first.
programs="test_lc5 test_lc4 test_lc3 test_lc2 test_lc1 test_lc0"
for p in $programs; do
  "$BUILD/test/$p" --list </dev/null | cut -d'|' -f1,3 >"$trails/$p.checks"
  for n in $(cut -d'|' -f2 "$trails/$p.checks" | tr ' ' '\n' | sort -unr); do echo "$p $n"; done
done | xargs -P "$jobs" -n 2 "$self" "$BUILD" --one "$trails"
bad=0
for p in $programs; do
  for n in $(cut -d'|' -f2 "$trails/$p.checks" | tr ' ' '\n' | sort -un); do
    [ -f "$trails/$p-N$n.out" ] && [ ! -f "$trails/$p-N$n.failed" ] && continue
    echo "FAILED: recording the reference trails of $p at N=$n ($(cat "$trails/$p-N$n.failed" 2>/dev/null)):"
    cat "$trails/$p-N$n.out" 2>/dev/null
    bad=1
  done
done
if [ $bad = 0 ]; then
  date >"$trails/done"
  rm -rf "$ZC_REF/trails.old.$$"
  [ -d "$ZC_REF/trails" ] && mv "$ZC_REF/trails" "$ZC_REF/trails.old.$$"
  mv "$trails" "$ZC_REF/trails" && rm -rf "$ZC_REF/trails.old.$$"
fi
exit $bad
