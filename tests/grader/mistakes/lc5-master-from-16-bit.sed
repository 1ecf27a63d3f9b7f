# The master copy taken back from the 16-bit params before the step: Adam then
# updates values already rounded to bf16, and the fp32 master keeps nothing
# the params do not. The check must say so, not blame the gradient.
# file: lc5_mixed_precision/mixed_precision.c
# check: lc5.4a
# says: overwritten from the 16-bit params
/^        scale(g, clip, own_numel(L));$/a\
        cast_to_f32(m->master + L->soff, dtype_at(m->params, m->dt, L->soff), m->dt, own_numel(L));
