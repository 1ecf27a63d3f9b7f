# v averages |g| where it averages g^2 (a second moment read as a mean magnitude).
# file: common/kernels_cpu.c
# check: lc0.1a
# says: with |g| where v takes g^2
s|^        v\[i\] = b2 \* v\[i\] + (1.0f - b2) \* g\[i\] \* g\[i\];|        v[i] = b2 * v[i] + (1.0f - b2) * fabsf(g[i]);|
