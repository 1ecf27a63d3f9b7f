#!/bin/bash
# The README's Slurm recipe, tried: a Slurm cluster of two nodes made on one
# machine as tests/test_nodes.sh makes them (network and UTS namespaces: each
# node has its own host name, and its own TmpFS folder), with
# its own munged, slurmctld and one slurmd per node. Both ways of starting a
# stage under Slurm must train lc4 at N = 4 on 2 nodes exactly as the one-host
# run with the same nodes emulated (loss log and model, bit for bit), and the
# report must name the nodes:
#   srun --mpi=pmix -N 2 --ntasks-per-node=2 PROGRAM        (Slurm starts the ranks)
#   salloc -N 2 --ntasks-per-node=2, then tools/launch --hostfile (the allocation's nodes)
# It needs root and Slurm's and munge's programs (Debian's slurmctld, slurmd,
# slurm-client, munge), which make test does not install: without them it says
# so and exits 77, skipped.
# usage: tests/test_slurm.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. tests/expect.sh
top=$(pwd)

skip() { echo "test_slurm: SKIPPED: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "making nodes needs root"
for c in ip unshare munged slurmctld slurmd srun salloc scontrol; do
  command -v "$c" >/dev/null || skip "$c is not installed (Debian: slurmctld slurmd slurm-client munge)"
done
[ -r /etc/munge/munge.key ] || skip "munge has no key (/etc/munge/munge.key)"

. tests/nodes.sh
prefix=zs$$
# The daemons' files and each node's own temporary folder (TmpFS, where PMIx
# makes its per-step folders, whose names would clash on a shared /tmp).
work=$(mktemp -d /var/tmp/zc_slurm.XXXXXX) || exit 2
conf=$work/slurm
mkdir -p "$conf/state" "$conf/log" "$conf/munge" "$conf/tmp-node1" "$conf/tmp-node2"
cleanup() {
  nodes_remove
  [ -f "$conf/munge/pid" ] && kill "$(cat "$conf/munge/pid")" 2>/dev/null
  rm -rf "$tmp" "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
nodes_make "$prefix" 2 || skip "$nodes_why"

# munge, on a socket of this run's (the slurm daemons and commands are told it).
chown munge "$conf/munge" 2>/dev/null
munged --force --socket="$conf/munge/socket" --pid-file="$conf/munge/pid" --log-file="$conf/munge/log" \
  --seed-file="$conf/munge/seed" 2>"$conf/munge/err" || skip "munged does not start: $(cat "$conf/munge/err")"
# The cgroup layout of this machine: Slurm's autodetection takes a tmpfs of v1
# hierarchies for no cgroups at all.
case $(stat -fc %T /sys/fs/cgroup 2>/dev/null) in cgroup2fs) cg=cgroup/v2 ;; *) cg=cgroup/v1 ;; esac
printf 'CgroupPlugin=%s\nCgroupMountpoint=/sys/fs/cgroup\n' "$cg" >"$conf/cgroup.conf"
cat >"$conf/slurm.conf" <<EOF
ClusterName=zc
SlurmctldHost=node1(198.18.0.11)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$conf/munge/socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
StateSaveLocation=$conf/state
SlurmdSpoolDir=$conf/spool-%n
TmpFS=$conf/tmp-%n
SlurmctldPidFile=$conf/slurmctld.pid
SlurmdPidFile=$conf/slurmd-%n.pid
SlurmctldLogFile=$conf/log/slurmctld.log
SlurmdLogFile=$conf/log/slurmd-%n.log
NodeName=node1 NodeAddr=198.18.0.11 CPUs=2 State=UNKNOWN
NodeName=node2 NodeAddr=198.18.0.12 CPUs=2 State=UNKNOWN
PartitionName=all Nodes=node1,node2 Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$conf/slurm.conf

# on_node K COMMAND...: COMMAND on node K, with its own host name.
on_node() {
  local k=$1; shift
  timeout 300 ip netns exec "${prefix}node$k" unshare --uts sh -c 'hostname "$0" && exec "$@"' "node$k" "$@"
}
on_node 1 slurmctld -c || skip "slurmctld does not start (see $conf/log)"
for k in 1 2; do on_node "$k" slurmd -N "node$k" || skip "slurmd does not start on node$k"; done
for _ in $(seq 100); do
  [ "$(on_node 1 sinfo -h -o %T 2>/dev/null | sort -u)" = idle ] && break
  sleep 0.2
done
[ "$(on_node 1 sinfo -h -o %T 2>/dev/null | sort -u)" = idle ] ||
  skip "the Slurm nodes did not come up: $(tail -n 2 "$conf"/log/*.log | tr '\n' ' ')"

# ------------------------------------------------------------------------------

model="--context 3 --hidden 9 --layers 2 --batch 24 --steps 4 --sample 0 --log-every 0 --comm hier"
timeout 120 tools/launch 4 "$lc4" $model --ranks-per-node 2 --loss-log "$tmp/here.log" --save-model "$tmp/here.st" \
  >/dev/null 2>&1
same_run() {
  check "$1: the loss log is the one-host run's, bit for bit" cmp -s "$work/$2.log" "$tmp/here.log"
  check "$1: the model is the one-host run's, bit for bit" cmp -s "$work/$2.st" "$tmp/here.st"
  check "$1: the report names the nodes" grep -qx "  nodes: node1 (ranks 0-1), node2 (ranks 2-3)" "$work/$2.out"
}

on_node 1 srun --mpi=pmix -N 2 --ntasks-per-node=2 "$lc4" $model --loss-log "$work/srun.log" \
  --save-model "$work/srun.st" >"$work/srun.out" 2>"$tmp/err" ||
  { echo "srun failed:"; sed 's/^/    /' "$tmp/err" | head -5; }
same_run "srun --mpi=pmix" srun

# Inside an allocation: the README's two lines, as an sbatch script would hold them.
cat >"$work/job.sh" <<'EOF'
scontrol show hostnames "$SLURM_JOB_NODELIST" | sed "s/$/ slots=$SLURM_NTASKS_PER_NODE/" >"$HOSTS"
tools/launch --hostfile "$HOSTS" --iface eth0 $SLURM_NTASKS "$@"
EOF
HOSTS=$work/hosts on_node 1 salloc -N 2 --ntasks-per-node=2 bash "$work/job.sh" "$lc4" $model \
  --loss-log "$work/salloc.log" --save-model "$work/salloc.st" >"$work/salloc.out" 2>"$tmp/err" ||
  { echo "salloc failed:"; sed 's/^/    /' "$tmp/err" | head -5; }
same_run "salloc, then tools/launch --hostfile" salloc

finish test_slurm
