# The step without lr: the bias-corrected m over the denominator alone.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: AdamW without lr
s|^    float step_size = (float)(h->lr / (1.0 - pow(h->beta1, (double)step)));|    float step_size = (float)(1.0 / (1.0 - pow(h->beta1, (double)step)));|
