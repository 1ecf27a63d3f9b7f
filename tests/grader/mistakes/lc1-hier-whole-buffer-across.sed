# The step across nodes all-reduces the whole buffer, not the rank's own chunk:
# the sums come out right, but every rank sends K times the bytes over the slow
# link. Visible only with nodes of more than one rank, and more than one node.
# file: common/comm_hier.c
# check: lc1.7a
# says: each rank all-reduces only its own chunk
# ranks: 4
/^void hier_all_reduce/,/^}/ s/ring_all_reduce(&cross, buf + at \* esz, len, dt, op);/ring_all_reduce(\&cross, buf, n, dt, op);/
