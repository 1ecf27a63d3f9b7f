# The lost node named from the first agent that ended cleanly, not the first that did not.
# file: tools/launch
# run: NODES_PARTS=lost tests/test_nodes.sh "$BUILD"
# says: want one line 'launch: node node2 was lost
s/read -r lost lost_why < <(awk '\$2 ~ \/^\[0-9\]+\$\/ \&\& \$2 != 0 { print \$1, \$2; exit }'/read -r lost lost_why < <(awk '$2 ~ \/^[0-9]+$\/ \&\& $2 == 0 { print $1, $2; exit }'/
