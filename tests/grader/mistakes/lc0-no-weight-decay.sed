# Adam's step without the decay: weight_decay read and never used.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: Adam without weight decay
s|^        p\[i\] = p\[i\] \* decay - step_size \* m\[i\] / denom;|        p[i] = p[i] - step_size * m[i] / denom;|
