#!/bin/sh
# make diff-lcK: what a lecture changed, as a unified diff of the stage before
# and this one, with the exercise markers of both left out (they belong to the
# exercises, not to the lecture).
# usage: tools/lecture_diff.sh OLD.c NEW.c
set -eu
strip() { sed -E '/^[[:space:]]*\/\/ (EXERCISE lc[0-9]+\.[0-9]+:|END EXERCISE|STUB: )/d; /^[[:space:]]*\/\/\|/d' "$1"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
strip "$1" > "$tmp/old"
strip "$2" > "$tmp/new"
diff -u --label "$1" --label "$2" "$tmp/old" "$tmp/new" || true
