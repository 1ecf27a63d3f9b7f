#!/bin/sh
# The grading harness (tests/check_mpi.h) held to what it claims, through
# build/test/test_harness, whose checks fail or hang on purpose (each case
# reads the verdict file, never the time: no verdict here depends on speed);
# the mutation run's draw of its sample; and the grader's builds, which
# compile again what a learner's file changes.
# usage: tests/test_harness.sh [BUILD_DIR]
set -u
# shellcheck disable=SC2034  # read by tests/expect.sh (its programs folder)
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. tests/expect.sh
h=$B/../test/test_harness

# graded CHECKS N SCALE: runs the named checks (or, with "", all graded at N), the
# verdicts in $tmp/res, stderr in $tmp/err.
graded() {
  rm -f "$tmp/res"
  if [ -n "$1" ]; then export ZC_CHECKS="$1"; else unset ZC_CHECKS; fi
  ZC_TIME_SCALE=$3 ZC_RESULTS=$tmp/res timeout 120 tools/launch "$2" "$h" >"$tmp/out" 2>"$tmp/err"
  status=$?
}

for n in 2 3; do
  graded "" $n 1
  check "N=$n: a check failing on the last rank only fails" grep -q "^fail h.last_rank_fails" "$tmp/res"
  check "  with that rank's message" grep -q "rank $((n - 1)) fails, alone" "$tmp/res"
  check "  and the check after it still runs, recorded" grep -q "^ok h.passes" "$tmp/res"
  check "  and the deadlock proof's rule and the fair share hold, state by state" grep -q "^ok h.proof_rules" "$tmp/res"
  check "  and the file is ended" grep -qx end "$tmp/res"
  check "  and the program's exit status says a check failed (1, through launch)" test "$status" = 1
done
# One named check after a failing one is not reported missing either.
graded "h.passes" 2 1
check "a named check runs alone and is recorded" grep -q "^ok h.passes" "$tmp/res"
check "  and the program exits 0" test "$status" = 0

# seconds WORDS: the seconds of processor time (or of a fair share of the
# processor, where make test's other suites starve the rank) the watchdog's
# lines give before WORDS, each (one per rank).
seconds() { sed -n "s/.*$1 in \([0-9]*\) s of \(processor time\|a fair share\).*/\1/p" "$tmp/err"; }
# between LO HI SECONDS...: there are some, and each is at least LO, under HI.
between() {
  lo=$1 hi=$2; shift 2
  [ $# -gt 0 ] || return 1
  for s in "$@"; do [ "$s" -ge "$lo" ] && [ "$s" -lt "$hi" ] || return 1; done
}
# The watchdog: 3 s of processor time with no progress ends a spinning check,
# long before its whole budget of 60; one whose threads all sleep ends as
# asleep after 30 s (3 at the scale below).
graded "h.spins" 2 1
check "a spinning check is stopped for no progress, not at its budget" \
  grep -q "watchdog: rank [01]: h.spins: no progress in [0-9]* s of processor time" "$tmp/err"
# The processor time it says, not the wall time: at most a second or two past 3.
# shellcheck disable=SC2046
check "  after 3 s of processor time, not 60" between 3 12 $(seconds "no progress")
# Messages are progress, collectives more: ranks that exchange messages forever
# are stopped for that, after 15 s of processor time (3 at this scale), not
# for standing still; ranks whose messages pass slowly (a seventh of the stall
# apart, 16 times: 3.4 s of processor time at the second scale, whose stall
# is 1.5) are not stopped.
graded "h.exchanges" 2 0.2
check "ranks that exchange messages forever are stopped as a loop" \
  grep -q "watchdog: rank [01]: h.exchanges: messages pass, but no collective completes" "$tmp/err"
# shellcheck disable=SC2046
check "  after 3 s of processor time at this scale" between 3 12 $(seconds "no compute starts,")
check "  and never for standing still" sh -c '! grep -q "h.exchanges: no progress" "$1"' sh "$tmp/err"
graded "h.exchanges_slowly" 2 0.5
check "messages far apart are progress: the check passes" grep -q "^ok h.exchanges_slowly" "$tmp/res"
# A deadlock is proven, not waited out: ranks that all wait to receive, or a
# receive against MPI's barrier, are stopped as a deadlock within seconds, at
# four times the limits (so that none of them could have come first); ranks
# that wait for a rank that computes (for 4 s of processor time, a third of the
# stall at that scale: several looks) are not a deadlock.
for cn in h.deadlocks:3 h.deadlocks_in_a_barrier:2; do
  c=${cn%:*} n=${cn#*:}
  graded "$c" "$n" 4
  check "N=$n $c: stopped as a deadlock" \
    grep -q "watchdog: rank [0-9]: $c: deadlock, every rank waits for another that waits too" "$tmp/err"
  check "  and for nothing else" sh -c '! grep -q "$1: \(no progress\|messages pass\|past\|asleep\)" "$2"' sh "$c" "$tmp/err"
done
graded "h.waits_for_slow_rank" 2 4
check "ranks that wait for one that computes are not a deadlock: the check passes" \
  grep -q "^ok h.waits_for_slow_rank" "$tmp/res"
# A rank stopped (SIGSTOP, its watchdog with it) leaves the state it wrote
# last on file, which no look renews: never part of a proof. Rank 1 stops
# itself after a barrier it stood still in; it goes on 4 s later (16 of rank
# 0's looks, a quarter of its stall at this scale) and sends.
export ZC_CHECKS=h.waits_for_stopped_rank
rm -f "$tmp/res"
ZC_TIME_SCALE=4 ZC_RESULTS=$tmp/res timeout 120 tools/launch 2 "$h" >"$tmp/out" 2>"$tmp/err" &
job=$!
stopped=""
while kill -0 $job 2>/dev/null && [ -z "$stopped" ]; do
  for p in $(pgrep -x test_harness); do
    [ "$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" = T ] && stopped=$p
  done
  sleep 0.1
done
sleep 4
[ -n "$stopped" ] && kill -CONT "$stopped"
wait $job
unset ZC_CHECKS
check "a rank stopped after a barrier is no proof of a deadlock: the check passes" \
  grep -q "^ok h.waits_for_stopped_rank" "$tmp/res"
# A rank that waits yielding its core (as Open MPI waits), beside two busy
# processes per core: Linux's EEVDF scheduler (6.6 on) gives it turns of
# microseconds, so its own processor time reaches the stall (0.6 s at this
# scale) only after minutes (38 s to over 120 s, measured beside one and
# two per core); its fair share of the machine (2 cores over 6 or more
# tasks, a third at most) within seconds (6-7 s here, the launch included).
# So it must be stopped within 30 s. (On an older kernel the yielding rank
# gets its share, and either limit stops it as soon.)
busy=""
for _ in $(seq $((2 * $(nproc)))); do
  timeout 200 sh -c 'while :; do :; done' &  # the timeout, should this script be stopped before its kill
  busy="$busy $!"
done
t0=$(date +%s)
graded "h.yields" 2 0.2
took=$(($(date +%s) - t0))
# shellcheck disable=SC2086
kill $busy
check "a rank that waits yielding beside busy processes is stopped for no progress" \
  grep -q "watchdog: rank [01]: h.yields: no progress in [0-9]* s" "$tmp/err"
check "  within 30 s of wall-clock time (it took $took)" test "$took" -lt 30
graded "h.sleeps" 2 0.1
check "a check whose threads all sleep is stopped as asleep" \
  grep -q "watchdog: rank [01]: h.sleeps: asleep [0-9]* s with no progress" "$tmp/err"
# Compute launched at every step is progress: a check that computes forever
# (an endless loop of training steps) is stopped only by its whole budget of
# processor time, 60 s (3 at this scale), and says so.
graded "h.computes" 2 0.05
check "a check that computes forever is stopped at its processor time" \
  grep -q "watchdog: rank [01]: h.computes: past its 3 s of processor time, still going" "$tmp/err"
check "  and never for standing still" sh -c '! grep -q "h.computes: no progress" "$1"' sh "$tmp/err"

# Every rank says where it is, even when rank 0 reaches its limit long before
# the others (a loaded machine): ranks 1 and 2 are stopped (SIGSTOP) all but
# 5% of the time. Before the ranks waited for one another's reports, rank 0
# alone said where it was.
export ZC_CHECKS=h.spins
ZC_TIME_SCALE=0.2 ZC_RESULTS=$tmp/res timeout 120 tools/launch 3 "$h" >"$tmp/out" 2>"$tmp/err" &
job=$!
while kill -0 $job 2>/dev/null; do
  held=""
  for p in $(pgrep -x test_harness); do
    { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qxE 'OMPI_COMM_WORLD_RANK=[12]' && held="$held $p"
  done
  if [ -n "$held" ]; then
    kill -STOP $held 2>/dev/null; sleep 0.95; kill -CONT $held 2>/dev/null
  fi
  sleep 0.05
done
wait $job
check "ranks held back still say where they are when another times out" \
  sh -c '[ "$(grep -c "^watchdog: rank [012]: h.spins: " "$1")" = 3 ]' sh "$tmp/err"
check "  the held ranks saying they stopped with it" grep -q "watchdog: rank [12]: h.spins: stopped with another rank" "$tmp/err"

# The mutation run's draw (tests/grader/draw.sh): a seed repeats its sample,
# and another seed, or another lecture, draws another, seeds from the clock
# included (mawk took every seed past 2^31 - 2 as one).
draw() { seq 1 200 | tests/grader/draw.sh "$1" "$2" | tr '\n' ' '; }
check "a mutant sample's seed repeats its draw" [ "$(draw 1795854996 3)" = "$(draw 1795854996 3)" ]
check "  two seeds from the clock draw two samples" [ "$(draw 1795854996 3)" != "$(draw 1795854178 3)" ]
check "  two lectures of one seed two samples" [ "$(draw 1795854996 3)" != "$(draw 1795854996 4)" ]
check "  and every line once" [ "$(draw 7 0 | tr ' ' '\n' | grep . | sort -n | tr '\n' ' ')" = "$(seq 1 200 | tr '\n' ' ')" ]

# The grader's builds (tests/grader/learner_build.sh, in a folder of their
# own, from the reference build's objects): a learner's stage file compiles
# again the test program that includes it, and not the others; a learner's
# collective (common/) compiles no test program again, and every one is
# linked with it. Not for the sanitizers' build, which is never graded (the
# grader builds with the plain flags, so there everything compiles again).
if [ "${SANITIZE:-0}" != 1 ]; then
  fresh() {  # MINE-FILE: a copy of tree file $1 with one line more, under $tmp/mine
    rm -rf "$tmp/mine"; mkdir -p "$tmp/mine/$(dirname "$1")"
    { cat "$1"; echo "// a learner's line"; } >"$tmp/mine/$1"
  }
  lbuild() {  # K TARGET...: builds in $tmp/lb; the build log in $tmp/lb.log
    k=$1; shift
    tests/grader/learner_build.sh "$k" "$tmp/mine" "$BUILD" "$tmp/lb" "$@" >/dev/null 2>"$tmp/lb.err"
    lb_status=$?
    cp "$tmp/lb/build.log" "$tmp/lb.log" 2>/dev/null || : >"$tmp/lb.log"
  }
  compiled() { grep -q "CC   $1\$" "$tmp/lb.log"; }
  fresh lc1_distributed_adam/distributed_adam.c
  lbuild 1 test/test_lc1 test/test_comm
  check "a learner's stage file builds" test "$lb_status" = 0
  check "  and compiles its test program again" compiled tests/test_lc1.c
  check "  and not the test program that does not include it" sh -c '! grep -q "CC   tests/test_comm.c" "$1"' sh "$tmp/lb.log"
  fresh lc1_distributed_adam/distributed_adam.c
  lbuild 1 test/test_lc1 test/test_comm
  check "  the same file again: nothing compiled" sh -c '! grep -q "  CC " "$1"' sh "$tmp/lb.log"
  fresh common/comm_ring.c
  lbuild 1 test/test_lc1 test/test_comm
  check "a learner's collective compiles its own file again (and the stage's file, put back)" \
    sh -c 'grep -q "CC   common/comm_ring.c" "$1" && grep -q "CC   tests/test_lc1.c" "$1" &&
           ! grep -q "CC   tests/test_comm.c" "$1"' sh "$tmp/lb.log"
  check "  and links both test programs with it" \
    sh -c 'grep -q "LD   .*/test/test_lc1$" "$1" && grep -q "LD   .*/test/test_comm$" "$1"' sh "$tmp/lb.log"
fi

finish test_harness
