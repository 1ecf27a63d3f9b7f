# The ring's step written as a blocking send to the right, then a receive from
# the left: every rank sends first, and once a chunk is too big for MPI to
# buffer (here 87 KiB) no send returns before its receive is posted: a
# deadlock. The watchdog ends the check and says where each rank waits.
# file: common/comm_ring.c
# check: lc1.2a
# says: Every rank is sending and none receiving
/^void ring_reduce_scatter_inplace/,/^}/{
s/^        send_recv(g, buf + chunk_first(g, n, out) \* esz, chunk_len(g, n, out) \* esz, p2p_mod(g, r + 1), tmp,$/        send_to(g, buf + chunk_first(g, n, out) * esz, chunk_len(g, n, out) * esz, p2p_mod(g, r + 1));\n        recv_from(g, tmp, chunk_len(g, n, in) * esz, p2p_mod(g, r - 1));/
/^                  chunk_len(g, n, in) \* esz, p2p_mod(g, r - 1));$/d
}
