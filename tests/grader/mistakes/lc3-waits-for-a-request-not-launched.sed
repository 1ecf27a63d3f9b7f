# The wait names the request after the one in flight, which nobody has
# launched: it would never be done, and every rank would sleep forever. The
# wait refuses it at once, naming the request and those launched so far.
# file: lc3_zero2/zero2.c
# check: lc3.1a
# says: was never launched
s/^    comm_wait_timed(b->req, &t->rs);$/    comm_wait_timed(b->req + 1, \&t->rs);/
