# Weight decay added to the gradient (L2), not decoupled as AdamW does it.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: went into the gradient
s/^    float decay = 1.0f - h->lr \* h->weight_decay;/    float decay = 1.0f, wd = h->weight_decay;/
s/^        m\[i\] = b1 \* m\[i\] + (1.0f - b1) \* g\[i\];/        float gi = g[i] + wd * p[i];\n        m[i] = b1 * m[i] + (1.0f - b1) * gi;/
s/^        v\[i\] = b2 \* v\[i\] + (1.0f - b2) \* g\[i\] \* g\[i\];/        v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;/
