# Forward frees nothing: every layer stays gathered, and backward never gathers.
# file: lc4_zero3/zero3.c
# check: lc4.1b
# says: backward gathered nothing
/^        if (l < m->nlayers - 1) gather_free(t, l);$/d
