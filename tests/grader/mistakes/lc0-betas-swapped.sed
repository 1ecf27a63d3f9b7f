# beta1 and beta2 swapped: m averages with 0.999 and v with 0.9.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: beta1 and beta2 swapped
s|^    float b1 = h->beta1, b2 = h->beta2, eps = h->eps;|    float b1 = h->beta2, b2 = h->beta1, eps = h->eps;|
s|pow(h->beta1, (double)step)|pow(h->beta2, (double)step)|
s|sqrt(1.0 - pow(h->beta2, (double)step))|sqrt(1.0 - pow(h->beta1, (double)step))|
