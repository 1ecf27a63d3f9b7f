#!/bin/sh
# The code graded is the code that runs: every function of a stage's file
# compiles to the same instructions in its test program (its lecture's suite
# in tests/, which includes the file, then the checks at -O0: tests/grading.h)
# as in the stage's own program. A learner's bug that only undefined
# behaviour shows (a write one double past a local) then does in the grade
# what it does in `make run`. GCC's optimize pragma can reach back: a plain "O0" turned the
# frame pointer back on for the functions above it too (17 to 28 of each
# stage's 24 to 38 functions compiled otherwise, and a known mistake that the
# stage's program survives crashed its grade).
# usage: tests/test_same_code.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. tests/expect.sh

# code DISASSEMBLY FUNCTION: FUNCTION's instructions, without what the link
# decides (addresses, the numbers GCC gives static locals) or the padding
# after it. A jump inside the function is written as its offset from the
# function's start, not by the symbol objdump names for its address: that
# may be any symbol with a value near it (a thread-local's offset in its
# segment once named half of lc1's acts_alloc), and two jumps to different
# places of one function must not read the same.
code() {
  awk -F '\t' -v f="<$2>:" '
    function hex(s,   i, n) {
      n = 0
      for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
      return n
    }
    !p { split($0, h, " "); if (h[2] == f) { p = 1; start = hex(h[1]) } next }
    /^$/ { exit }
    { a = $1; gsub(/[ :]/, "", a); if (a != "") last = hex(a); n++; ins[n] = $2 }
    END {
      for (i = 1; i <= n; i++) {
        s = ins[i]
        sub(/ *#.*/, "", s)
        gsub(/0x[0-9a-f]*\(%rip\)/, "X(%rip)", s)
        if (match(s, /[0-9a-f]+ <[^>]*>/)) {
          split(substr(s, RSTART, RLENGTH), t, " ")
          to = hex(t[1])
          if (to >= start && to <= last) to = "<+" (to - start) ">"
          else { sub(/^</, "", t[2]); sub(/[+>].*$/, "", t[2]); sub(/\.[0-9]+$/, "", t[2]); to = "<" t[2] ">" }
          s = substr(s, 1, RSTART - 1) to substr(s, RSTART + RLENGTH)
        }
        print s
      }
    }' "$1" |
    grep -v -e '^nop' -e '^data16' -e '^xchg   %ax,%ax' -e '^\.\.\.$' -e '^add    %al,(%rax)$'
}

for k in $(tools/lectures.sh); do
  file=$(tools/lectures.sh files "$k" | grep '^lc')
  stage=$(dirname "$file")
  bin=$BUILD/bin/$stage test=$BUILD/test/test_lc$k
  # The functions the stage's file defines, by the stage program's symbols
  # (its main is not in the test program, which has its own).
  fns=$(nm -l --defined-only "$bin" | awk -v f="/$file:" '($2 == "T" || $2 == "t") && index($4, f) && $3 != "main" { print $3 }' | sort -u)
  objdump -d --no-show-raw-insn "$bin" >"$tmp/bin.s"
  objdump -d --no-show-raw-insn "$test" >"$tmp/test.s"
  n=0 same=0 differ=""
  for fn in $fns; do
    n=$((n + 1))
    code "$tmp/bin.s" "$fn" >"$tmp/a"
    code "$tmp/test.s" "$fn" >"$tmp/b"
    if [ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b"; then same=$((same + 1)); else differ="$differ $fn"; fi
  done
  check "lc$k: $file defines functions ($n found in $bin)" [ "$n" -gt 5 ]
  check "lc$k: each compiles the same in $test and $bin (differ:$differ)" [ -z "$differ" ]
done
finish "the code graded is the code that runs"
