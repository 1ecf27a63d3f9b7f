# The weight decay applied to the updated parameter: p = (p - step) (1 - lr wd);
# PyTorch decays p first and subtracts the step from the decayed value.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: weight decay applied after the Adam step
s|^        p\[i\] = p\[i\] \* decay - step_size \* m\[i\] / denom;|        p[i] = (p[i] - step_size * m[i] / denom) * decay;|
