#!/bin/bash
# Hostile input, round 3 (issue 25): jobs whose ranks do not all start or do not
# run the same program, runs stopped from outside, limits the launcher cannot
# work under, checkpoints whose files are not what they claim, outputs that
# would destroy a checkpoint, and the debris of a save that never finished.
# Each case ends in bounded time with one line and its exit status; every run is
# under a timeout, so a hang fails the suite instead of stopping it.
# usage: tests/test_hostile.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/expect.sh
S="--hidden 8 --layers 1 --batch 12 --steps 4 --sample 0 --log-every 0"
lc1="$BUILD/bin/lc1_distributed_adam"
lc2="$BUILD/bin/lc2_zero1"
lc3="$BUILD/bin/lc3_zero2"
lc5="$BUILD/bin/lc5_mixed_precision"

# ------------------------------------------------------------------------------
# Ranks that never join, or join as another program.

# A rank that exits before MPI_Init leaves the others waiting there: bounded by
# the start-up alarm (3 s here, 60 s by default).
for prog in "$lc1" "$lc5"; do
  ZC_START_TIMEOUT_S=3 expect 3 1 "not every rank of the job started within 3 s" \
    sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exit 0; fi; exec "$0" "$@"' "$prog" $S
done
# A rank that exits non-zero before starting: the launcher names it.
expect 2 3 "without a word; mpirun stopped every rank" \
  sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exit 3; fi; exec "$0" "$@"' "$lc2" $S
# Two stages in one job, or two builds of one stage.
expect 1 2 "rank 1 runs lc2_zero1, rank 0 runs lc1_distributed_adam: every rank of a job must run the same" \
  "$lc1" $S : -n 1 "$lc2" $S
expect 1 2 "rank 1 runs lc2_zero1, rank 0 runs lc3_zero2" "$lc3" $S : -n 1 "$lc2" $S
cp "$lc2" "$tmp/lc2_zero1" && echo >>"$tmp/lc2_zero1"
expect 1 2 "rank 1 runs another build of lc2_zero1" "$lc2" $S : -n 1 "$tmp/lc2_zero1" $S

# ------------------------------------------------------------------------------
# Stopped from outside, and limits.

for sig in TERM INT; do
  timeout 60 tools/launch 2 "$lc2" --steps 100000 --sample 0 --log-every 0 >/dev/null 2>"$tmp/err" &
  for i in $(seq 100); do pgrep -x lc2_zero1 >/dev/null && break; sleep 0.1; done
  sleep 1
  pkill -"$sig" -x mpirun
  wait $!
  rc=$?
  check "SIG$sig to mpirun: exit 1 and one line (got $rc, $(cat "$tmp/err"))" \
    sh -c "[ $rc = 1 ] && [ \$(grep -c . '$tmp/err') = 1 ] && grep -q 'stopped by SIGTERM before the run finished' '$tmp/err'"
done
# mpirun cannot run under a tiny file size limit: the launcher says so; under
# a larger one, a model past it is a write error with its reason.
(ulimit -f 8; expect 1 2 "launch: the file size limit (ulimit -f) is 8 blocks" "$lc1" $S; echo "$ok $bad" >"$tmp/tally")
read -r ok bad <"$tmp/tally"
echo old >"$tmp/model.st"
(ulimit -f 16384; expect 2 1 "cannot write model file '$tmp/model.st': File too large" \
  "$lc2" --hidden 2100 --layers 2 --batch 12 --steps 1 --sample 0 --log-every 0 --save-model "$tmp/model.st"
 echo "$ok $bad" >"$tmp/tally")
read -r ok bad <"$tmp/tally"
check "a write past the file size limit keeps the old model" grep -qx old "$tmp/model.st"

finish test_hostile
