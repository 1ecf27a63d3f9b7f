#!/bin/sh
# make diff-lcK: what a lecture changed, as a unified diff of the stage before
# and this one, with the exercise markers of both left out (they belong to the
# exercises, not to the lecture). make diff A=lcI B=lcJ: any two stages, named
# by their start (lc1) or in full, from the environment.
# usage: tools/lecture_diff.sh OLD.c NEW.c
#        tools/lecture_diff.sh --stages "DIR/FILE ..."     (A and B from the environment)
set -eu
if [ "${1:-}" = --stages ]; then
  list=$2
  names=$(for s in $list; do printf '%s\n' "${s%%/*}"; done | tr '\n' ' ' | sed 's/ $//')
  pick() { for s in $list; do case ${s%%/*} in "$1" | "$1"_*) echo "$s"; return ;; esac; done; }
  if [ -z "${A:-}" ] || [ -z "${B:-}" ]; then echo "usage: make diff A=lc1 B=lc4 (stages: $names)" >&2; exit 2; fi
  a=$(pick "$A") b=$(pick "$B")
  [ -n "$a" ] || { echo "make diff: no stage '$A' (stages: $names)" >&2; exit 2; }
  [ -n "$b" ] || { echo "make diff: no stage '$B' (stages: $names)" >&2; exit 2; }
  set -- "$a.c" "$b.c"
fi
strip() { sed -E '/^[[:space:]]*\/\/ (EXERCISE lc[0-9]+\.[0-9]+:|END EXERCISE|STUB: )/d; /^[[:space:]]*\/\/\|/d' "$1"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
strip "$1" > "$tmp/old"
strip "$2" > "$tmp/new"
diff -u --label "$1" --label "$2" "$tmp/old" "$tmp/new" || true
