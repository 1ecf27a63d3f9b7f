# Only v's bias correction: m's 1 - beta1^t left out of the step size.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: v's bias correction alone
s|^    float step_size = (float)(h->lr / (1.0 - pow(h->beta1, (double)step)));|    float step_size = h->lr;|
