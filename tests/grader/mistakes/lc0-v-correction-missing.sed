# Only m's bias correction: v's is left out of the denominator.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: m's bias correction alone
s|^        float denom = sqrtf(v\[i\]) / bc2_sqrt + eps;|        float denom = sqrtf(v[i]) + eps;|
