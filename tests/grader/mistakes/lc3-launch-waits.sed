# The reduce-scatter waited for right after its launch: nothing overlaps backward.
# file: lc3_zero2/zero2.c
# check: lc3.2b
# says: it waited
s/^    b->req = comm_reduce_scatter_async(b->buf, shards, b->count, DT_F32);$/&\n    comm_wait(b->req);/
