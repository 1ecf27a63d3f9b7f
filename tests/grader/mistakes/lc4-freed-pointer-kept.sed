# gather_free frees the buffer but leaves t->gathered[l] pointing at it: the
# next use of the layer takes the freed buffer for a gathered one: a check
# that trains stops at the first read of it (its pages are out of reach once
# freed), naming the buffer and what the stage was doing.
# file: lc4_zero3/zero3.c
# check: lc4.2a
# says: t->gathered still points at the buffer
# check: lc4.0a
# says: a read of a buffer of comm_buffers (16644 bytes) after its mem_free
/^void gather_free/,/^}/{
/^    t->gathered\[l\] = NULL;$/d
}
