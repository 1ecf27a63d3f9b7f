#!/bin/sh
# Every file the project cites exists: in any tracked file, a path under
# common/, tools/, tests/, docs/ or a lecture's folder (a module may be named
# without its extension: common/comm is common/comm.c and .h; a pattern must
# match a file), and every Markdown file it names, relative to the citing
# file's folder or to the top. A reference to a
# file the repository does not have (a design note kept elsewhere, a renamed
# test) fails here with the file that cites it.
# usage: tests/test_references.sh
set -u
cd "$(dirname "$0")/.." || exit 2
bad=0 refs=0
for f in $(git ls-files | grep -v '^data/'); do
  [ -f "$f" ] && grep -Iq . "$f" 2>/dev/null || continue  # text files only
  dir=$(dirname "$f")
  for p in $(grep -ohE '(^|[^A-Za-z0-9_./-])(common|tools|tests|docs|lc[0-5]_[a-z_]+)/[A-Za-z0-9_./*-]*[A-Za-z0-9_*]' "$f" |
             sed -E 's/^[^A-Za-z]//' | sort -u); do
    refs=$((refs + 1))
    found=0
    for e in "" .c .h .cu .sh; do
      for m in $p$e; do [ -e "$m" ] && found=1; done  # a pattern (common/comm_*.c) names what it matches
      [ $found = 1 ] && break
    done
    [ $found = 1 ] || { echo "$f cites $p, which is not in the repository"; bad=$((bad + 1)); }
  done
  for p in $(grep -ohE '[A-Za-z0-9_./-]*[A-Za-z0-9_]\.md\b' "$f" | sort -u); do
    refs=$((refs + 1))
    [ -e "$dir/$p" ] || [ -e "$p" ] || { echo "$f cites $p, which is not in the repository"; bad=$((bad + 1)); }
  done
done
echo "references: $refs checked, $bad to a missing file"
[ $bad -eq 0 ]
