# The bias corrections of step - 1 (the step counted from 0): at the first step
# 1 - beta^0 = 0 and the update divides by zero.
# file: common/kernels_cpu.c
# check: lc0.1a
# says: 1 - beta^0 = 0
s|pow(h->beta1, (double)step)|pow(h->beta1, (double)(step - 1))|
s|pow(h->beta2, (double)step)|pow(h->beta2, (double)(step - 1))|
