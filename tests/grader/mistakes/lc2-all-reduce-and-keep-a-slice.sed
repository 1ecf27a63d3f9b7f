# All-reduce + scatter where one reduce-scatter does the job: right sums, twice the bytes.
# file: lc2_zero1/zero1.c
# check: lc2.2b
# says: all_reduce calls per step
s/^        comm_reduce_scatter(seg, mine, L->shard, DT_F32);  \/\/ in place: my slice lands in my slot/        comm_all_reduce(seg, L->pad, DT_F32, OP_SUM);/
