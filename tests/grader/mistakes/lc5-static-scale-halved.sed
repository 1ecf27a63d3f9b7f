# An overflow halves the scale whether it is dynamic or static: a static scale
# that the user chose moves. Only a static scale that overflows shows it.
# file: lc5_mixed_precision/mixed_precision.c
# check: lc5.1a
# says: a static scale never moves
# check: lc5.0d
# says: the loss scaler's scale is 350000
s/^        if (s->dynamic) s->scale = fmaxf(s->scale \/ 2.0f, MIN_SCALE);$/        s->scale = fmaxf(s->scale \/ 2.0f, MIN_SCALE);/
