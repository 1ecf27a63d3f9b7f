# v's bias correction kept as 1 - beta2^step, its square root taken in the CPU
# loop, and the kernel handed the value before the root: the CPU path is right,
# the GPU's denominator is not.
# file: common/kernels_cpu.c
# check: lc0.1d
# says: 1 - beta2^step without its square root
s|^    float bc2_sqrt = (float)sqrt(1.0 - pow(h->beta2, (double)step));|    float bc2 = (float)(1.0 - pow(h->beta2, (double)step));|
s|^    ON_GPU(cuda_adam_update(p, g, m, v, n, decay, step_size, bc2_sqrt, b1, b2, eps));|    ON_GPU(cuda_adam_update(p, g, m, v, n, decay, step_size, bc2, b1, b2, eps));|
s|^        float denom = sqrtf(v\[i\]) / bc2_sqrt + eps;|        float denom = sqrtf(v[i]) / sqrtf(bc2) + eps;|
