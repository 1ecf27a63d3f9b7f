# The ring reduce-scatter adds into the chunk it just sent, not the one it received.
# file: common/comm_ring.c
# check: lc1.2a
# says: the sum over ranks is
/ring_reduce_scatter_inplace/,/^}/ s/comm_reduce_local(buf + chunk_first(g, n, in) \* esz, tmp, chunk_len(g, n, in), dt, op);/comm_reduce_local(buf + chunk_first(g, n, out) * esz, tmp, chunk_len(g, n, out), dt, op);/
