# A slice that is partly padding (the last rank's, where numel is not a
# multiple of N) skipped by Adam, as if padding made it someone else's: only
# rank N-1's params stay where they were, so only a grader that hears every
# rank's verdict sees it (rank 0's is clean).
# file: lc2_zero1/zero1.c
# check: lc2.5a
# says: rank 2's params
s/^        adam_update(own_slice(m, m->params, l), own_slice(m, m->grads, l), o->m + L->soff,$/        if (own_numel(L) < L->shard) continue;\n&/
