# The decay factor 1 - wd, without lr.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: p *= 1 - wd
s|^    float decay = 1.0f - h->lr \* h->weight_decay;|    float decay = 1.0f - h->weight_decay;|
