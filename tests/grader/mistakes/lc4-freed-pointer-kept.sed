# gather_free frees the buffer but leaves t->gathered[l] pointing at it: the
# next use of the layer takes the freed buffer for a gathered one, and frees
# it again: a check that trains stops with the failing rank's own line.
# file: lc4_zero3/zero3.c
# check: lc4.2a
# says: t->gathered still points at the buffer
# check: lc4.0a
# says: is freed a second time
/^void gather_free/,/^}/{
/^    t->gathered\[l\] = NULL;$/d
}
