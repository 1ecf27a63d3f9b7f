# A variable set and empty hashed as one unset, so a rank with ZC_COMM_FIT=
# (the built-in fit) agrees with ranks without it (the cached fit).
# file: common/env.c
# run: tests/test_hostile.sh "$BUILD"
# says: ZC_COMM_FIT is not the same on every rank (rank 1's differs from rank 0's): set it
s/return s ? XXH3_64bits(s, strlen(s)) : 0x5eedULL;/return s \&\& *s ? XXH3_64bits(s, strlen(s)) : 0x5eedULL;/
