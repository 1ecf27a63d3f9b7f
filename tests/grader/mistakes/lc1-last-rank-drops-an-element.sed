# The last rank alone drops one element of the reduced gradient, on the last
# step only: every loss matches lc0's and rank 0's model is lc0's; only the
# last rank's model is off, so only a check that looks at every rank's state
# (every replica compared, not rank 0's alone) fails it.
# file: lc1_distributed_adam/distributed_adam.c
# check: lc1.1a
# says: on rank
s/^    comm_all_reduce(m->grads, m->numel, DT_F32, OP_SUM);/    comm_all_reduce(m->grads, m->numel, DT_F32, OP_SUM);\n    if (rt.world > 1 \&\& rt.rank == rt.world - 1 \&\& step == t->a.steps - 1) m->grads[0] = 0;/
