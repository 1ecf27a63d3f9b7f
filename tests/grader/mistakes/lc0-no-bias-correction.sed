# Adam without bias correction: early steps are far too small.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: without bias correction
s/^    float step_size = (float)(h->lr \/ (1.0 - pow(h->beta1, (double)step)));/    float step_size = h->lr;/
s/^    float bc2_sqrt = (float)sqrt(1.0 - pow(h->beta2, (double)step));/    float bc2_sqrt = 1.0f;/
