# A waiting rank charged its fair share where it used more than half of it, not less.
# file: tests/check_mpi.h
# run: tests/test_harness.sh "$BUILD"
# says: FAIL: a rank that waits yielding beside busy processes is stopped for no progress
s|double charged = used < fair / 2 ? fair : used;|double charged = used > fair / 2 ? fair : used;|
