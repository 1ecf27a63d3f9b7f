# ZC_TIME_SCALE's floor lowered to 0: a scale of 1e-300 passes again.
# file: common/env.c
# run: tests/test_hostile.sh "$BUILD"
# says: ZC_TIME_SCALE='1e-300'
s/{ "ZC_TIME_SCALE", 0.01, 100, "a factor", 0, 1 },/{ "ZC_TIME_SCALE", 0, 100, "a factor", 0, 1 },/
