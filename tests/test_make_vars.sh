#!/bin/bash
# make's variables are data (issue 33): what a learner or a course's CI puts in
# LC, N, CHECK, MINE, ARGS, A, B, RANKS, GRADE_DIR or BUILD never runs as a
# command, never expands as a file pattern, and a value that names nothing
# (no such check, no such number of ranks, no such folder, a number of ranks
# the memory cannot hold) is refused before anything runs, in one line, with
# make's "Error 2" (the script's status 2). A missing MINE is never the
# reference graded as the learner's.
# usage: tests/test_make_vars.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. tests/expect.sh
export BUILD
# Every make here runs as a learner types it, not nested in make test's own
# make (whose MAKELEVEL renames make's lines "make[2]: ***").
unset MAKELEVEL MAKEFLAGS MFLAGS
marker=$tmp/marker

# refused FRAGMENT VAR=VALUE... -- TARGET: make TARGET with the variables in its
# environment fails with one line of the script's own containing FRAGMENT
# (besides make's "Error 2"), and nothing ran that the values spell.
refused() {
  says=$1; shift
  vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  rm -f "$marker"
  env "${vars[@]}" timeout 300 make -s --no-print-directory "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  grep -vE '^make(\[[0-9]+\])?: \*\*\*' "$tmp/err" >"$tmp/own"
  if [ $rc -ne 0 ] && grep -q 'Error 2$' "$tmp/err" && [ "$(grep -c . "$tmp/own")" -eq 1 ] &&
     grep -qF -- "$says" "$tmp/own" && [ ! -e "$marker" ]; then ok=$((ok + 1))
  else
    bad=$((bad + 1))
    echo "FAIL: ${vars[*]} make $* -> exit $rc, marker $([ -e "$marker" ] && echo made || echo absent), want '$says':"
    sed 's/^/    /' "$tmp/err" | head -5
  fi
}

# A learner's folder with lecture 2 started (the reference copied).
mine=$tmp/mine
mkdir -p "$mine/lc2_zero1"
cp lc2_zero1/zero1.c "$mine/lc2_zero1/"

# Commands in the values: nothing runs (each case made the marker before).
refused "no such lecture" LC="2\`touch $marker\`" MINE="$mine" -- grade
refused "no such lecture" LC="2\$(touch $marker)" MINE="$mine" -- grade
refused "one check's id" LC=2 CHECK="lc2.1a\"; touch $marker; \"" MINE="$mine" -- grade
refused "numbers of ranks" LC=2 N="3\`touch $marker\`" MINE="$mine" -- grade
refused "no such folder" LC=2 MINE="x\"; touch $marker; \"" -- grade
refused "no stage" A="lc1\"; touch $marker; \"" B=lc2 -- diff
refused "a number of ranks" RANKS="4; touch $marker" -- run
refused "give the lecture" LC="1\`touch $marker\`" -- exercise
refused "unexpected argument" LC=2 N=2 ARGS="--steps 3 \`touch $marker\`" MINE="$mine" -- mine
check "no file named after a variable in the checkout" sh -c '! ls | grep -q "^MINE=\|^BUILD="'
# The same on make's command line, where make itself would expand a '$(...)'
# (in every recipe's environment) before any script saw the value.
refused_here() {
  says=$1; shift
  refused "$says" -- "$@"
}
refused_here "no such lecture" grade LC="2\$(shell touch $marker)" MINE="$mine"
refused_here "one check's id" grade LC=2 CHECK='$(x)' MINE="$mine"
refused_here "one check's id" grade LC=2 CHECK="lc2.1a\$(shell touch $marker)" MINE="$mine"
refused_here "unexpected argument" mine LC=2 N=2 ARGS="--steps 3 \$(shell touch $marker)" MINE="$mine"
rm -f "$marker"
make -s --no-print-directory stages LC="\$(shell touch $marker)" >"$tmp/out" 2>&1
check "make stages with LC='\$(shell ...)' on its command line runs nothing" test ! -e "$marker"
# BUILD names folders in make's own rules: refused by make itself.
rm -f "$marker"
make -s --no-print-directory grade "BUILD=x;touch $marker" >"$tmp/out" 2>"$tmp/err"
check "BUILD with a ';' refused by make, nothing run ($(head -n 1 "$tmp/err"))" \
  sh -c "grep -q 'a folder name of letters' '$tmp/err' && [ ! -e '$marker' ]"
make -s --no-print-directory stages "BUILD=\$(shell touch $marker)" >"$tmp/out" 2>"$tmp/err"
check "BUILD with a '\$(shell ...)' refused by make, nothing run ($(head -n 1 "$tmp/err"))" \
  sh -c "grep -q 'a folder name of letters' '$tmp/err' && [ ! -e '$marker' ]"

# ARGS are words, never file patterns: a loss log named with a '*' writes that
# name, and the file the pattern would match is left alone.
mkdir -p "$tmp/logs"
echo keep >"$tmp/logs/victim"
LC=2 N=2 MINE="$mine" ARGS="--hidden 8 --layers 1 --batch 12 --steps 2 --sample 0 --log-every 0 --loss-log $tmp/logs/vic*" \
  timeout 300 make -s --no-print-directory mine >"$tmp/out" 2>&1
check "ARGS with a '*': the matching file kept" grep -qx keep "$tmp/logs/victim"
check "ARGS with a '*': the log written under that very name" test -s "$tmp/logs/vic*"

# Values that name nothing.
refused "CHECK=bogus: no such check in lecture 2" LC=2 CHECK=bogus MINE="$mine" -- grade
refused "CHECK=lc2.1a\\nlc2.1b: one check's id" LC=2 CHECK="$(printf 'lc2.1a\nlc2.1b')" MINE="$mine" -- grade
refused "N=2\\n3x: numbers of ranks" LC=2 N="$(printf '2\n3x')" MINE="$mine" -- grade
refused "MINE=$tmp/no\\nwhere: no such folder" LC=2 MINE="$(printf '%s/no\nwhere' "$tmp")" -- grade
# A list of N given on lines is the same list: its checks run (none ran, 0/0).
LC=2 CHECK=lc2.1a N="$(printf '2\n3')" MINE="$mine" timeout 300 make -s --no-print-directory grade >"$tmp/out" 2>&1
check "N given on two lines grades the check at both ($(tail -n 1 "$tmp/out"))" \
  sh -c "grep -q '^lc2.1a .*(N=2) .* OK' '$tmp/out' && grep -q '^lc2.1a .*(N=3) .* OK' '$tmp/out'"
refused "N=9: no check of lecture 2 runs at 9 ranks" LC=2 N=9 MINE="$mine" -- grade
refused "N=0: numbers of ranks" LC=2 N=0 MINE="$mine" -- grade
refused "N=abc: numbers of ranks" LC=2 N=abc MINE="$mine" -- grade
refused "N=9: no check of lc2.4a runs at 9 ranks" LC=2 CHECK=lc2.4a N=9 MINE="$mine" -- grade
refused "MINE=$tmp/none: no such folder" LC=2 MINE="$tmp/none" -- grade
refused "nothing of lecture 3 under" LC=3 MINE="$mine" -- grade
refused "GRADE_DIR=$tmp/g'x: a folder name" LC=2 MINE="$mine" GRADE_DIR="$tmp/g'x" -- grade
check "a refused GRADE_DIR leaves no folder" test ! -e "$tmp/g'x"
refused "N=100000: this node has" LC=1 N=100000 MINE="$mine" -- mine
refused "N=99999999999999999999: this node has" LC=1 N=99999999999999999999 MINE="$mine" -- mine
refused "RANKS=0: a number of ranks" RANKS=0 -- run
finish "make's variables"
