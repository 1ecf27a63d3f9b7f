# The wait names the request after the one in flight, which nobody has
# launched: every thread of every rank sleeps, none spins (nothing is in
# MPI), so no processor time passes either. The watchdog sees every thread
# asleep and ends the check, saying so.
# file: lc3_zero2/zero2.c
# check: lc3.1a
# says: asleep
# time-scale: 0.2
s/^    comm_wait_timed(b->req, &t->rs);$/    comm_wait_timed(b->req + 1, \&t->rs);/
