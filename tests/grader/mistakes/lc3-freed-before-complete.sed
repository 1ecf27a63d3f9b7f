# A buffer freed before its collective completes.
# file: lc3_zero2/zero2.c
# check: lc3.2a
# says: was freed before the collective completed
/^void reduce_scatter_wait/,/^}/{
/^    mem_free(b->buf);$/d
s/^    comm_wait_timed(b->req, &t->rs);$/    mem_free(b->buf);\n    comm_wait_timed(b->req, \&t->rs);/
}
