# The elastic restart's N searched down to MIN + 1: MIN itself never tried.
# file: tools/launch
# run: NODES_PARTS=elastic tests/test_nodes.sh "$BUILD"
# says: FAIL: elastic: the job finishes
s/for ((m = room; m >= elastic; m--)); do/for ((m = room; m > elastic; m--)); do/
