#!/bin/sh
# make grade: builds the learner's exercise files (MINE, default mywork/) in
# place of the reference ones, everything else from the tree, then runs the
# lecture's graded checks, every check at each of its N, and prints one line per
# check and N, then the score. Exit status 0 only with full marks.
#
# The checks of a lecture that run at one N share one process (one mpirun):
# the test program runs them in order and writes each verdict to a file this
# script owns (ZC_RESULTS), so nothing the learner's code prints is counted. A
# check that fails ends that process, so that no later check runs in what it
# left behind; a check that crashes, or runs past its budget (the watchdog then
# has each rank say where it waits), gets the failing rank's own line; then the
# checks after it run in a fresh process.
#
# Settings (make passes them): LC (lectures; default: every lecture started
# under MINE), CHECK (one check's id), N (ranks, e.g. "3"), SOLUTION=1 (grade
# the reference instead), BUILD (the reference build: its lc0 makes the
# references the stages are graded against, its objects seed the learner's
# build), GRADE_DIR (where the learner's builds go, default BUILD/grade),
# ZC_TIME_SCALE (multiplies every check's budget), UNTIL_FAIL=1 (stop at the
# first check that fails: what the mutation run needs to call a mutant killed),
# FORMAT (gradescope: also write Gradescope's results.json; junit: a JUnit XML
# report, for CI) and RESULTS (where; default GRADE_DIR/results.json or .xml).
set -u
set -f  # the settings are data: no word of them is ever a file pattern
cd "$(dirname "$0")/../.." || exit 2
top=$(pwd)
. tools/shown.sh
MINE=${MINE:-mywork}
BUILD=${BUILD:-build}
GRADE_DIR=${GRADE_DIR:-$BUILD/grade}
SOLUTION=${SOLUTION:-0}
CHECK=${CHECK:-}
N=${N:-}
LC=${LC:-}
FORMAT=${FORMAT:-}
case $FORMAT in
  ''|text) ;;
  gradescope) RESULTS=${RESULTS:-$GRADE_DIR/results.json} ;;
  junit) RESULTS=${RESULTS:-$GRADE_DIR/results.xml} ;;
  *) printf '%s\n' "make grade: FORMAT=$(shown "$FORMAT"): one of gradescope, junit (or none: the terminal only)" >&2; exit 2 ;;
esac
case $GRADE_DIR in /*) ;; *) GRADE_DIR=$top/$GRADE_DIR ;; esac
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
# RESULTS names a file of its format to write, or one a grade wrote before:
# never a folder, a link, a device or someone's other file, which it would
# replace. Its folder must exist: it is checked before the grade, not after.
if [ -n "$FORMAT" ] && [ "$FORMAT" != text ]; then
  shown=$(shown "$RESULTS")
  dir=$(dirname -- "$RESULTS")
  refuse() { printf '%s\n' "make grade: RESULTS=$shown: $*" >&2; exit 2; }
  [ -n "$RESULTS" ] || refuse "empty: give a file's name"
  if [ -L "$RESULTS" ]; then refuse "a link; give the name of a plain file"
  elif [ -d "$RESULTS" ]; then refuse "a folder; give a file's name (e.g. RESULTS=$shown/results.$([ "$FORMAT" = junit ] && echo xml || echo json))"
  elif [ -e "$RESULTS" ] && [ ! -f "$RESULTS" ]; then refuse "not a plain file (a device or a pipe): give a file's name"
  elif [ -f "$RESULTS" ]; then
    case $FORMAT in
      gradescope) head -c 200 "$RESULTS" | LC_ALL=C grep -q '^  "execution_time": ' ;;
      junit) head -c 200 "$RESULTS" | LC_ALL=C grep -q '^<testsuites name="make grade" ' ;;
    esac || refuse "exists and is not a $FORMAT results file of make grade; remove it or give another name"
  fi
  [ -d "$dir" ] || refuse "no folder $(shown "$dir") to write it in"
  [ -w "$dir" ] || refuse "its folder cannot be written"
fi
# The folders the learner's build goes to are handed to make: plain names only.
for v in "GRADE_DIR=$GRADE_DIR" "BUILD=$BUILD"; do
  case ${v#*=} in *[!A-Za-z0-9._/+-]*)
    printf '%s\n' "make grade: ${v%%=*}=$(shown "${v#*=}"): a folder name of letters, digits and . _ / + - only" >&2; exit 2 ;;
  esac
done
words() { printf '%s' "$*"; }  # its words, one space apart (a list given with newlines or tabs)
for n in $N; do
  case $n in ''|*[!0-9]*|0) printf '%s\n' "make grade: N=$(shown "$N"): numbers of ranks, e.g. N=3 or N=\"2 3\"" >&2; exit 2 ;; esac
  [ ${#n} -le 4 ] || { echo "make grade: N=$n: no check runs at so many ranks" >&2; exit 2; }
done
N=$(words $N) LC=$(words $LC)
# CHECK is one check's id, one word (grep would take a newline in it for two).
case $CHECK in *[!A-Za-z0-9._]*)
  printf '%s\n' "make grade: CHECK=$(shown "$CHECK"): one check's id, e.g. CHECK=lc2.1a" >&2; exit 2 ;;
esac
if [ "$SOLUTION" != 1 ] && [ ! -d "$MINE" ]; then
  printf '%s\n' "make grade: MINE=$(shown "$MINE"): no such folder (make exercise LC=K makes your files under it)" >&2
  exit 2
fi

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
  case " $all " in *" $k "*) ;; *) printf '%s\n' "make grade: LC=$(shown "$k"): no such lecture (one of: $all)" >&2; exit 2 ;; esac
  [ "$SOLUTION" = 1 ] && continue
  started=""
  for f in $(tools/lectures.sh files "$k"); do [ -e "$MINE/$f" ] && started=1; done
  if [ -z "$started" ]; then  # never the reference graded as yours
    echo "make grade: nothing of lecture $k under $MINE/ (make exercise LC=$k makes it; make solution LC=$k grades" \
         "the reference)" >&2
    exit 2
  fi
done

# Every graded check, from the test programs that hold them (--list):
# program|id|points|ranks|budget|title. Lecture K's checks are named lcK.*.
mkdir -p "$GRADE_DIR/scratch"
export ZC_SCRATCH="$GRADE_DIR/scratch"  # the checks' own files: this grade's alone
checks=$GRADE_DIR/checks verdicts=$GRADE_DIR/verdicts
# (A program that cannot list says why in one line: ZC_TIME_SCALE out of range.)
for p in test_lc0 test_lc1 test_lc2 test_lc3 test_lc4 test_lc5 test_comm; do
  "$BUILD/test/$p" --list </dev/null 2>"$GRADE_DIR/list.err" >"$GRADE_DIR/list" ||
    { echo "make grade: $(head -n 1 "$GRADE_DIR/list.err")" >&2; exit 2; }
  sed "s/^/$p|/" "$GRADE_DIR/list"
done >"$checks"
: >"$verdicts"
# CHECK and N name checks that exist, at numbers of ranks they run at.
graded=$(for k in $LC; do grep "^[^|]*|lc$k\." "$checks"; done)
if [ -n "$CHECK" ] && ! printf '%s\n' "$graded" | cut -d'|' -f2 | grep -qxF -- "$CHECK"; then
  printf '%s\n' "make grade: CHECK=$(shown "$CHECK"): no such check in lecture $(echo $LC) (its checks: $(printf '%s\n' "$graded" |
       cut -d'|' -f2 | tr '\n' ' ' | sed 's/ $//'))" >&2
  exit 2
fi
runs_at=$(printf '%s\n' "$graded" | awk -F'|' -v c="$CHECK" 'c == "" || $2 == c { print $4 }' | tr ' ' '\n' | sort -un |
          tr '\n' ' ' | sed 's/ $//')
for n in $N; do
  case " $runs_at " in *" $n "*) ;; *)
    echo "make grade: N=$n: no check of $([ -n "$CHECK" ] && echo "$CHECK" || echo "lecture $(echo $LC)") runs at $n" \
         "ranks (they run at $runs_at)" >&2
    exit 2 ;;
  esac
done

# The references the stages are graded against, from the tree's lc0, and the
# trails of the tree's own stages (their whole state after every step), which
# the learner's runs are held to. The test programs run in grading mode
# themselves (strict collectives, poisoned frees).
export ZC_REF="$BUILD/test/ref" CK_FORK=no
tests/references.sh "$BUILD" || { echo "make grade: no references to grade against" >&2; exit 1; }
export ZC_TRAIL=compare

programs_of() { grep "^[^|]*|lc$1\." "$checks" | cut -d'|' -f1 | sort -u | tr '\n' ' '; }

# ----------------------------------------------------------------------------
# running checks

# A grade stopped from outside (Ctrl-C, a kill, the terminal closed) stops the
# check it runs, and its ranks, before it ends: none is left writing into the
# folder the next grade uses. timeout passes the signal on to what it runs
# (launch, then mpirun, its ranks); what outlives a few seconds is killed.
running=""
stopped() {
  trap - INT TERM HUP
  if [ -n "$running" ]; then
    kill -TERM "$running" 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$running" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$running" 2>/dev/null
  fi
  echo "make grade: stopped ($1) before it ended: no score" >&2
  exit "$2"
}
trap 'stopped interrupted 130' INT
trap 'stopped terminated 143' TERM
trap 'stopped "its terminal closed" 129' HUP

# The one line that says why a run ended early: the watchdog's report of each
# rank, else the first error line of the first rank that failed, else how it ended.
# The log is read as text whatever it holds (grep -a): a byte that is not
# UTF-8 would make grep call it binary, in a UTF-8 locale, and drop the line.
why_it_ended() {  # log rc secs id program
  log=$1 rc=$2 secs=$3
  if grep -aq '^watchdog: rank ' "$log"; then
    # (the reason of a rank that stopped, not of one that stopped with it; a
    # deadlock the watchdog proved did not time out)
    reason=$(sed -n 's/^watchdog: rank [0-9]*: [^:]*: \([^:]*\): .*$/\1/p' "$log" |
             grep -av '^stopped with another rank' | head -n 1)
    case $reason in deadlock,*) printf '%s: ' "$reason" ;; *) printf 'timed out, %s: ' "$reason" ;; esac
    sed -n 's/^watchdog: rank \([0-9]*\): [^:]*: [^:]*: \(.*\)$/\1|\2/p' "$log" | sort -t'|' -k1,1n | awk -F'|' '
      # The message each rank is in, if any: who it sends to and receives from.
      function peer(d, verb,   w) {
        if (!match(d, verb == "to" ? "sending [0-9]+ B to rank [0-9]+" : "receiving [0-9]+ B from rank [0-9]+")) return ""
        split(substr(d, RSTART, RLENGTH), w, " ")
        return w[6]
      }
      { if (count[$2]++) ranks[$2] = ranks[$2] ", " $1; else { order[n++] = $2; ranks[$2] = $1 }
        rank[nr++] = $1; to[$1] = peer($2, "to"); from[$1] = peer($2, "from") }
      END {
        for (i = 0; i < n; i++) {
          d = order[i]
          if (count[d] > 1) {
            sub(/^waits/, "wait", d); sub(/^is not/, "are not", d); sub(/it computes, or loops/, "they compute, or loop", d)
            printf "%sranks %s %s", (i ? "; " : ""), ranks[order[i]], d
          } else printf "%srank %s %s", (i ? "; " : ""), ranks[order[i]], d
        }
        # Messages that cannot meet: a receive whose sender sends elsewhere,
        # sends that nobody receives, receives that nobody sends.
        senders = receivers = 0
        for (i = 0; i < nr; i++) { senders += to[rank[i]] != ""; receivers += from[rank[i]] != "" }
        why = ""
        if (senders == nr && receivers == 0)
          why = "Every rank is sending and none receiving: blocking sends before the receives deadlock once a message " \
                "is too big for MPI to buffer; send and receive at once (send_recv)"
        if (receivers == nr && senders == 0)
          why = "Every rank is receiving and none sending: each waits for a message nobody will send; send and " \
                "receive at once (send_recv)"
        for (i = 0; i < nr && why == ""; i++) {
          r = rank[i]; f = from[r]
          if (f == "" || to[f] == r) continue
          if (from[f] == r && to[f] == "")
            why = "Rank " r " waits for a message from rank " f ", which waits for one from rank " r ": each " \
                  "receives before it sends"
          else
            why = "Rank " r " waits for a message from rank " f ", which " \
                  (to[f] != "" ? "sends to rank " to[f] : from[f] != "" ? "waits to receive from rank " from[f] : \
                   "sends nothing") ": the two disagree on who is whose neighbour"
        }
        print (why == "" ? "" : ". " why)
      }'
    return
  fi
  line=$(grep -a -m 1 -E "^rank [0-9]+: |^$5: " "$log")
  if [ -n "$line" ]; then echo "it stopped: $line"; return; fi
  # A segmentation fault says little by itself: say what usually causes it.
  segv=""
  if grep -aq 'signal 11 (Segmentation fault)' "$log" || [ "$rc" -eq 139 ]; then
    segv=": a pointer or an index past its buffer (a loop one step too far, over elements or over layers?)"
  fi
  line=$(grep -a -m 1 -E '^launch: rank [0-9]+ ' "$log" | sed 's/^launch: //')
  if [ -n "$line" ]; then echo "it crashed: $line$segv"
  elif [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then
    echo "it crashed: the program died of signal $((rc - 128)) ($(kill -l "$((rc - 128))" 2>/dev/null))$segv"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "no answer in $secs s, and no rank said why (load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores)"
  elif [ "$rc" -eq 0 ]; then
    echo "the program exited (status 0) in the middle of this check: an exit() in your code, or a return from main?"
  else echo "the program ended (status $rc) in the middle of this check and no rank said why"; fi
}

# Runs program $1's checks $3 (ids, in order) at N = $2 from $bin, appending
# id|n|ok|secs|message lines to the verdicts.
run_checks() {
  p=$1 n=$2 pending=$3
  res=$GRADE_DIR/results log=$GRADE_DIR/last.log
  while [ -n "$pending" ]; do
    rm -f "$res"
    budget=$(awk -F'|' -v ids=" $pending " 'index(ids, " " $2 " ") && !seen[$2]++ { s += $5 } END { print int(s) + 30 }' \
             "$checks")
    launch="tools/launch $n"
    [ "$n" = 1 ] && launch=""  # one process needs no mpirun (MPI starts as a singleton)
    t0=$(date +%s.%N)
    # In the background, waited for, so that a Ctrl-C or a kill of the grade
    # ends it too (stopped() below): timeout runs it in a process group of its
    # own, which the terminal's signal never reaches.
    # shellcheck disable=SC2086
    ZC_CHECKS="$pending" ZC_RESULTS="$res" timeout -k 5 "$budget" $launch "$bin/$p" >"$log" 2>&1 </dev/null &
    running=$!
    wait "$running"
    rc=$?
    running=""
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    [ -f "$res" ] || : >"$res"
    awk -v n="$n" '$1 == "ok" { print $2 "|" n "|ok|" $3 "|" }
                   $1 == "fail" { m = $0; sub(/^fail [^ ]* [^ ]* /, "", m); print $2 "|" n "|fail|" $3 "|" m }' \
      "$res" >>"$verdicts"
    judged=$(awk '$1 == "ok" || $1 == "fail" { print $2 }' "$res" | tr '\n' ' ')
    open=$(awk '$1 == "start" { s = $2 } $1 == "ok" || $1 == "fail" { s = "" } END { print s }' "$res")
    rest=""
    for id in $pending; do
      case " $judged $open " in *" $id "*) ;; *) rest="$rest $id" ;; esac
    done
    if grep -q '^end$' "$res"; then
      for id in $rest; do echo "$id|$n|fail|0|the test program has no check $id" >>"$verdicts"; done
      rest=""
    elif [ -n "$open" ]; then
      echo "$open|$n|fail|$secs|$(why_it_ended "$log" "$rc" "$secs" "$open" "$p")" >>"$verdicts"
    elif [ -z "$judged" ]; then  # it died before its first check: every check here says so
      why=$(why_it_ended "$log" "$rc" "$secs" "" "$p")
      for id in $rest; do echo "$id|$n|fail|$secs|before any check ran, $why" >>"$verdicts"; done
      rest=""
    fi
    pending=$rest
    # The mutation run needs the first failure alone: not the checks after it.
    [ "${UNTIL_FAIL:-0}" = 1 ] && grep -q '^[^|]*|[^|]*|fail|' "$verdicts" && break
  done
  return 0
}

# ----------------------------------------------------------------------------
# grading

got=0 total=0 started=$(date +%s)
rm -f "$GRADE_DIR/report"  # a run stopped midway leaves its rows
for k in $LC; do
  if [ "$SOLUTION" = 1 ]; then
    bin=$BUILD/test
    echo "== lecture $k: the reference"
  else
    echo "== lecture $k: your files ($(for f in $(tools/lectures.sh files "$k"); do
      if [ -e "$MINE/$f" ]; then printf '%s ' "$MINE/$f"; else printf '%s (not started: the reference) ' "$f"; fi
    done))"
    targets=""
    for p in $(programs_of "$k"); do targets="$targets test/$p"; done
    # shellcheck disable=SC2086
    if out=$(tests/grader/learner_build.sh "$k" "$MINE" "$BUILD" "$GRADE_DIR" $targets); then bin=$out/test
    else bin=""; fi  # it said why
  fi
  # The checks to run: lecture k's (or CHECK alone), at each of their N (or N's).
  grep "^[^|]*|lc$k\." "$checks" | while IFS='|' read -r p id points ns budget title; do
    [ -z "$CHECK" ] || [ "$CHECK" = "$id" ] || continue
    for n in $ns; do
      [ -z "$N" ] || case " $N " in *" $n "*) ;; *) continue ;; esac
      echo "$p|$n|$id"
    done
  done >"$GRADE_DIR/todo"
  if [ -n "$bin" ]; then
    for pn in $(cut -d'|' -f1,2 "$GRADE_DIR/todo" | sort -u -t'|' -k1,1 -k2,2n); do
      p=${pn%|*} n=${pn#*|}
      ids=$(awk -F'|' -v p="$p" -v n="$n" '$1 == p && $2 == n { print $3 }' "$GRADE_DIR/todo" | tr '\n' ' ')
      printf '  running %s at N=%s: %s\n' "$p" "$n" "$ids" >&2
      run_checks "$p" "$n" "$ids"
      [ "${UNTIL_FAIL:-0}" = 1 ] && grep -q '^[^|]*|[^|]*|fail|' "$verdicts" && break
    done
  fi
  # One line per check and N, in the lecture's order, and the report's rows
  # (tests/grader/lines.awk says how).
  awk -F'|' -v k="$k" -v built="$([ -n "$bin" ] && echo 1 || echo 0)" -v solution="$SOLUTION" \
    -v report="$GRADE_DIR/report" -f tests/grader/lines.awk "$checks" "$verdicts" "$GRADE_DIR/todo"
done
if [ -f "$GRADE_DIR/report" ]; then
  read -r total got <<EOF
$(awk -F'\t' '{ t += $1; g += $2 } END { print t, g }' "$GRADE_DIR/report")
EOF
  case $FORMAT in
    gradescope|junit)
      # Written beside it under a name of its own, then renamed: a write that
      # fails (a full disk) leaves the earlier file as it was, and nothing else.
      # Byte by byte (LC_ALL=C): what is not UTF-8 becomes U+FFFD there.
      tmp=$(mktemp "$(dirname -- "$RESULTS")/.results.XXXXXX" 2>/dev/null) &&
        chmod "$(umask -S | tr -d x)" "$tmp" &&
        LC_ALL=C awk -F'\t' -v format="$FORMAT" -v seconds="$(($(date +%s) - started))" -f tests/grader/results.awk \
          "$GRADE_DIR/report" >"$tmp" 2>"$GRADE_DIR/results.err" && mv -f -- "$tmp" "$RESULTS" ||
        results_failed=$(tail -n 1 "$GRADE_DIR/results.err" 2>/dev/null)
      if [ -n "${results_failed+set}" ]; then
        [ -n "$tmp" ] && rm -f -- "$tmp"
        printf '%s\n' "make grade: RESULTS=$shown: not written (${results_failed:-no temporary file beside it})" >&2
      else echo "$FORMAT results: $RESULTS"; fi ;;
  esac
fi
echo "Score: $got/$total"
[ -z "${results_failed+set}" ] || exit 1
[ "$total" -gt 0 ] && [ "$got" -eq "$total" ]
