# Forward frees the last layer too, so backward gathers it a second time.
# file: lc4_zero3/zero3.c
# check: lc4.1b
# says: the last layer is gathered again
s/^        if (l < m->nlayers - 1) gather_free(t, l);$/        gather_free(t, l);/
