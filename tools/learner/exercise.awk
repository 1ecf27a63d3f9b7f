# exercise.awk: a learner's copy of one source file, with the exercise regions
# of one lecture (-v lc=lc2.) replaced by their stubs. A region in a reference
# file reads:
#     // EXERCISE lc2.1: one line saying what to write
#     //| more lines of instructions, kept in the learner's copy
#     ...the reference code, left out of the copy...
#     // STUB: code the copy gets instead (a neutral return value, say)
#     // END EXERCISE
# The copy keeps the markers and instructions, calls exercise_todo("lc2.1"),
# and has the STUB lines uncommented. Regions of other lectures stay as they are.
function fail(msg) { printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"; bad = 1; exit 1 }

/^[ \t]*\/\/ EXERCISE lc[0-9]+\.[0-9]+:/ {
    if (mode) fail("EXERCISE inside another exercise")
    id = $0; sub(/^[ \t]*\/\/ EXERCISE /, "", id); sub(/:.*/, "", id)
    if (index(id, lc) != 1) { print; foreign = 1; next }
    indent = $0; sub(/\/\/.*/, "", indent)
    mode = 1; print; next
}
/^[ \t]*\/\/ END EXERCISE/ {
    if (foreign) { foreign = 0; print; next }
    if (!mode) fail("END EXERCISE without EXERCISE")
    if (mode == 1) print indent "exercise_todo(\"" id "\");"
    mode = 0; print; next
}
mode == 1 && /^[ \t]*\/\/\|/ { print; next }
mode == 1 { print indent "exercise_todo(\"" id "\");"; mode = 2 }
mode == 2 && /^[ \t]*\/\/ STUB: / { sub(/\/\/ STUB: /, ""); print; next }
mode == 2 { next }
{ print }
END { if (!bad && (mode || foreign)) { printf "%s: EXERCISE %s has no END EXERCISE\n", FILENAME, id > "/dev/stderr"; exit 1 } }
