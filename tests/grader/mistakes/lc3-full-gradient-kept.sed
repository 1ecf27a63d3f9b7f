# The full gradient never freed: ZeRO-2 saves nothing.
# file: lc3_zero2/zero2.c
# check: lc3.1a
# says: grads hold
/^void reduce_scatter_wait/,/^}/{
/^    mem_free(b->buf);$/d
}
