#!/bin/sh
# make grade: builds the learner's exercise files (MINE, default mywork/) in
# place of the reference ones, everything else from the tree, then runs each
# graded check of the lecture alone at each N and prints one line per check
# and N, then the score. Exit status 0 only with full marks.
#
# Settings (make passes them): LC (lectures; default: every lecture started
# under MINE), CHECK (one check's id), N (ranks, e.g. "3"), SOLUTION=1 (grade
# the reference instead), BUILD (the reference build: its lc0 makes the
# references the stages are graded against), GRADE_DIR (where the learner's
# builds go, default BUILD/grade), CHECK_TIMEOUT (seconds per check, 300).
set -u
cd "$(dirname "$0")/.." || exit 2
top=$(pwd)
MINE=${MINE:-mywork}
BUILD=${BUILD:-build}
GRADE_DIR=${GRADE_DIR:-$BUILD/grade}
SOLUTION=${SOLUTION:-0}
CHECK=${CHECK:-}
N=${N:-}
LC=${LC:-}
CHECK_TIMEOUT=${CHECK_TIMEOUT:-300}
case $GRADE_DIR in /*) ;; *) GRADE_DIR=$top/$GRADE_DIR ;; esac
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac

all=$(tools/lectures.sh)
if [ -z "$LC" ]; then
  if [ "$SOLUTION" = 1 ]; then LC=$all
  else
    for k in $all; do
      for f in $(tools/lectures.sh files "$k"); do
        if [ -e "$MINE/$f" ]; then LC="$LC $k"; break; fi
      done
    done
    if [ -z "$LC" ]; then
      echo "make grade: nothing of yours under $MINE/ yet: make exercise LC=0 makes the first files" >&2
      exit 2
    fi
  fi
fi
for k in $LC; do
  case " $all " in *" $k "*) ;; *) echo "make grade: LC=$k: no such lecture (one of: $all)" >&2; exit 2 ;; esac
done

# The references the stages are graded against, from the tree's lc0.
export ZC_REF="$BUILD/test/ref" CK_FORK=no
# A buffer freed or reused before its collective completes must show: freed
# blocks read as NaN, and every collective starts a millisecond late.
export ZC_POISON_FREED=1 ZC_COMM_DELAY_US=1000
if [ ! -s "$ZC_REF/plain.loss" ] || [ "$BUILD/bin/lc0_adam" -nt "$ZC_REF/plain.loss" ]; then
  echo "making the lc0 references ($ZC_REF)"
  tests/refs.sh "$BUILD" >/dev/null || { echo "make grade: the lc0 references failed to train" >&2; exit 1; }
fi

# Every graded check, from the test programs that hold them (--list):
# program|id|points|ranks|title. Lecture K's checks are named lcK.*.
mkdir -p "$GRADE_DIR"
rm -f "$GRADE_DIR/score"
for p in test_lc0 test_lc1 test_lc2 test_lc3 test_lc4 test_lc5 test_comm; do
  "$BUILD/test/$p" --list </dev/null | sed "s/^/$p|/"
done >"$GRADE_DIR/checks"
programs_of() { grep "^[^|]*|lc$1\." "$GRADE_DIR/checks" | cut -d'|' -f1 | sort -u | tr '\n' ' '; }

# A copy of the tree with the learner's files of lecture $1 over it (one copy
# for every lecture); prints where its test programs are built. Files are
# copied only when they changed, so make rebuilds only what changed since the
# last grade, of this lecture or another.
learner_build() {
  k=$1 src=$GRADE_DIR/src out=$GRADE_DIR/build
  theirs=" $(tools/lectures.sh files "$k" | tr '\n' ' ') "
  mkdir -p "$src"
  find Makefile common tests tools lc*_* -type f ! -name '*.md' | while read -r f; do
    mine=$f
    case $theirs in *" $f "*) [ -e "$MINE/$f" ] && mine=$MINE/$f ;; esac
    if ! cmp -s "$mine" "$src/$f"; then mkdir -p "$src/$(dirname "$f")"; cp "$mine" "$src/$f"; fi
  done
  targets=""
  for p in $(programs_of "$k"); do targets="$targets $out/test/$p"; done
  # shellcheck disable=SC2086
  if ! make -C "$src" --no-print-directory -j"$(nproc)" BUILD="$out" CUDA=0 $targets >"$out.log" 2>&1; then
    return 1
  fi
  echo "$out/test"
}

dots() {  # the check's line up to its result, dotted out to a column
  awk -v s="$1" 'BEGIN { n = 78 - length(s); d = ""; while (n-- > 0) d = d "."; printf "%s %s", s, d }'
}

got=0 total=0
for k in $LC; do
  if [ "$SOLUTION" = 1 ]; then
    bin=$BUILD/test
    echo "== lecture $k: the reference"
  else
    echo "== lecture $k: your files ($(for f in $(tools/lectures.sh files "$k"); do
      if [ -e "$MINE/$f" ]; then printf '%s ' "$MINE/$f"; else printf '%s (not started: the reference) ' "$f"; fi
    done))"
    if ! bin=$(learner_build "$k"); then
      echo "your files do not build (all of $GRADE_DIR/build.log; the errors):"
      grep -E 'error|Error' "$GRADE_DIR/build.log" | head -n 20 | sed 's/^/    /'
      bin=""
    fi
  fi
  for p in $(programs_of "$k"); do
    grep "^$p|lc$k\." "$GRADE_DIR/checks" | while IFS='|' read -r _p id points ns title; do
      [ -z "$CHECK" ] || [ "$CHECK" = "$id" ] || continue
      for n in $ns; do
        [ -z "$N" ] || case " $N " in *" $n "*) ;; *) continue ;; esac
        line=$(dots "$id $title (N=$n)")
        if [ -z "$bin" ]; then
          echo "$line FAIL 0/$points (does not build)"
          echo "$points 0" >>"$GRADE_DIR/score"
          continue
        fi
        log=$GRADE_DIR/last.log
        t0=$(date +%s.%N)
        launch="tools/launch $n"
        [ "$n" = 1 ] && launch=""  # one process needs no mpirun (MPI starts as a singleton)
        # shellcheck disable=SC2086
        CK_RUN_CASE=$id timeout "$CHECK_TIMEOUT" $launch "$bin/$p" >"$log" 2>&1 </dev/null
        rc=$?
        secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        if [ $rc -eq 0 ] && grep -q '^100%: Checks: 1,' "$log"; then
          echo "$line OK $points/$points (${secs}s)"
          echo "$points $points" >>"$GRADE_DIR/score"
          continue
        fi
        echo "$line FAIL 0/$points (${secs}s)"
        echo "$points 0" >>"$GRADE_DIR/score"
        why=$(grep -m 2 ':[FE]:' "$log" | sed -E 's/^[^:]*:[0-9]+:[FE]:[^:]*:[^:]*:[0-9]+: //')
        if [ -z "$why" ] && [ $rc -eq 124 ]; then
          why="no answer in $CHECK_TIMEOUT s: a rank is waiting for a message or a collective that never comes"
        elif [ -z "$why" ] && grep -q 'Checks: 0,' "$log"; then
          why="the test program has no check $id"
        elif [ -z "$why" ]; then
          why="it crashed: $(grep -v '^ *$' "$log" | grep -v '^Running suite' | tail -n 2 | tr '\n' ' ')"
        fi
        echo "$why" | sed 's/^/    /'
        echo "    rerun: make grade LC=$k CHECK=$id N=$n$([ "$SOLUTION" = 1 ] && echo ' SOLUTION=1')"
      done
    done
  done
done
if [ -f "$GRADE_DIR/score" ]; then
  read -r total got <<EOF
$(awk '{ t += $1; g += $2 } END { print t, g }' "$GRADE_DIR/score")
EOF
  rm -f "$GRADE_DIR/score"
fi
echo "Score: $got/$total"
[ "$total" -gt 0 ] && [ "$got" -eq "$total" ]
