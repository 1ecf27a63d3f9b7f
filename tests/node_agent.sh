#!/bin/sh
# node_agent.sh HOST COMMAND...: mpirun's launch agent for the nodes that
# tests/test_nodes.sh makes on one machine (tools/launch --agent), in place of
# ssh: runs COMMAND, a shell command line as ssh would run it, on node HOST,
# that is in its network namespace (NODE_NETNS_PREFIX then HOST) and in a UTS
# namespace of its own whose host name is HOST, so that Open MPI and the
# course see another node. Leading options (ssh's) are ignored.
while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
host=$1
shift
exec ip netns exec "${NODE_NETNS_PREFIX:-}$host" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$*"
