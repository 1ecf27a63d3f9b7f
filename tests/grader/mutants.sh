#!/bin/sh
# make grade-mutants: the grader graded by mutation. Every line of code inside
# a lecture's exercise regions is mutated by universalmutator (one change per
# mutant: an operator, a constant, a name, a statement removed, ...), and every
# mutant is graded as a learner's file would be (make grade, stopping at the
# first check that fails). A mutant no check fails is a survivor: a wrong
# solution the grader passes, unless it is equivalent (no behaviour differs),
# which tests/grader/equivalent_mutants argues, one line each.
#
# Classes, per lecture:
#   stillborn   does not compile (the compile filter), or does not build
#   same code   compiles to the very instructions of the reference (CPU build,
#               without debug information; a file with GPU hand-offs, ON_GPU,
#               also as a CUDA build compiles it, which lc0.1d grades):
#               equivalent by construction
#   graded      the distinct programs left (mutants with the same instructions
#               are graded once and share the verdict)
#   killed      some check fails
#   equivalent  no check fails, and tests/grader/equivalent_mutants says why none could
#   survived    no check fails, and nothing says why: the grader has a hole
# The checks' budgets are processor time, which grading several mutants at
# once does not stretch; a mutant stopped by a wall-clock limit (the
# watchdog's backstop, or the grader's own) or by a fair share of the
# processor (the watchdog's estimate for a rank its scheduler starves, which
# the other grades change) is graded again after every first grade, with
# twice the time, so that none counts as killed because the machine was busy.
#
# usage: tests/grader/mutants.sh [K...]   (default: LC, else every lecture)
#   BUILD      the reference build (default build)
#   JOBS       mutants graded at once (default: the cores)
#   SAMPLE=n   grade only n mutants per lecture, drawn at random (make test: 10);
#              a mutant the equivalence list names is counted equivalent there,
#              not graded and not one of the n (no grade of it could fail the run)
#   SEED=s     the draw's seed (default: from the clock; printed, so a run repeats)
# Writes BUILD/mutants/lcK/mutants (one row per mutant) and prints the table.
# Exit status 0 only if no lecture has a survivor.
set -u
cd "$(dirname "$0")/../.." || exit 2
top=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
JOBS=${JOBS:-$(nproc)}
SAMPLE=${SAMPLE:-0}
SEED=${SEED:-$(date +%s)}
EQUIV=$top/tests/grader/equivalent_mutants
work=$BUILD/mutants
lectures=${*:-${LC:-$(tools/lectures.sh)}}
for v in "$JOBS" "$SAMPLE" "$SEED"; do
  case $v in ''|*[!0-9]*) echo "grade-mutants: JOBS, SAMPLE and SEED are whole numbers (got '$v')" >&2; exit 2 ;; esac
done
[ "$JOBS" -ge 1 ] || JOBS=1
all=$(tools/lectures.sh)
for k in $lectures; do
  case " $all " in *" $k "*) ;; *) echo "grade-mutants: no lecture '$k' (one of: $all)" >&2; exit 2 ;; esac
done
mutate=$(tests/grader/mutation_venv.sh "$BUILD") || exit 1
# The flags of the reference build, for the CPU (the compile filter and the
# instructions compared): no CUDA, no debug information.
flags=$(sed 's/^CUDA=[^ ]* //; s/-DZC_CUDA//g; s/ -g / -g0 /' "$BUILD/config") || exit 1
# The references the checks compare with, made now: the grades below run at once.
tests/references.sh "$BUILD" >&2 || exit 1
[ "$SAMPLE" -gt 0 ] && echo "mutants drawn with seed $SEED ($SAMPLE per lecture; SEED=$SEED repeats the draw)"

# ----------------------------------------------------------------------------
# helpers

# A line of code as the equivalence list writes it: no trailing comment, one
# space between words.
norm() { printf '%s\n' "$1" | sed 's|[[:space:]]*//.*$||; s/[[:space:]][[:space:]]*/ /g; s/^ //; s/ $//'; }

# The change of mutant $3 (of tree file $1, at line $2), in orig and mut: a
# line inserted (a statement before this one) gives both lines, as they now
# read, and the line before, which tells one closing brace from another.
change_of() {
  orig=$(sed -n "${2}p" "$1") mut=$(sed -n "${2}p" "$3")
  [ "$(wc -l <"$3")" -gt "$(wc -l <"$1")" ] && mut="$mut $orig (after: $(norm "$(sed -n "$(($2 - 1))p" "$1")"))"
  return 0
}

# Status 0 if tests/grader/equivalent_mutants lists the change orig -> mut of file $1.
listed() {
  key="$1: $(norm "$orig") ==> $(norm "$mut")"
  grep -v '^#' "$EQUIV" 2>/dev/null | sed 's/ ## .*//' | grep -qxF -- "$key"
}

# The lines of lecture $1's exercise regions in file $2 that hold code.
region_lines() {
  awk -v lc="// EXERCISE lc$1." '
    index($0, "// EXERCISE ") { inr = index($0, lc) > 0; next }
    index($0, "// END EXERCISE") { inr = 0; next }
    inr && $0 !~ /^[ \t]*\/\// && $0 !~ /^[ \t]*$/ { print NR }' "$2"
}

# The instructions file $2 (a copy of tree file $1) compiles to, as a hash;
# empty if it does not compile. The copy sits in its own folder, so its
# includes are found beside the tree's file (-iquote). Most mutants that do
# not compile fail already in the front end, a tenth of a whole compile.
# At the lowest priority, as the grades' builds (learner_build.sh says why).
code_of() {
  # shellcheck disable=SC2086
  nice -n 19 cc $flags -iquote "$top/$(dirname "$1")" -fsyntax-only "$2" 2>/dev/null || return 0
  # shellcheck disable=SC2086
  if nice -n 19 cc $flags -iquote "$top/$(dirname "$1")" -S -o "$2.s" "$2" 2>/dev/null; then
    # The GPU build's instructions too, where the file hands work to the GPU
    # (the CUDA runtime's names from the grade's stand-in, tests/standin).
    if grep -q 'ON_GPU(' "$2"; then
      # shellcheck disable=SC2086
      nice -n 19 cc -I"$top/tests/standin" $flags -DZC_CUDA -iquote "$top/$(dirname "$1")" -S -o "$2.gpu.s" "$2" \
        2>/dev/null || echo "no GPU build" >"$2.gpu.s"
    fi
    cat "$2.s" "$2.gpu.s" 2>/dev/null | grep -v '^[[:space:]]*\.file' | sha1sum | cut -c1-16
  fi
  rm -f "$2.s" "$2.gpu.s"
}

# Grades the mutants of queue $1 (rows k|id|file|path) in slot $2, the limits
# times $3, taking each row no other slot has taken (mkdir is atomic), so that
# a slot held by a mutant that hangs leaves the rest to the others; appends
# k|id|verdict|check|n|message rows to $2.out. verdict: killed, survived,
# stillborn, or error (the grade ended without a verdict: the run is void).
grade_list() {
  queue=$1 slot=$2 scale=$3
  mine=$slot/mine
  while IFS='|' read -r k id f path; do
    mkdir "$queue.taken.$k.$id" 2>/dev/null || continue  # another slot's
    rm -rf "$mine"
    mkdir -p "$mine/$(dirname "$f")"
    cp "$path" "$mine/$f"
    rm -f "$slot/grade/verdicts"
    ZC_TIME_SCALE=$scale UNTIL_FAIL=1 MINE=$mine LC=$k BUILD=$BUILD GRADE_DIR=$slot/grade \
      timeout -k 10 1800 tests/grader/grade.sh >"$slot/out" 2>&1 </dev/null
    rc=$?
    if grep -q '(does not build)' "$slot/out"; then
      echo "$k|$id|stillborn|||does not build"
    elif [ "$rc" = 0 ]; then
      echo "$k|$id|survived|||"
    else
      v=$(grep -m 1 '^[^|]*|[^|]*|fail|' "$slot/grade/verdicts" 2>/dev/null)
      if [ -n "$v" ]; then
        echo "$k|$id|killed|$(echo "$v" | cut -d'|' -f1)|$(echo "$v" | cut -d'|' -f2)|$(echo "$v" | cut -d'|' -f5- |
          tr '|' '/')"
      else  # not a verdict: the grading itself went wrong, which counts for nothing
        echo "$k|$id|error|||the grade ended with status $rc and no check's verdict: $(tail -n 1 "$slot/out" |
          tr '|' '/')"
      fi
    fi
  done <"$queue" >>"$slot.out"
}

# Grades queue $1 in $3 slots at once, the limits times $2, and writes every
# row to $1.out.
grade_queue() {
  rm -rf "$1".taken.*
  j=0
  while [ "$j" -lt "$3" ]; do
    : >"$work/slot$j.out"
    grade_list "$1" "$work/slot$j" "$2" &
    j=$((j + 1))
  done
  wait
  j=0
  while [ "$j" -lt "$3" ]; do cat "$work/slot$j.out"; j=$((j + 1)); done >"$1.out"
}

# Status 0 if lecture $1's reference passes check $2 at each N of $3, graded
# as a learner's file in a slot of its own, whose copy of the tree never holds
# a mutant, so nothing there is built again (its output in that slot's out).
reference_passes() {
  mine=$work/ref/mine f=$(tools/lectures.sh files "$1" | head -n 1)
  rm -rf "$mine"
  mkdir -p "$mine/$(dirname "$f")"
  cp "$f" "$mine/$f"
  MINE=$mine LC=$1 CHECK=$2 N=$3 BUILD=$BUILD GRADE_DIR=$work/ref/grade \
    timeout -k 10 1800 tests/grader/grade.sh >"$work/ref/out" 2>&1 </dev/null
}

# ----------------------------------------------------------------------------
# each lecture's mutants, compiled and sorted

status=0
table=""
queue=$work/queue
mkdir -p "$work" && : >"$queue" || exit 1
for k in $lectures; do
  w=$work/lc$k
  rm -rf "$w"
  mkdir -p "$w/gen" "$w/tce"
  : >"$w/all"
  # 1. The mutants of each file's regions (universalmutator, no check of its own:
  #    the compile filter is the next step).
  n=0
  for f in $(tools/lectures.sh files "$k"); do
    n=$((n + 1))
    region_lines "$k" "$f" >"$w/gen/lines$n"
    "$mutate" "$f" c --noCheck --lines "$w/gen/lines$n" --mutantDir "$w/gen/f$n" >"$w/gen/log$n" 2>&1 ||
      { echo "grade-mutants: universalmutator failed on $f (its log: $w/gen/log$n)" >&2; exit 1; }
    for m in "$w/gen/f$n"/*; do
      [ -f "$m" ] || continue
      line=$(cmp "$f" "$m" 2>/dev/null | awk '{ print $NF }')
      [ -n "$line" ] || continue  # the same text: nothing mutated
      echo "$f|$line|$m"
    done >>"$w/all"
  done
  # Each mutant: id|file|line|path. In a sample, in the seed's order.
  if [ "$SAMPLE" -gt 0 ]; then
    "$top/tests/grader/draw.sh" "$SEED" "$k" "$w/all"
  else cat "$w/all"; fi | awk '{ printf "%d|%s\n", NR, $0 }' >"$w/order"
  total=$(wc -l <"$w/order")

  # 2. The compile filter and the instructions: the reference's first.
  for f in $(tools/lectures.sh files "$k"); do
    mkdir -p "$w/tce/ref/$(dirname "$f")"
    cp "$f" "$w/tce/ref/$f"
    echo "$f|$(code_of "$f" "$w/tce/ref/$f")"
  done >"$w/refcode"
  # Each mutant's instructions (id|code, or id|listed), JOBS compiles at once.
  compile_list() {  # list slot-folder: id|code for each id|file|line|path
    while IFS='|' read -r id f line path; do
      mkdir -p "$2/$(dirname "$f")"
      cp "$path" "$2/$f"
      code=$(code_of "$f" "$2/$f")
      ref=$(grep "^$f|" "$w/refcode" | cut -d'|' -f2)
      # In a sample, a program argued equivalent is left ungraded: a grade of it
      # could only say killed or equivalent, never fail the run.
      if [ "$SAMPLE" -gt 0 ] && [ -n "$code" ] && [ "$code" != "$ref" ] && change_of "$f" "$line" "$path" &&
         listed "$f"; then
        echo "$id|listed"
        continue
      fi
      echo "$id|$code"
    done <"$1" >"$1.codes"
  }
  compile_parallel() {  # list: its id|code lines appended to codes.all, in order
    j=0
    while [ "$j" -lt "$JOBS" ]; do
      awk -v j="$j" -v n="$JOBS" 'NR % n == j' "$1" >"$1.$j"
      compile_list "$1.$j" "$w/tce/m$j" &
      j=$((j + 1))
    done
    wait
    cat "$1".*.codes | sort -t'|' -k1,1n >>"$w/codes.all"
    rm -f "$1".*
  }
  # A sample's mutants, in order, up to the one that makes SAMPLE distinct
  # programs (not the reference's, not listed), as one compile at a time
  # would stop; and how many distinct programs that is (on stderr).
  sample_cut() {
    awk -F'|' -v n="$SAMPLE" 'FILENAME == ARGV[1] { ref[$1] = $2; next }
      FILENAME == ARGV[2] { file[$1] = $2; next }
      found >= n { exit }
      { print; if ($2 != "" && $2 != "listed" && $2 != ref[file[$1]] && !seen[$2]++) found++ }
      END { print found + 0 >"/dev/stderr" }' "$w/refcode" "$w/order" "$w/codes.all"
  }
  : >"$w/codes.all"
  if [ "$SAMPLE" -gt 0 ]; then
    # Rounds of 2 x JOBS mutants until SAMPLE distinct programs are found: a
    # round's compiles past that one are dropped, so the sample is the same.
    from=1
    while [ "$from" -le "$total" ] && [ "$(sample_cut 2>&1 >/dev/null)" -lt "$SAMPLE" ]; do
      sed -n "${from},$((from + 2 * JOBS - 1))p" "$w/order" >"$w/round"
      compile_parallel "$w/round"
      from=$((from + 2 * JOBS))
    done
    sample_cut >"$w/round" 2>/dev/null
    mv "$w/round" "$w/codes.all"
  else
    compile_parallel "$w/order"
  fi
  # Each mutant's class, in order: the first of a program is graded, the others share its verdict.
  : >"$w/codes"
  while IFS='|' read -r id code; do
    f=$(awk -F'|' -v id="$id" '$1 == id { print $2; exit }' "$w/order")
    ref=$(grep "^$f|" "$w/refcode" | cut -d'|' -f2)
    if [ -z "$code" ]; then class=stillborn
    elif [ "$code" = listed ]; then class=listed
    elif [ "$code" = "$ref" ]; then class=same
    elif grep -q "|$code$" "$w/codes"; then class=dup
    else class=grade; echo "$id|$code" >>"$w/codes"; fi
    echo "$id|$class|$code"
  done <"$w/codes.all" >"$w/compiled"

  # The distinct programs to grade (id|file|path), queued with every lecture's.
  awk -F'|' '$2 == "grade" { print $1 }' "$w/compiled" | while read -r id; do
    grep "^$id|" "$w/order" | cut -d'|' -f1,2,4
  done >"$w/tograde"
  sed "s/^/$k|/" "$w/tograde" >>"$queue"
done

# ----------------------------------------------------------------------------
# every lecture's programs graded

# 3. Every lecture's distinct programs in one queue, JOBS at once: a slot held
#    by a mutant that hangs leaves the rest, of any lecture, to the others.
#    (Lecture by lecture, the other slot finished its half and waited: in make
#    test at 11b136d lecture 1 took 332 s so, 120 of them one mutant's loop.)
grade_queue "$queue" 1 "$JOBS"
[ "$(wc -l <"$queue.out")" -eq "$(wc -l <"$queue")" ] ||
  { echo "grade-mutants: $(wc -l <"$queue") programs queued, $(wc -l <"$queue.out") graded: a slot ended early" >&2
    exit 1; }

# 4. Stopped by a wall-clock limit, or a fair share of the processor, while
#    other grades ran: graded again, JOBS at once, with twice the time.
#    Killed only if it fails again. Twice is ample: right code graded beside
#    eight busy loops never stood still for a tenth of a limit
#    (docs/grading.md), far more load than the other regrades make, and a
#    mutant that hangs pays the factor in full (under make test's load two
#    hanging mutants of lecture 1 took 195 s to regrade at four times, one
#    after the other; three took 63 s at twice).
grep -E '^[^|]*\|[^|]*\|killed\|[^|]*\|[^|]*\|(timed out, past [0-9]+ s of wall-clock|timed out, [^|]*a fair share of|no answer in)' \
  "$queue.out" | cut -d'|' -f1,2 >"$work/timeouts"
if [ -s "$work/timeouts" ]; then
  awk -F'|' 'NR == FNR { again[$1 "|" $2] = 1; next } again[$1 "|" $2]' "$work/timeouts" "$queue" >"$work/regrade"
  grade_queue "$work/regrade" 2 "$JOBS"
  awk -F'|' 'NR == FNR { again[$1 "|" $2] = 1; next } !again[$1 "|" $2]' "$work/timeouts" "$queue.out" >"$work/kept"
  cat "$work/regrade.out" >>"$work/kept"
  mv "$work/kept" "$queue.out"
fi

# ----------------------------------------------------------------------------
# each lecture's verdicts

for k in $lectures; do
  w=$work/lc$k
  total=$(wc -l <"$w/order")  # this lecture's (step 1 left the last lecture's)
  awk -F'|' -v k="$k" '$1 == k' "$queue.out" | cut -d'|' -f2- >"$w/tograde.out"

  # 5. Each kill confirmed: the reference, graded through the same path, passes
  #    every check at every N that killed a mutant, or nothing here counts. (A
  #    kill is the first check that failed; those before it passed, which needs
  #    no confirming, and neither does a survivor.)
  #    One grade per check, at each of its N.
  awk -F'|' '$2 == "killed" { print $3, $4 }' "$w/tograde.out" | sort -u -k1,1 -k2,2n |
    awk '{ if ($1 == c) ns = ns " " $2; else { if (c != "") print c, ns; c = $1; ns = $2 } } END { if (c != "") print c, ns }' |
    while read -r check ns; do
      reference_passes "$k" "$check" "$ns" && continue
      echo "grade-mutants: the reference of lecture $k fails $check at N=$ns through this path, where mutants were" \
           "killed: nothing here counts" >&2
      cat "$work/ref/out" >&2
      exit 1
    done || exit 1

  # 6. Every mutant's class: a duplicate takes its program's verdict; a survivor
  #    listed in tests/grader/equivalent_mutants is equivalent, and so is a
  #    listed one a sample left ungraded.
  : >"$w/mutants"
  while IFS='|' read -r id class code; do
    IFS='|' read -r _id f line path <<EOF
$(grep "^$id|" "$w/order")
EOF
    change_of "$f" "$line" "$path"
    check="" n="" msg=""
    case $class in
      stillborn) verdict=stillborn ;;
      same) verdict=same-code ;;
      listed) verdict=equivalent msg="listed in tests/grader/equivalent_mutants; a sample does not grade it" ;;
      grade|dup)
        rep=$(awk -F'|' -v c="$code" '$2 == "grade" && $3 == c { print $1; exit }' "$w/compiled")
        IFS='|' read -r _id verdict check n msg <<EOF
$(grep "^$rep|" "$w/tograde.out")
EOF
        ;;
    esac
    if [ "$verdict" = survived ] && listed "$f"; then verdict=equivalent; fi
    printf '%s|%s|%s|%s|%s|%s|%s|%s|%s\n' "$id" "$verdict" "$f" "$line" "$check" "$n" "$(norm "$orig" | tr '|' '!')" \
      "$(norm "$mut" | tr '|' '!')" "$msg"
  done <"$w/compiled" >"$w/mutants"

  count() { awk -F'|' -v v="$1" '$2 == v { c++ } END { print c + 0 }' "$w/mutants"; }
  tried=$(wc -l <"$w/mutants") stillborn=$(count stillborn) same=$(count same-code)
  killed=$(count killed) equivalent=$(count equivalent) survived=$(count survived) errors=$(count error)
  distinct=$(wc -l <"$w/tograde")
  row=$(printf 'lc%-7s %7s %9s %9s %6s %6s %10s %8s' "$k" "$tried" "$stillborn" "$same" "$distinct" "$killed" \
        "$equivalent" "$survived")
  table="$table$row
"
  if [ "$errors" -gt 0 ]; then
    status=1
    echo "  $errors mutant(s) of lecture $k could not be graded (the grade gave no verdict); the first:"
    awk -F'|' '$2 == "error" { printf "    %s: %s ==> %s: %s\n", $3, $7, $8, $9; exit }' "$w/mutants"
  fi
  if [ "$survived" -gt 0 ]; then
    status=1
    echo "  survivors of lecture $k (no check fails; add a check, or argue the equivalence in tests/grader/equivalent_mutants):"
    awk -F'|' '$2 == "survived" { printf "    %s: %s ==> %s\n", $3, $7, $8 }' "$w/mutants"
  fi
  [ "$SAMPLE" -gt 0 ] || [ "$total" -eq "$tried" ] ||
    { echo "grade-mutants: lecture $k: $tried of $total mutants classified" >&2; status=1; }
  # A lecture with no program graded measured nothing (the mutation tool made
  # no mutant, or none reached a grade): that is not a pass.
  [ "$distinct" -gt 0 ] ||
    { echo "grade-mutants: lecture $k: no mutant graded ($total made, $tried classified): nothing was measured" >&2
      status=1; }
done

echo
echo "lecture  mutants stillborn same-code graded killed equivalent survived"
printf '%s' "$table"
[ "$SAMPLE" -gt 0 ] && echo "(a sample of $SAMPLE graded per lecture, seed $SEED; the equivalent ones are those the list names, not graded)"
exit $status
