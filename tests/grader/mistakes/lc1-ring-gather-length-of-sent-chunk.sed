# The ring all-gather receives as many bytes as it sends: the length of the
# chunk going out instead of the one coming in. Chunks of uneven sizes then
# disagree, and grading mode names both lengths (MPI alone would cut the
# message with MPI_ERR_TRUNCATE, or take a shorter one without a word).
# file: common/comm_ring.c
# check: lc1.2a
# says: in ring_all_gather_inplace (lc1.3): rank
# check: lc1.3a
# says: the two ranks disagree on the length of the chunk they pass
/^void ring_all_gather_inplace/,/^}/ s/^\(                  buf + chunk_first(g, n, in) \* esz, \)chunk_len(g, n, in)\( \* esz, p2p_mod(g, r - 1));\)$/\1chunk_len(g, n, out)\2/
