# The ring's step written as a blocking send to the right, then a receive from
# the left: every rank sends first, and once a chunk is too big for MPI to
# buffer (here 87 KiB) no send returns before its receive is posted: a
# deadlock. The watchdog ends the check and says where each rank waits.
# file: common/comm_ring.c
# check: lc1.2a
# says: wait in all_reduce
# time-scale: 0.2
/^static void ring_reduce_scatter_inplace/,/^}/{
s/^        send_recv(buf + chunk_first(n, out) \* esz, chunk_len(n, out) \* esz, mod(r + 1), tmp,$/        send_to(buf + chunk_first(n, out) * esz, chunk_len(n, out) * esz, mod(r + 1));\n        recv_from(tmp, chunk_len(n, in) * esz, mod(r - 1));/
/^                  chunk_len(n, in) \* esz, mod(r - 1));$/d
}
