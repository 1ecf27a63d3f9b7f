# Only the gather launched for the layer itself is waited for: a prefetched
# layer is used (and never waited for) while its gather may still be in flight.
# The layer's buffer is freed with its gather never waited for: when a later
# wait runs the gather (grading mode runs a request at its wait, or a later
# one's), its output is named as freed before it could write there.
# file: lc4_zero3/zero3.c
# check: lc4.1a
# says: the output of all_gather #2 (5.5 KiB) was freed before the collective completed
/^float \*gather_params/,/^}/{
s/^    if (!t->gathered\[l\]) gather_launch(t, l);$/    if (!t->gathered[l]) { gather_launch(t, l); comm_wait_timed(t->gather_req[l], \&t->ag); t->gather_req[l] = -1; }/
/^    if (t->gather_req\[l\] >= 0) comm_wait_timed/d
}
