# The denominator without the square root of v: v_hat + eps.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: without the square root of v
s|^        float denom = sqrtf(v\[i\]) / bc2_sqrt + eps;|        float denom = v[i] / (bc2_sqrt * bc2_sqrt) + eps;|
