# The decay scaled by the bias-corrected step size lr / (1 - beta1^t), not lr.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: the decay takes lr alone
s|^    float decay = 1.0f - h->lr \* h->weight_decay;|    float decay = 1.0f - (float)(h->lr / (1.0 - pow(h->beta1, (double)step))) * h->weight_decay;|
