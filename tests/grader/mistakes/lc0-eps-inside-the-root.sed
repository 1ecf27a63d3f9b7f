# eps inside the square root with v's correction, as some texts write it:
# sqrt(v / (1 - beta2^t) + eps), where PyTorch adds eps after the root.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: eps inside the square root
s|^        float denom = sqrtf(v\[i\]) / bc2_sqrt + eps;|        float denom = sqrtf(v[i] / (bc2_sqrt * bc2_sqrt) + eps);|
