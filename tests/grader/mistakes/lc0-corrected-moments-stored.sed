# The bias-corrected m_hat and v_hat written back into m and v: this step's p is
# right, the state for the next is not.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: m and v hold their bias-corrected values
s|^        p\[i\] = p\[i\] \* decay - step_size \* m\[i\] / denom;|&\n        m[i] /= (float)(1.0 - pow(b1, (double)step));\n        v[i] /= bc2_sqrt * bc2_sqrt;|
