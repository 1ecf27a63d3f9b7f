# The scaler told the outcome before the update instead of after it: on a step
# that ends a window the scale doubles first, and the update divides the
# gradient by the new scale, twice the one the backward pass used. Only steps
# that double the scale show it.
# file: lc5_mixed_precision/mixed_precision.c
# check: lc5.2b
# says: the gradient divided by 131072, the new scale
# check: lc5.0d
# says: a clean step after which the reference's scale doubled
/^    if (finite) adam_step(t, t->a.clip > 0 ? clip_factor(grad_norm(t), t->a.clip) : 1.0f);$/{
N
s/^\(    if (finite) adam_step[^\n]*\)\n\(    scaler_update(&t->scaler, !finite);\)$/\2\n\1/
}
