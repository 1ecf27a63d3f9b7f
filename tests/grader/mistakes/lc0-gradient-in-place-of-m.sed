# The step taken with the raw gradient, m computed and stored but not used.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: stepping with g where it steps with m
s|^        p\[i\] = p\[i\] \* decay - step_size \* m\[i\] / denom;|        p[i] = p[i] * decay - step_size * g[i] / denom;|
