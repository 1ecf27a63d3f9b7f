# The GPU hand-off left out: adam_update's CPU loop is right, but on a GPU run
# the kernel is never called and the CPU loop reads the device's memory. A CPU
# build compiles ON_GPU(...) to nothing, so only lc0.1d, which runs a copy
# built as a CUDA build's against a recording stand-in, sees it.
# file: common/kernels_cpu.c
# check: lc0.1d
# says: never handed the step to the GPU kernel
/^    ON_GPU(cuda_adam_update(/d
