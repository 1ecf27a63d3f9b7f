# Adam's step count advanced once per layer: the bias correction runs ahead.
# file: lc5_mixed_precision/mixed_precision.c
# check: lc5.4a
# says: one count for the whole model
/^void adam_step/,/^}/ s/^    o->step++;/    (void)0;/
/^void adam_step/,/^}/ s/^        const Layer \*L = &m->layer\[l\];/        const Layer *L = \&m->layer[l];\n        o->step++;/
