# An ampersand in a check's output written to the XML as it is.
# file: tests/grader/results.awk
# run: tests/test_grade_outputs.sh "$BUILD"
# says: FAIL: results.awk: what JSON and XML escape reads back as it was
s/  gsub(\/&\/, "\\\\&amp;", s); gsub/  gsub/
