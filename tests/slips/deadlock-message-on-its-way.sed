# The proof's test for a message on its way turned around: a rank counts as
# held only when its partner's message is still coming.
# file: tests/check_mpi.h
# run: tests/test_harness.sh "$BUILD"
# says: stopped as a deadlock
s/if (w\[f\].sent\[r\] != w\[r\].received\[f\]) return 0;/if (w[f].sent[r] == w[r].received[f]) return 0;/
