# Right, written another way: the clip factor folded into the unscaling, one
# multiplication by clip / scale instead of two (one rounding fewer).
# file: lc5_mixed_precision/mixed_precision.c
/^        float \*g = unscaled_grads(t, l);$/{
N
s|.*|        float *g = t->acts.unscaled;\
        cast_to_f32(g, dtype_at(m->grads, m->dt, L->soff), m->dt, own_numel(L));\
        scale(g, clip / t->scaler.scale, own_numel(L));|
}
