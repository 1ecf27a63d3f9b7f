# An overflow halves the dynamic scale with no floor: once the scale is at 1,
# overflows take it to 0.5, 0.25, ... Only a run of overflows at the lowest
# scale shows it.
# file: lc5_mixed_precision/mixed_precision.c
# check: lc5.1a
# says: a halving never goes below MIN_SCALE = 1
# check: lc5.0d
# says: the loss scaler's scale is 0.5
s/^        if (s->dynamic) s->scale = fmaxf(s->scale \/ 2.0f, MIN_SCALE);$/        if (s->dynamic) s->scale = s->scale \/ 2.0f;/
