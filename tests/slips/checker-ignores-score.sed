# The results checker no longer compares the file's score with the terminal's.
# file: tests/grader/check_results.py
# run: tests/test_grade_outputs.sh "$BUILD"
# says: FAIL: the results checker refuses a gradescope file with another total score
s/    if (doc\["score"\], sum(t\["max_score"\] for t in tests)) != total:/    if False:/
