#!/bin/sh
# make run: every stage that exists, in order, on the CPU with the default data:
# lc0 on one process, the distributed stages on RANKS ranks. Logs go to
# BUILD/run/; the course ends with a comparison of the summary lines and the
# words the last stage's model made up.
set -eu
BUILD=${1:-build}
RANKS=${2:-4}
cd "$(dirname "$0")/.."
stages=${ZC_STAGES:-$(make -s --no-print-directory stages)}  # the Makefile's list
mkdir -p "$BUILD/run"
last=""
for stage in $stages; do
  [ -x "$BUILD/bin/$stage" ] || continue
  n=$RANKS; [ "$stage" = lc0_adam ] && n=1
  echo
  echo "=================== $stage ($n rank$( [ "$n" -gt 1 ] && echo s)) ==================="
  tools/launch "$n" "$BUILD/bin/$stage" --loss-log "$BUILD/run/$stage.loss" | tee "$BUILD/run/$stage.log"
  last=$stage
done

echo
echo "=================== the course so far ==================="
mkdir -p "$BUILD/plots"
"$BUILD/bin/compare" "$BUILD/run" "$BUILD/plots"
echo
echo "words made up by $last:"
grep '^samples:' "$BUILD/run/$last.log" | sed 's/^samples: *//' | tr ' ' '\n' | sed 's/^/  /'
