# Only the gather launched for the layer itself is waited for: a prefetched
# layer is used (and never waited for) while its gather may still be in flight.
# Grading mode poisons a gathered buffer from the launch to the wait.
# file: lc4_zero3/zero3.c
# check: lc4.1a
# says: wait for the layer's gather before using it
/^float \*gather_params/,/^}/{
s/^    if (!t->gathered\[l\]) gather_launch(t, l);$/    if (!t->gathered[l]) { gather_launch(t, l); comm_wait_timed(t->gather_req[l], \&t->ag); t->gather_req[l] = -1; }/
/^    if (t->gather_req\[l\] >= 0) comm_wait_timed/d
}
