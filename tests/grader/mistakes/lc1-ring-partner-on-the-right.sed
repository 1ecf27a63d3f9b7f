# The ring reduce-scatter receives from the right neighbour instead of the
# left: every rank waits for a message its right neighbour sends elsewhere, a
# deadlock. The watchdog ends the check, and the partners each rank was
# waiting on show where the ring breaks (which pair it names depends on which
# rank the watchdog finds first; that the pair disagrees, never).
# file: common/comm_ring.c
# check: lc1.2a
# says: the two disagree on who is whose neighbour
/^void ring_reduce_scatter_inplace/,/^}/ s/^\(                  chunk_len(g, n, in) \* esz, \)p2p_mod(g, r - 1));$/\1p2p_mod(g, r + 1));/
