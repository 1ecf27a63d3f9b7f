# The fp32 master moves but the 16-bit params the layers read never follow it.
# file: lc5_mixed_precision/mixed_precision.c
# check: lc5.4a
# says: not rounded from the new master
/^void adam_step/,/^}/{
/^        cast_from_f32(dtype_at(m->params, m->dt, L->soff), m->master + L->soff, m->dt, own_numel(L));$/d
}
