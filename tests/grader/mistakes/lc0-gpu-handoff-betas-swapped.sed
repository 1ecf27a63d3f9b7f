# The kernel's beta1 and beta2 handed in each other's place.
# file: common/kernels_cpu.c
# check: lc0.1d
# says: beta1 = 0.999000013; the kernel takes beta1 = 0.899999976: that is beta2's value
s|^    ON_GPU(cuda_adam_update(p, g, m, v, n, decay, step_size, bc2_sqrt, b1, b2, eps));|    ON_GPU(cuda_adam_update(p, g, m, v, n, decay, step_size, bc2_sqrt, b2, b1, eps));|
