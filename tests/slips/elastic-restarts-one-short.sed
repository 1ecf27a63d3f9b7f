# The restarts counted one short: --restarts R allows R - 1.
# file: tools/launch
# run: NODES_PARTS=elastic tests/test_nodes.sh "$BUILD"
# says: FAIL: elastic: the job finishes
s/if \[ "\$restart" -gt "\$restarts" \]; then/if [ "$restart" -ge "$restarts" ]; then/
