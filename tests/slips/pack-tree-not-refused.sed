# The pack's folder allowed to be the tree or above it (the check dropped).
# file: tools/offline_pack.sh
# run: tests/test_offline.sh "$BUILD"
# says: FAIL: offline_pack b '.'
/^above "\$(pwd -P)" && refuse/d
