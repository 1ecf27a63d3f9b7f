# The results checker compares points but not the checks' names.
# file: tests/grader/check_results.py
# run: tests/test_grade_outputs.sh "$BUILD"
# says: FAIL: the results checker refuses a gradescope file with a check renamed
s/        if t\["name"\] != name or t\["score"\] != got or t\["max_score"\] != points:/        if t["score"] != got or t["max_score"] != points:/
