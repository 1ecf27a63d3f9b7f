# Recursive doubling for a power of two only: the ranks past the largest power
# of two below N never fold in, and keep their own values.
# file: common/comm_rd.c
# check: lc1.6a
# says: a rank past the pairs that fold must still take part
/^void rd_all_reduce/,/^}/{
s/int r = g->me, v = virtual_of(f, r);/int r = g->me, v = r < f.p ? r : -1;/
/fold_in(g, f, buf, tmp, n, dt, op, 1);/d
s/int partner = real_of(f, v ^ mask);/int partner = v ^ mask;/
s/if (r < 2 \* f.rem) {  \/\/ the odd one of each pair hands the result back/if (0) {/
}
