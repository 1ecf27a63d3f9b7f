# A node whose shell never started is never noted (the start bound's test turned around).
# file: tools/launch
# run: tests/test_hostile.sh "$BUILD"
# says: FAIL: an agent that never returns
s/     \[ -e "\$up" \] || { echo "\$host silent"/     [ ! -e "$up" ] || { echo "$host silent"/
