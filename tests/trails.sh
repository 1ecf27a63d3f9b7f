#!/bin/sh
# Records the reference trails (tests/trail.h): the graded checks of each
# stage's test program, run by the tree's own build at every N they are graded
# at; those that train end to end keep the whole training state after every
# step in BUILD/test/ref/trails. A learner's build is compared with them (make grade),
# and so is the reference itself (make test: the same bits). Prints the reason
# and exits 1 if a check fails while recording.
# usage: tests/trails.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
export ZC_REF="$BUILD/test/ref" CK_FORK=no ZC_TRAIL=record
# A new set is recorded beside the old one and takes its place only when
# complete: a grade never reads a half-written trail.
trails=$ZC_REF/trails.new.$$
export ZC_TRAILS=$trails
rm -rf "$trails"
mkdir -p "$trails"
trap 'rm -rf "$trails"' EXIT
bad=0
for p in test_lc0 test_lc1 test_lc2 test_lc3 test_lc4 test_lc5; do
  "$BUILD/test/$p" --list </dev/null | cut -d'|' -f1,3 >"$trails/$p.checks"
  for n in $(cut -d'|' -f2 "$trails/$p.checks" | tr ' ' '\n' | sort -un); do
    ids=$(awk -F'|' -v n="$n" '{ split($2, ns, " "); for (i in ns) if (ns[i] == n) print $1 }' "$trails/$p.checks" |
          tr '\n' ' ')
    launch="tools/launch $n"
    [ "$n" = 1 ] && launch=""
    # shellcheck disable=SC2086
    if ! ZC_CHECKS="$ids" timeout 600 $launch "$BUILD/test/$p" >"$trails/$p-N$n.out" 2>&1 </dev/null; then
      echo "FAILED: recording the reference trails of $p at N=$n ($ids):"
      cat "$trails/$p-N$n.out"
      bad=1
    fi
  done
done
if [ $bad = 0 ]; then
  date >"$trails/done"
  rm -rf "$ZC_REF/trails.old.$$"
  [ -d "$ZC_REF/trails" ] && mv "$ZC_REF/trails" "$ZC_REF/trails.old.$$"
  mv "$trails" "$ZC_REF/trails" && rm -rf "$ZC_REF/trails.old.$$"
fi
exit $bad
