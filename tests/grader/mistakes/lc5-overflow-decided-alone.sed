# An overflow decided by each rank alone: the ranks that step and those that skip part ways.
# file: lc5_mixed_precision/mixed_precision.c
# check: lc5.2a
# says: the ranks must agree on the overflow
/^int grads_finite/,/^}/{
/^    comm_all_reduce(&finite, 1, DT_I32, OP_MIN);$/d
}
