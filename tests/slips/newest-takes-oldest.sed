# A save dir without its latest file: the oldest complete checkpoint found.
# file: common/manifest.c
# run: tests/test_checkpoint.sh "$BUILD"
# says: FAIL:   which is step 8
s/if (manifest_complete(path, e->d_name) \&\& s > newest) newest = s;/if (manifest_complete(path, e->d_name) \&\& (newest < 0 || s < newest)) newest = s;/
