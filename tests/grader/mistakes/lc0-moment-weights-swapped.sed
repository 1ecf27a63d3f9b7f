# Each moment's weights swapped: m = (1 - beta1) m + beta1 g, v the same with
# beta2 (the average written with the new value's weight on the old).
# file: common/kernels_cpu.c
# check: lc0.1a
# says: each moment's weights swapped
s|^        m\[i\] = b1 \* m\[i\] + (1.0f - b1) \* g\[i\];|        m[i] = (1.0f - b1) * m[i] + b1 * g[i];|
s|^        v\[i\] = b2 \* v\[i\] + (1.0f - b2) \* g\[i\] \* g\[i\];|        v[i] = (1.0f - b2) * v[i] + b2 * g[i] * g[i];|
