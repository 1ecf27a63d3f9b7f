# The rule's choice with its lead over Open MPI's own turned around.
# file: common/comm_model.c
# run: CK_FORK=no "$BUILD/test/test_comm_model"
# says: test_rule_choose
s/secs\[best\] > (1 - COMM_RULE_LEAD) \* secs\[lib\] ? lib : best/secs[best] < (1 - COMM_RULE_LEAD) * secs[lib] ? lib : best/
