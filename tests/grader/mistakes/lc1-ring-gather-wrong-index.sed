# The ring all-gather stores what it receives into the chunk after the one it
# sent, not the one before. The all-reduce is the reduce-scatter then this
# all-gather, so its check must say which half is wrong (the reduce-scatter,
# lc1.2, is right here).
# file: common/comm_ring.c
# check: lc1.2a
# says: ring_all_gather_inplace (lc1.3
# check: lc1.3a
# says: rank
/^void ring_all_gather_inplace/,/^}/ s/int out = p2p_mod(g, r - s), in = p2p_mod(g, r - s - 1);/int out = p2p_mod(g, r - s), in = p2p_mod(g, r - s + 1);/
