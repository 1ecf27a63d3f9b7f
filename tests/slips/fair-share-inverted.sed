# The fair share of a core with cores and tasks swapped.
# file: tests/check_mpi.h
# run: tests/test_harness.sh "$BUILD"
# says: and the deadlock proof's rule and the fair share hold, state by state
s|double share = cores / (double)runnable;|double share = (double)runnable / cores;|
