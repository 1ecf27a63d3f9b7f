# The wait's arguments swapped (a mutant the mutation run found): the request
# number is then an address, and the wait would count up to it holding the
# queue's lock, where no watchdog could look. The wait refuses it at once.
# file: lc3_zero2/zero2.c
# check: lc3.1a
# says: was never launched
s/^    comm_wait_timed(b->req, &t->rs);$/    comm_wait_timed((CommReq)\&t->rs, (CommOverlap *)b->req);/
