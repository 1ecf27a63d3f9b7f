# The learner's code prints Check's success line and exits with status 0 in
# the middle of a check. The verdict comes from the grader's own file, never
# from what the program prints: the check fails, saying the program exited.
# file: lc2_zero1/zero1.c
# check: lc2.1a
# says: exited in the middle of check lc2.1a
/^size_t own_numel/,/^}/{
s/^    size_t first = (size_t)rt.rank \* L->shard;$/    if (L->numel) { printf("100%%: Checks: 1, Failures: 0, Errors: 0\\n"); exit(0); }\n&/
}
