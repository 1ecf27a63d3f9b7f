# Adam's new moments are computed into temporaries and never stored.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: was never stored
s/^        m\[i\] = b1 \* m\[i\] + (1.0f - b1) \* g\[i\];/        float mi = b1 * m[i] + (1.0f - b1) * g[i];/
s/^        v\[i\] = b2 \* v\[i\] + (1.0f - b2) \* g\[i\] \* g\[i\];/        float vi = b2 * v[i] + (1.0f - b2) * g[i] * g[i];/
s/^        float denom = sqrtf(v\[i\]) \/ bc2_sqrt + eps;/        float denom = sqrtf(vi) \/ bc2_sqrt + eps;/
s/^        p\[i\] = p\[i\] \* decay - step_size \* m\[i\] \/ denom;/        p[i] = p[i] * decay - step_size * mi \/ denom;/
