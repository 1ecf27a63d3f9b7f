# Nodes on one machine, for the suites that need several (test_nodes.sh,
# test_slurm.sh): node k is the network namespace PREFIXnodek, joined to the
# others by a veth pair into one bridge, with the address 198.18.0.(10 + k)/24
# from the benchmarking range and no other route. (Each suite gives a node its
# host name itself, with a UTS namespace, when it starts something there.)
# Source it; nodes_make PREFIX K makes them, nodes_remove removes everything
# (the processes left inside too), and is safe to call twice.

nodes_prefix="" nodes_count=0

# nodes_make PREFIX K: 0, or 1 with the reason in $nodes_why.
nodes_make() {
  nodes_prefix=$1 nodes_count=$2 nodes_why=""
  ip link add "${nodes_prefix}br" type bridge 2>/dev/null || { nodes_why="cannot make a bridge here"; return 1; }
  ip link set "${nodes_prefix}br" up
  local k ns
  for k in $(seq "$nodes_count"); do
    ns=${nodes_prefix}node$k
    ip netns add "$ns" && ip link add "${nodes_prefix}v$k" type veth peer name eth0 netns "$ns" &&
      ip link set "${nodes_prefix}v$k" master "${nodes_prefix}br" up &&
      ip -n "$ns" addr add "198.18.0.$((10 + k))/24" dev eth0 && ip -n "$ns" link set eth0 up &&
      ip -n "$ns" link set lo up || { nodes_why="cannot make node $k"; return 1; }
  done
}

nodes_remove() {
  local k pids
  [ -n "$nodes_prefix" ] || return 0
  for k in $(seq "$nodes_count"); do
    pids=$(ip netns pids "${nodes_prefix}node$k" 2>/dev/null)
    # shellcheck disable=SC2086
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    ip netns del "${nodes_prefix}node$k" 2>/dev/null
  done
  ip link del "${nodes_prefix}br" 2>/dev/null
  nodes_prefix=""
}
