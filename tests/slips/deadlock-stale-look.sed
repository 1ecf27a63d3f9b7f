# A rank's state counted without its having looked again since the last read.
# file: tests/check_mpi.h
# run: tests/test_harness.sh "$BUILD"
# says: FAIL: a rank stopped after a barrier is no proof of a deadlock
s/stable = stable \&\& look > proof.look\[r\] \&\&/stable = stable \&\& look >= proof.look[r] \&\&/
