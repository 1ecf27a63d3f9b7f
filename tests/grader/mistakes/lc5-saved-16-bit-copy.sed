# A model saved from the 16-bit copy instead of the fp32 master.
# file: lc5_mixed_precision/mixed_precision.c
# check: lc5.4b
# says: writes the master
s/^        comm_all_gather(m->master + L->soff, p, L->shard, DT_F32);\(.*\)$/        cast_to_f32(p + (size_t)rt.rank * L->shard, dtype_at(m->params, m->dt, L->soff), m->dt, L->shard);\n        comm_all_gather(p + (size_t)rt.rank * L->shard, p, L->shard, DT_F32);\1/
