# A stage's formula left at the previous stage's: lc4's 4-byte traffic, no overflow flag.
# (lc5's model state is 16Ψ_pad/N as lc4's: the total is no mistake; its parts are.)
# file: lc5_mixed_precision/mixed_precision.c
# check: lc5.5a
# says: comm_theory says
s/pad = (double)(m->shard_numel \* rt.world), e = (double)dtype_size(m->dt);$/pad = (double)(m->shard_numel * rt.world), e = 4.0;/
s/^    return t->a.accum \* micro + theory_all_reduce(4.0, rt.world) +$/    return t->a.accum * micro +/
