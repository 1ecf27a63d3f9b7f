# A check with full marks counted among the failures (<= for <).
# file: tests/grader/results.awk
# run: tests/test_grade_outputs.sh "$BUILD"
# says: FAIL: results.awk: what JSON and XML escape reads back as it was
s/failures\[\$4\] += \$2 < \$1/failures[$4] += $2 <= $1/
