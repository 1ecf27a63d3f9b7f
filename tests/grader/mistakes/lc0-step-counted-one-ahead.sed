# The bias corrections of step + 1 (the step counted as if already taken).
# file: common/kernels_cpu.c
# check: lc0.1a
# says: the bias corrections of step + 1
s|pow(h->beta1, (double)step)|pow(h->beta1, (double)(step + 1))|
s|pow(h->beta2, (double)step)|pow(h->beta2, (double)(step + 1))|
