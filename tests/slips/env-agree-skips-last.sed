# The agreement of the ZC_* variables across ranks stops one short of the table's end.
# file: common/rt.c
# run: tests/test_hostile.sh "$BUILD"
# says: ZC_WATCHDOG_LOG is not the same on every rank
s/for (int i = 0; env_variable(i); i++) {/for (int i = 0; env_variable(i + 1); i++) {/
