# A skipped step that still advances Adam's step count (and so its bias correction).
# file: lc5_mixed_precision/mixed_precision.c
# check: lc5.2a
# says: must not advance it
s/^    if (finite) adam_step(t, t->a.clip > 0 ? clip_factor(grad_norm(t), t->a.clip) : 1.0f);$/&\n    else t->opt.step++;/
