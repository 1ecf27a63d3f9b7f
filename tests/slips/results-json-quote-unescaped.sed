# A double quote in a check's output written to the JSON as it is.
# file: tests/grader/results.awk
# run: tests/test_grade_outputs.sh "$BUILD"
# says: FAIL: results.awk: what JSON and XML escape reads back as it was
s/    else if (c == "\\"") out = out "\\\\\\""/    else if (c == "\\"") out = out "\\""/
