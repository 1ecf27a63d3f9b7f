# Pruning removes every other step folder, later ones (another run's) too.
# file: common/checkpoint.c
# run: tests/test_checkpoint.sh "$BUILD"
# says: FAIL: a run that saves steps 2 and 4 beside a later run's 6 and 8 leaves those
s/if (s >= 0 \&\& s < step \&\& s != prev) memcpy(doomed\[n++\], e->d_name, 14);/if (s >= 0 \&\& s != step \&\& s != prev) memcpy(doomed[n++], e->d_name, 14);/
