# A save dir without its latest file: the newest step folder found, complete or not.
# file: common/manifest.c
# run: tests/test_checkpoint.sh "$BUILD"
# says: its 1 step folder has no manifest
s/if (manifest_complete(path, e->d_name) \&\& s > newest) newest = s;/if (s > newest) newest = s;/
