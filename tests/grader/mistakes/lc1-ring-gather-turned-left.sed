# The ring all-gather turned the other way: chunk r + s goes to the left
# neighbour and chunk r + s + 1 comes from the right. Every value arrives, so
# only the bytes tell it from the ring of the exercise: with chunks of two
# lengths, each rank sends every chunk but its left neighbour's instead of
# its right neighbour's. lc1.3a must say so, and lc1.2a, whose second half
# this is, the same.
# file: common/comm_ring.c
# check: lc1.3a
# says: those are the bytes of a ring turned the other way
# check: lc1.2a
# says: ring_all_gather_inplace (lc1.3, the all-reduce's second half
/^void ring_all_gather_inplace/,/^}/ {
  s/int out = p2p_mod(g, r - s), in = p2p_mod(g, r - s - 1);/int out = p2p_mod(g, r + s), in = p2p_mod(g, r + s + 1);/
  s/chunk_len(g, n, out) \* esz, p2p_mod(g, r + 1),$/chunk_len(g, n, out) * esz, p2p_mod(g, r - 1),/
  s/chunk_len(g, n, in) \* esz, p2p_mod(g, r - 1));$/chunk_len(g, n, in) * esz, p2p_mod(g, r + 1));/
}
