# The dynamic scale doubles without bound: after enough clean steps it passes
# 2^24 and, at 2^128, becomes inf.
# file: lc5_mixed_precision/mixed_precision.c
# check: lc5.1b
# says: a doubling past it is not taken
s/^        if (s->scale \* 2.0f <= MAX_SCALE) s->scale \*= 2.0f;$/        s->scale *= 2.0f;/
