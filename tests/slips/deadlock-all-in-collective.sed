# Every rank inside MPI's collective taken for a deadlock (none need wait for a message).
# file: tests/check_mpi.h
# run: tests/test_harness.sh "$BUILD"
# says: and the deadlock proof's rule and the fair share hold, state by state
s/    return receivers > 0;/    return receivers >= 0;/
