# After a lost node, the node list kept the wrong way round: only the lost node is kept.
# file: tools/launch
# run: NODES_PARTS=elastic tests/test_nodes.sh "$BUILD"
# says: resumes from step 10 at N = 2 on node1
s/case ",\$lost," in \*",\${node\[\$i\]},"\*) ;; \*) keep_node+=("\${node\[\$i\]}"); keep_slots+=("\${slots\[\$i\]}") ;; esac/case ",$lost," in *",${node[$i]},"*) keep_node+=("${node[$i]}"); keep_slots+=("${slots[$i]}") ;; *) ;; esac/
