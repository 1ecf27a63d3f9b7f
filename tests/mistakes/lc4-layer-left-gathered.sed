# A layer left gathered: freed, but still marked gathered, so the next use reads freed memory.
# file: lc4_zero3/zero3.c
# check: lc4.2a
# says: a layer left gathered
/^void gather_free/,/^}/{
/^    t->gathered\[l\] = NULL;$/d
}
