# reduce_scatter_wait waits and frees, but leaves t->sending naming the bucket:
# the next wait would wait for the same request again. lc3.1a names the flag
# (its message once said only how many bytes the gradients held, which were
# right).
# file: lc3_zero2/zero2.c
# check: lc3.1a
# says: t->sending still names a bucket
/^void reduce_scatter_wait/,/^}/{
/^    t->sending = NULL;$/d
}
