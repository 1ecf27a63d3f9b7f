# The results file's score summed from the points column, not the points got.
# file: tests/grader/results.awk
# run: tests/test_grade_outputs.sh "$BUILD"
# says: FAIL: results.awk: what JSON and XML escape reads back as it was
s/  total += \$1; score += \$2/  total += $1; score += $1/
