# The dynamic scale never doubles back: the run of clean steps is never counted.
# file: lc5_mixed_precision/mixed_precision.c
# check: lc5.1a
# says: the rule
s/^    } else if (s->dynamic && ++s->clean == s->window) {$/    } else if (s->dynamic \&\& s->clean == s->window) {/
