# The partner at step k computed as v + 2^k instead of v ^ 2^k: at N = 3 the
# last virtual rank's partner is past the last rank, which MPI refuses.
# file: common/comm_rd.c
# check: lc1.6a
# says: invalid rank
/^void rd_all_reduce/,/^}/ s/int partner = real_of(f, v ^ mask);/int partner = real_of(f, v + mask);/
