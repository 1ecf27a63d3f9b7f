# sqrt(v) divided by 1 - beta2^t, v's correction left outside the root.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: v's correction goes under the root
s|^        float denom = sqrtf(v\[i\]) / bc2_sqrt + eps;|        float denom = sqrtf(v[i]) / (bc2_sqrt * bc2_sqrt) + eps;|
