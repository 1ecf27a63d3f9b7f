# Adam's step count advanced once per layer: the bias correction runs ahead.
# file: lc2_zero1/zero1.c
# check: lc2.5a
# says: one count for the whole model
/^void adam_step/,/^}/ s/^    o->step++;/    (void)0;/
/^void adam_step/,/^}/ s/^        const Layer \*L = &m->layer\[l\];/        const Layer *L = \&m->layer[l];\n        o->step++;/
