# Accumulation that reads the same micro-batch K times.
# file: lc1_distributed_adam/distributed_adam.c
# check: lc1.1b
# says: the first micro-batch counted accum times
s/^        data_batch(&t->data, step, B, rt.rank \* per_rank + k \* x->rows,/        data_batch(\&t->data, step, B, rt.rank * per_rank,/
