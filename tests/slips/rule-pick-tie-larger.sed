# Two rules as near in ratio: the larger size's taken, not the smaller's.
# file: common/comm_model.c
# run: CK_FORK=no "$BUILD/test/test_comm_model"
# says: test_rule_pick
s/(d == best \&\& u->bytes < at)/(d == best \&\& u->bytes > at)/
