# The step added to p: a descent written as p += lr m_hat / (sqrt(v_hat) + eps).
# file: common/kernels_cpu.c
# check: lc0.1a
# says: p moves up its gradient
s|^        p\[i\] = p\[i\] \* decay - step_size \* m\[i\] / denom;|        p[i] = p[i] * decay + step_size * m[i] / denom;|
