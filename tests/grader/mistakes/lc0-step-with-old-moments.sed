# p stepped with m and v from before this step's gradient, the moments updated
# after: at the first step only the decay happens.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: m and v from before this step's update
/^        m\[i\] = b1 \* m\[i\] + (1.0f - b1) \* g\[i\];/d
/^        v\[i\] = b2 \* v\[i\] + (1.0f - b2) \* g\[i\] \* g\[i\];/d
s|^        p\[i\] = p\[i\] \* decay - step_size \* m\[i\] / denom;|&\n        m[i] = b1 * m[i] + (1.0f - b1) * g[i];\n        v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];|
