# Adam's eps left out of the denominator: a parameter whose gradient is zero
# at the first step (the one-hot input of a letter no context of the batch
# holds) gets 0 / 0, and NaN spreads from there. The whole-stage check names
# the first NaN element it finds and says it is NaN (not a distance).
# file: common/kernels_cpu.c
# check: lc0.0a
# says: is NaN on rank 0, the reference's
# check: lc0.1a
# says: your update equals AdamW without eps
s|^        float denom = sqrtf(v\[i\]) / bc2_sqrt + eps;|        float denom = sqrtf(v[i]) / bc2_sqrt;|
