# The ring reduce-scatter receives from the right neighbour instead of the
# left: every rank waits for a message its right neighbour sends elsewhere, a
# deadlock. The watchdog ends the check, and the partners each rank was
# waiting on show where the ring breaks.
# file: common/comm_ring.c
# check: lc1.2a
# says: waits for a message from rank 1, which sends to rank 2
# time-scale: 0.2
/^void ring_reduce_scatter_inplace/,/^}/ s/^\(                  chunk_len(g, n, in) \* esz, \)p2p_mod(g, r - 1));$/\1p2p_mod(g, r + 1));/
