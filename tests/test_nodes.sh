#!/bin/bash
# Several nodes for real, on one machine: each node is a network namespace
# (veth into a bridge, an address from the benchmarking range 198.18.0.0/15,
# no other route) with a UTS namespace of its own (its own host name, so Open
# MPI and the course see another node). mpirun runs on node1, like a cluster's
# first node, and starts its daemons on the others through tests/node_agent.sh
# in place of ssh; every run goes through tools/launch, as on a cluster. Checks:
#   - every distributed stage at N = 4 as 2 nodes x 2 and N = 6 as 3 x 2, with
#     --comm mpi, ring, hier and auto: the loss log and the model saved are the
#     one-host run's bit for bit (the one-host run emulates the same nodes with
#     --ranks-per-node, so every algorithm, and every order of reduction, is the
#     same; a loss printed to 9 digits can hide another order, the model's bits
#     cannot), the report
#     says the ranks are on 2 (3) nodes and names them with their ranks, and
#     the bytes sent to other nodes are the
#     emulated run's; lc1's over hier are the hierarchical model's, exactly;
#   - a checkpoint saved on 2 nodes resumes on one host at N = 3, and one saved
#     on one host at N = 3 resumes on 2 nodes, on the uninterrupted curve;
#   - a node lost mid-run (every process of it killed, or its daemon alone):
#     every rank stops within seconds, one line names the node, and the last
#     checkpoint resumes; a rank killed on a node that stays: its line names it;
#   - tools/launch --elastic 2: lc4 at N = 4 on 2 nodes loses node2 at step 12,
#     goes on at N = 2 from its step-10 checkpoint and finishes; its loss log
#     from there is a run resumed by hand at N = 2 from the same checkpoint.
# Everything made is removed on exit, after a failure too. Without root (or
# without ip and unshare) the suite says so and exits 77: skipped, not passed.
# usage: tests/test_nodes.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. tests/expect.sh
top=$(pwd)

skip() { echo "test_nodes: SKIPPED: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "making nodes needs root (network and UTS namespaces)"
command -v ip >/dev/null && command -v unshare >/dev/null || skip "ip (iproute2) and unshare are needed"

# ------------------------------------------------------------------------------
# the nodes

. tests/nodes.sh
prefix=zc$$
export NODE_NETNS_PREFIX=$prefix
cleanup() { nodes_remove; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 1' INT TERM
# Open MPI's session folders (ompi.HOST.UID under TMPDIR) and shared-memory
# segments (vader_segment.HOST.*, in /dev/shm) in the scratch folder: the
# ranks and daemon of a node the suite kills cannot remove theirs, which
# stayed in /tmp and /dev/shm after every run.
mkdir "$tmp/sessions" && export TMPDIR="$tmp/sessions" OMPI_MCA_btl_vader_backing_directory="$tmp/sessions"
nodes_make "$prefix" 3 || skip "$nodes_why"
unshare --uts true 2>/dev/null || skip "cannot make a UTS namespace"

# on_node K COMMAND...: COMMAND on node K (its namespaces, its host name),
# bounded in time.
on_node() {
  local k=$1; shift
  timeout 300 ip netns exec "${prefix}node$k" unshare --uts sh -c 'hostname "$0" && exec "$@"' "node$k" "$@"
}
# nodes K N PROGRAM ARGS...: PROGRAM on N ranks over nodes 1..K, two ranks each,
# launched from node1 by tools/launch, as on a cluster; stdout in $tmp/out.
nodes() {
  local k=$1 n=$2; shift 2
  printf 'node%s slots=2\n' $(seq "$k") >"$tmp/hosts"
  on_node 1 tools/launch --hostfile "$tmp/hosts" --iface eth0 --agent "$top/tests/node_agent.sh" \
    "$n" "$@" >"$tmp/out" 2>"$tmp/err"
}
# here N PROGRAM ARGS...: the same on this machine, with the nodes emulated.
here() {
  local n=$1; shift
  timeout 120 tools/launch "$n" "$@" --ranks-per-node 2 >"$tmp/out1" 2>"$tmp/err1"
}
say_err() { sed 's/^/    /' "$1" | head -5; }
# err_is WHAT COUNT [ERE]: the run's stderr is COUNT lines (one of them
# matching ERE); a failure shows what it was.
err_is() {
  if [ "$(grep -c . "$tmp/err")" = "$2" ] && grep -qE -- "${3:-.}" "$tmp/err"; then ok=$((ok + 1))
  else bad=$((bad + 1)); echo "FAIL: $1; got:"; say_err "$tmp/err"; fi
}
# The total of the report's "of them to other nodes" column.
inter_bytes() { awk '/^communication per step/ { c = 1 } c && $1 == "total" && NF == 3 { print $3; exit }' "$1"; }

# part NAME: whether to run this part (NODES_PARTS, for debugging: "matrix
# checkpoint lost elastic", all by default).
part() { case " ${NODES_PARTS:-matrix checkpoint lost elastic} " in *" $1 "*) return 0 ;; esac; return 1; }

# ------------------------------------------------------------------------------
# every stage, every backend, 2 x 2 and 3 x 2

# Ψ = 1008 (context 3, hidden 9, one hidden layer) divides by 2 ranks per node
# times 2 or 3 nodes, so the hierarchical all-reduce's chunks are equal.
model="--context 3 --hidden 9 --layers 1 --batch 24 --steps 3 --sample 0 --log-every 0"
part matrix && for k in 2 3; do
  n=$((2 * k))
  for st in lc1 lc2 lc3 lc4 lc5; do
    prog=$(eval "printf '%s' \"\$$st\"")
    for comm in mpi ring hier auto; do
      run="$st --comm $comm, N = $n on $k nodes"
      if ! nodes "$k" "$n" "$prog" $model --comm "$comm" --loss-log "$tmp/nodes.log" --save-model "$tmp/nodes.st"; then
        bad=$((bad + 1)); echo "FAIL: $run: the run failed"; say_err "$tmp/err"; continue
      fi
      if ! here "$n" "$prog" $model --comm "$comm" --loss-log "$tmp/here.log" --save-model "$tmp/here.st"; then
        bad=$((bad + 1)); echo "FAIL: $run: the one-host run failed"; say_err "$tmp/err1"; continue
      fi
      check "$run: the loss log is the one-host run's, bit for bit" cmp -s "$tmp/nodes.log" "$tmp/here.log"
      check "$run: the model saved is the one-host run's, bit for bit" cmp -s "$tmp/nodes.st" "$tmp/here.st"
      check "$run: the report says $k nodes" grep -q "N = $n on $k nodes" "$tmp/out"
      names=""
      for j in $(seq "$k"); do names="$names${names:+,} node$j (ranks $((2 * j - 2))-$((2 * j - 1)))"; done
      check "$run: the report names them:$names" grep -qxF "  nodes:$names" "$tmp/out"
      [ "$comm" = mpi ] && continue  # a library's bytes are the ring model's: no count across nodes
      a=$(inter_bytes "$tmp/out") b=$(inter_bytes "$tmp/out1")
      # (The report is rank 0's: in a ring its neighbour is on its node, and it
      # sends nothing across; in hier every rank has a partner on each node.)
      check "$run: bytes to other nodes ($a) are the emulated run's ($b)" test -n "$a" -a "$a" = "$b"
      if [ "$st" = lc1 ] && [ "$comm" = hier ]; then
        # One all-reduce of Ψ floats a step: across nodes, each rank's 1/2 of it
        # in a ring of k: 2(k-1)/k x 4Ψ/2 bytes.
        want=$(awk -v k="$k" 'BEGIN { printf "%.1f", 2 * (k - 1) / k * 4 * 1008 / 2 }')
        check "$run: bytes to other nodes ($a) are the hierarchical model's 2(M-1)/M x 4Ψ/K = $want" [ "$a" = "$want" ]
      fi
    done
  done
done

# ------------------------------------------------------------------------------
# a checkpoint across: saved on 2 nodes, resumed on one host at N = 3; and back

# same_curve A B: the losses of the steps in both, within 1e-6 relative (another
# N sums in another order), and at least one step in common.
same_curve() {
  awk 'NR == FNR { l[$1] = $2; next } ($1 in l) { n++; d = $2 - l[$1]; if (d < 0) d = -d; if (d > 1e-6 * l[$1]) bad = 1 }
       END { exit bad || n == 0 }' "$1" "$2"
}
if part checkpoint; then
ck="--context 3 --hidden 9 --layers 2 --batch 24 --sample 0 --log-every 0"
timeout 120 tools/launch 4 "$lc4" $ck --steps 8 --loss-log "$tmp/whole.log" >/dev/null 2>&1
rm -rf "$tmp/ck"
nodes 2 4 "$lc4" $ck --steps 4 --save-dir "$tmp/ck" &&
  timeout 120 tools/launch 3 "$lc4" $ck --steps 8 --resume "$tmp/ck" --loss-log "$tmp/r.log" >/dev/null 2>"$tmp/err1"
check "a checkpoint saved on 2 nodes (N = 4) resumes on one host at N = 3, on the curve" same_curve "$tmp/r.log" "$tmp/whole.log"
rm -rf "$tmp/ck"
timeout 120 tools/launch 3 "$lc4" $ck --steps 4 --save-dir "$tmp/ck" >/dev/null 2>&1 &&
  nodes 2 4 "$lc4" $ck --steps 8 --resume "$tmp/ck" --loss-log "$tmp/r.log"
check "a checkpoint saved on one host at N = 3 resumes on 2 nodes (N = 4), on the curve" same_curve "$tmp/r.log" "$tmp/whole.log"
fi

# ------------------------------------------------------------------------------
# a node lost mid-run

long="--context 3 --hidden 9 --layers 2 --batch 24 --steps 100000 --sample 0 --log-every 1"
# resumes STEP: the checkpoint goes on for a step on one host, at N = 2.
resumes() {
  timeout 120 tools/launch 2 "$lc4" ${long/100000/$(($1 + 1))} --log-every 0 --resume "$tmp/ck" >/dev/null 2>&1
}
# kill_at STEP VICTIM: once the run's stdout ($tmp/out) shows STEP, kills on
# node2 every process (all), its daemon (daemon) or its ranks (ranks).
kill_at() {
  local s=$1 victim=$2 p
  for _ in $(seq 600); do grep -q "^step *$s/" "$tmp/out" 2>/dev/null && break; sleep 0.1; done
  date +%s.%N >"$tmp/killed"
  for p in $(ip netns pids "${prefix}node2"); do
    case $victim in
      all) kill -9 "$p" ;;
      daemon) grep -q orted "/proc/$p/cmdline" 2>/dev/null && kill -9 "$p" ;;
      ranks) grep -q lc4_zero3 "/proc/$p/cmdline" 2>/dev/null && kill -9 "$p" ;;
    esac
  done
}
part lost && for victim in all daemon ranks; do
  rm -rf "$tmp/ck" "$tmp/out"
  nodes 2 4 "$lc4" $long --save-every 5 --save-dir "$tmp/ck" &
  job=$!
  kill_at 12 "$victim"
  wait $job
  rc=$?
  took=$(awk -v t0="$(cat "$tmp/killed")" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.1f", t1 - t0 }')
  case $victim in
    ranks) says="launch: rank [23] \(node node2\) died of signal 9 \(Killed\); mpirun stopped every rank" ;;
    *) says="launch: node node2 was lost \(" ;;
  esac
  check "node2's $victim killed: the job fails" [ "$rc" != 0 ]
  check "node2's $victim killed: every rank stopped within 10 s (took $took s)" awk -v t="$took" 'BEGIN { exit !(t < 10) }'
  err_is "node2's $victim killed: want one line '$says'" 1 "$says"
  latest=$(cat "$tmp/ck/latest" 2>/dev/null)
  check "node2's $victim killed: the last checkpoint ($latest) is complete" [ -f "$tmp/ck/$latest/manifest" ]
  check "node2's $victim killed: it resumes (one host, N = 2)" resumes "$(sed -n 's/^step //p' "$tmp/ck/$latest/manifest")"
done

# ------------------------------------------------------------------------------
# elastic: the job goes on at N = 2 without node2

if part elastic; then
rm -rf "$tmp/ck" "$tmp/out"
# The course's ring over a slow emulated link between the nodes (10 ms a
# message): a step of the first run takes ~0.3 s on any machine, so the kill
# lands while the job is still on its first run, however fast the machine is
# (with no link a step of this model takes ~1 ms, and the job could end before
# the kill). After the restart both ranks are on node1: no link, no delay.
el="--context 3 --hidden 9 --layers 2 --batch 24 --steps 16 --sample 0 --log-every 1 --comm ring"
printf 'node%s slots=2\n' 1 2 >"$tmp/hosts"
t0=$(date +%s.%N)
# One restart allowed (--restarts 1): the one it needs.
ZC_LINK=inter:10ms,1GB/s on_node 1 tools/launch --hostfile "$tmp/hosts" --iface eth0 --agent "$top/tests/node_agent.sh" \
  --elastic 2 --restarts 1 4 "$lc4" $el --save-every 10 --save-dir "$tmp/ck" --loss-log "$tmp/elastic.log" \
  >"$tmp/out" 2>"$tmp/err" &
job=$!
kill_at 12 all
wait $job
rc=$?
# What it cost, for the record: from the kill to the job's end, and in all.
awk -v t0="$t0" -v k="$(cat "$tmp/killed")" -v t1="$(date +%s.%N)" \
  'BEGIN { printf "elastic: the job took %.1f s, %.1f s of it after node2 was killed\n", t1 - t0, t1 - k }'
check "elastic: the job finishes (exit 0)" [ "$rc" = 0 ]
# stderr: the lost node's line, then the restart's.
err_is "elastic: stderr is two lines, the lost node's and the restart's" 2
check "elastic: the first names the lost node" grep -q "^launch: node node2 was lost (" "$tmp/err"
# The step it names is the last one the first run printed (12 or later: when
# the kill landed), wherever that was.
last=$(awk '/^step +[0-9]+\// { s = $2 + 0; if (s < prev) { print prev; exit } prev = s }' "$tmp/out")
check "elastic: it names node2 and the last step printed ($last, at least 12), and resumes from step 10 at N = 2 on node1" \
  grep -qE "launch: elastic restart 1 of 1: node node2 lost at step ${last:-none}; resuming from .*/step-00000010 \(step 10\) at N = 2 on node1$" "$tmp/err"
check "elastic: the kill landed at step 12 or later, before the end (step $last)" [ "${last:-0}" -ge 12 -a "${last:-0}" -le 16 ]
check "elastic: the restart runs at N = 2" grep -q "^summary stage=lc4_zero3 ranks=2 " "$tmp/out"
# The loss log holds the whole job: steps 1 to 10 of the first run (kept
# with its checkpoint), then the restart's from 11.
check "elastic: its loss log holds every step of the job, 1 to 16 in order" \
  [ "$(cut -d' ' -f1 "$tmp/elastic.log" | tr '\n' ' ')" = "$(seq 1 16 | tr '\n' ' ')" ]
timeout 120 tools/launch 2 "$lc4" $el --resume "$tmp/ck/step-00000010" --loss-log "$tmp/hand.log" >/dev/null 2>&1
check "elastic: its steps 11 to 16 are a run resumed by hand at N = 2, bit for bit" \
  sh -c "tail -n 6 '$tmp/elastic.log' | cmp -s - '$tmp/hand.log'"
first=$(awk '/^step +[0-9]+\// { s = $2 + 0; if (s < prev) exit; prev = s; if (s <= 10) printf "%d %s\n", s, $5 }' "$tmp/out")
check "elastic: its steps 1 to 10 are the first run's (N = 4), as it printed them" \
  [ "$(awk 'NR <= 10 { printf "%d %.4f\n", $1, $2 }' "$tmp/elastic.log")" = "$first" ]
# No restart allowed (--restarts 0): the loss stops the job, saying so.
rm -rf "$tmp/ck" "$tmp/out"
ZC_LINK=inter:10ms,1GB/s on_node 1 tools/launch --hostfile "$tmp/hosts" --iface eth0 --agent "$top/tests/node_agent.sh" \
  --elastic 2 --restarts 0 4 "$lc4" $el --save-every 10 --save-dir "$tmp/ck" >"$tmp/out" 2>"$tmp/err" &
job=$!
kill_at 12 all
wait $job
rc=$?
check "elastic, --restarts 0: the lost node stops the job (exit $rc)" [ "$rc" != 0 ]
check "  saying its restarts are used ($(tail -n 1 "$tmp/err"))" \
  grep -q "^launch: elastic: node node2 lost, and its 0 restarts are used: the job stops" "$tmp/err"
fi

finish test_nodes
