# Right, written another way: the scaler's rule with the branches the other
# way round, the doubling as an addition and the floor as a comparison.
# file: lc5_mixed_precision/mixed_precision.c
/^    if (overflow) {$/,/^    }$/c\
    if (!overflow) {\
        if (s->dynamic && ++s->clean >= s->window) {\
            s->clean = 0;\
            if (s->scale <= MAX_SCALE / 2) s->scale = s->scale + s->scale;\
        }\
    } else {\
        s->skipped += 1;\
        s->clean = 0;\
        if (s->dynamic) s->scale = s->scale / 2 < MIN_SCALE ? MIN_SCALE : s->scale / 2;\
    }
