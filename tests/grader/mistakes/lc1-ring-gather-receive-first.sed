# The all-gather's step written as a receive from the left, then a send to the
# right: every rank waits for a message before it sends one, so none is ever
# sent. The watchdog proves the deadlock (every rank waits to receive, nothing
# on its way) instead of waiting out a limit, and says each receive and why.
# file: common/comm_ring.c
# check: lc1.2a
# says: Every rank is receiving and none sending
/^void ring_all_gather_inplace/,/^}/{
s/^        send_recv(g, buf + chunk_first(g, n, out) \* esz, chunk_len(g, n, out) \* esz, p2p_mod(g, r + 1),$/        recv_from(g, buf + chunk_first(g, n, in) * esz, chunk_len(g, n, in) * esz, p2p_mod(g, r - 1));\n        send_to(g, buf + chunk_first(g, n, out) * esz, chunk_len(g, n, out) * esz, p2p_mod(g, r + 1));/
/^                  buf + chunk_first(g, n, in) \* esz, chunk_len(g, n, in) \* esz, p2p_mod(g, r - 1));$/d
}
