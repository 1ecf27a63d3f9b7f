#!/bin/sh
# make slips: the tests held to the maintainer's slips they must catch. Each file
# of tests/slips/*.sed is a plausible slip in the runtime or the tools (an
# inverted condition, an off-by-one in a bound, a rule read on rank 0 only, an
# escape dropped, a total summed from the wrong column), planted in a copy of
# the tree: the copy is built (from the tree's objects, so only what the slip
# touches compiles again), the slip's suite runs on it, and the slip is caught
# when that suite fails with the line the file names. A slip not caught is a
# check missing from make test.
#
# A slip's file: comment lines, then sed commands for one file.
#   # what the slip is and why a maintainer might make it
#   # file: common/comm_auto.c        the file it changes
#   # run: tests/test_cli.sh "$BUILD"  the suite, from the copy's root ($BUILD: the copy's build)
#   # says: FRAGMENT                   a line of the failing output holds it
#
# usage: tests/slips.sh [BUILD_DIR] [NAME...]      (SLIPS_DIR: the copy, default BUILD_DIR/slips)
set -u
BUILD=${1:-build}
[ $# -gt 0 ] && shift
cd "$(dirname "$0")/.." || exit 2
top=$(pwd)
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
work=${SLIPS_DIR:-$BUILD/slips}
src=$work/src out=$work/build
[ -x "$BUILD/bin/lc0_adam" ] || { echo "slips: build first (make all): no $BUILD/bin/lc0_adam" >&2; exit 2; }

# The copy: the tree's files, and its build without the references and the
# grader's folders (the suites make what they need in the copy's build).
rm -rf "$work"
mkdir -p "$src" "$out"
git ls-files -co --exclude-standard | tar cf - -T - | tar xf - -C "$src"
(cd "$BUILD" && tar cf - --exclude=./test/ref --exclude=./grade --exclude=./selftest --exclude=./slips \
   --exclude=./venv --exclude=./offline --exclude=./run --exclude=./plots .) | tar xf - -C "$out"
[ -d "$BUILD/venv" ] && ln -s "$BUILD/venv" "$out/venv"  # the mutation tool, read only

slips=""
if [ $# -gt 0 ]; then
  for n in "$@"; do
    case $n in *[!A-Za-z0-9-]* | '') echo "slips: '$n': a slip's name, as tests/slips/ has them" >&2; exit 2 ;; esac
    slips="$slips tests/slips/$n.sed"
  done
else slips=$(ls tests/slips/*.sed); fi
caught=0 missed=0 broken=0
for s in $slips; do
  name=$(basename "$s" .sed)
  [ -f "$s" ] || { echo "slips: no slip $name (tests/slips/$name.sed)"; broken=$((broken + 1)); continue; }
  file=$(sed -n 's/^# file: //p' "$s") run=$(sed -n 's/^# run: //p' "$s") says=$(sed -n 's/^# says: //p' "$s")
  what=$(sed -n '1s/^# //p' "$s")
  sed -f "$s" "$file" >"$src/$file.slip"
  if cmp -s "$file" "$src/$file.slip"; then
    echo "BROKEN $name: the slip no longer applies to $file"; broken=$((broken + 1)); rm -f "$src/$file.slip"; continue
  fi
  cat "$src/$file.slip" >"$src/$file" && rm -f "$src/$file.slip"  # (the file's mode kept: a script stays one)
  log=$work/$name.log
  if ! make -C "$src" --no-print-directory -j"$(nproc)" BUILD="$out" build >"$log" 2>&1; then
    echo "BROKEN $name: the copy does not build with it:"; grep -E 'error' "$log" | head -n 3 | sed 's/^/    /'
    broken=$((broken + 1))
  else
    t0=$(date +%s)
    (cd "$src" && BUILD=$out timeout 900 sh -c "$run") >>"$log" 2>&1 </dev/null
    rc=$? secs=$(($(date +%s) - t0))
    if [ $rc != 0 ] && grep -qF -- "$says" "$log"; then
      echo "caught $name ($secs s): $what"; caught=$((caught + 1))
    else
      echo "MISSED $name ($secs s, exit $rc): $what"; echo "    want a failure saying '$says'; the log: $log"
      missed=$((missed + 1))
    fi
  fi
  cat "$file" >"$src/$file"  # the tree's again, with a new time: rebuilt for the next slip
done
echo "slips: $caught caught, $missed missed, $broken broken"
[ $missed = 0 ] && [ $broken = 0 ]
