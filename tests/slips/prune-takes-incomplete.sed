# Pruning keeps the newest folder before the save whether it is complete or not,
# and so removes the last complete checkpoint when a save was killed before it.
# file: common/checkpoint.c
# run: tests/test_checkpoint.sh "$BUILD"
# says: which then holds step 8, the last complete before
s/if (s >= 0 \&\& s < step \&\& s > prev \&\& manifest_complete(save_dir, e->d_name)) prev = s;/if (s >= 0 \&\& s < step \&\& s > prev) prev = s;/
