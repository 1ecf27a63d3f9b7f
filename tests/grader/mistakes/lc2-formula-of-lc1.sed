# A stage's formula left at the previous stage's: 16Ψ.
# file: lc2_zero1/zero1.c
# check: lc2.6a
# says: model_state_formula says
s/^    return theory_model_state(ZERO_1, (double)m->numel, (double)(m->shard_numel \* rt.world), rt.world, 4, 8);/    return theory_model_state(ZERO_DDP, (double)m->numel, (double)m->numel, rt.world, 4, 8);/
