# The hand-off written after the CPU loop: on a GPU run the loop has already
# read and written device memory from the CPU when the kernel is called.
# file: common/kernels_cpu.c
# check: lc0.1d
# says: then ran the CPU loop too
/^    ON_GPU(cuda_adam_update(/d
s|^    // STUB: (void)p|    ON_GPU(cuda_adam_update(p, g, m, v, n, decay, step_size, bc2_sqrt, b1, b2, eps));\n&|
