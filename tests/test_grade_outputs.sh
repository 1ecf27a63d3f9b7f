#!/bin/bash
# What make grade writes and leaves behind, held to what it promises: the
# results file for a course's tools (FORMAT, RESULTS) is written only where it
# names a new file or one a grade wrote, never over a folder, a link, a device
# or someone's file; a write that fails says so, keeps the earlier file and
# leaves no temporary; any bytes a learner's program prints give a valid file
# and a verdict that keeps the rank's reason; a grade stopped from outside
# stops its check and the check's ranks with it.
# usage: tests/test_grade_outputs.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. tests/expect.sh
export BUILD
unset MAKELEVEL MAKEFLAGS MFLAGS

# A learner's lecture 0, started (the reference copied), and lecture 0 with
# its zero_grad replaced by LINE.
mine=$tmp/mine
mkdir -p "$mine/lc0_adam"
cp lc0_adam/adam.c "$mine/lc0_adam/"
lecture0_with() {
  rm -rf "$tmp/wrong" && mkdir -p "$tmp/wrong/lc0_adam"
  sed "s|^    fill(m->grads, 0.0f, m->numel);|    $1|" lc0_adam/adam.c >"$tmp/wrong/lc0_adam/adam.c"
  ! cmp -s lc0_adam/adam.c "$tmp/wrong/lc0_adam/adam.c"
}
# grade [VAR=VALUE...]: make grade of lecture 0's check lc0.2a from $mine, status in $rc.
grade() {
  env MINE="$mine" LC=0 CHECK=lc0.2a GRADE_DIR="$tmp/grade" "$@" tests/grader/grade.sh >"$tmp/out" 2>"$tmp/err"
  rc=$?
}
# refused FRAGMENT VAR=VALUE...: the grade exits 2 with one line holding FRAGMENT, and grades nothing.
refused() {
  says=$1; shift
  grade "$@"
  if [ $rc = 2 ] && [ "$(grep -c . "$tmp/err")" = 1 ] && grep -qF -- "$says" "$tmp/err" && ! grep -q '^Score' "$tmp/out"
  then ok=$((ok + 1))
  else bad=$((bad + 1)); echo "FAIL: $* -> exit $rc, want 2 and '$says':"; sed 's/^/    /' "$tmp/err" | head -5; fi
}

# ------------------------------------------------------------------------------
# RESULTS names a file to write: refused before the grade where it would
# destroy something, or could not be written.

echo "int main(void) { return 0; }" >"$tmp/victim.c"
cp "$tmp/victim.c" "$tmp/victim.keep"
for f in gradescope junit; do
  refused "RESULTS=$tmp/victim.c: exists and is not a $f results file of make grade" FORMAT=$f RESULTS="$tmp/victim.c"
  check "  the learner's file is as it was" cmp -s "$tmp/victim.c" "$tmp/victim.keep"
done
ln -s "$tmp/victim.c" "$tmp/link"
refused "RESULTS=$tmp/link: a link" FORMAT=gradescope RESULTS="$tmp/link"
ln -s /dev/null "$tmp/stdout"  # (as /dev/stdout is: a link to somewhere else)
refused "RESULTS=$tmp/stdout: a link" FORMAT=junit RESULTS="$tmp/stdout"
check "  nor through a link" cmp -s "$tmp/victim.c" "$tmp/victim.keep"
mkfifo "$tmp/fifo"
refused "RESULTS=$tmp/fifo: not a plain file" FORMAT=gradescope RESULTS="$tmp/fifo"
mkdir "$tmp/folder"
refused "RESULTS=$tmp/folder: a folder; give a file's name (e.g. RESULTS=$tmp/folder/results.json)" \
  FORMAT=gradescope RESULTS="$tmp/folder"
check "  and nothing is written inside it" test -z "$(ls -A "$tmp/folder")"
refused "RESULTS=$tmp/none/r.json: no folder $tmp/none to write it in" FORMAT=gradescope RESULTS="$tmp/none/r.json"
refused "RESULTS=$tmp/a\\nb.json/x: no folder $tmp/a\\nb.json to write it in" FORMAT=gradescope RESULTS="$tmp/a
b.json/x"
check "  and nothing is made" test ! -e "$tmp/none"

# A new file, then the same name again: a file a grade wrote is replaced, and
# Python's parsers read both as their formats say.
for f in gradescope junit; do
  grade FORMAT=$f RESULTS="$tmp/results.$f"
  check "FORMAT=$f: a new file written (exit $rc)" test "$rc" = 0 -a -s "$tmp/results.$f"
  grade FORMAT=$f RESULTS="$tmp/results.$f"
  check "  and replaced by the next grade (exit $rc)" test "$rc" = 0
  check "  a valid $f file ($(tests/grader/check_results.py $f "$tmp/results.$f" "$tmp/out" 2>&1))" \
    tests/grader/check_results.py $f "$tmp/results.$f" "$tmp/out"
  check "  no temporary beside it" test -z "$(ls -A "$tmp" | grep '^\.results')"
done

# A write that fails (a full file system, here a small one of our own) says
# so, exits non-zero, keeps the earlier file and leaves no temporary.
small_fs=$tmp/full
mkdir -p "$small_fs"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k tmpfs "$small_fs" 2>/dev/null; then
  cp "$tmp/results.gradescope" "$small_fs/results.json"
  cp "$small_fs/results.json" "$tmp/results.keep"
  dd if=/dev/zero of="$small_fs/filler" bs=4k 2>/dev/null
  grade FORMAT=gradescope RESULTS="$small_fs/results.json"
  check "a full disk: the grade fails (exit $rc, want 1)" test "$rc" = 1
  check "  saying the file was not written ($(tail -n 1 "$tmp/err"))" \
    grep -q "RESULTS=$small_fs/results.json: not written (.*No space left on device" "$tmp/err"
  check "  the earlier file as it was" cmp -s "$small_fs/results.json" "$tmp/results.keep"
  check "  no temporary left" test -z "$(ls -A "$small_fs" | grep '^\.results')"
  umount "$small_fs"
else
  echo "(the full-disk checks need root and tmpfs: not run here)"
fi

# ------------------------------------------------------------------------------
# A learner's program may print any bytes: in a UTF-8 locale the verdict still
# gives the rank's own line, and the results files stay valid UTF-8.

lecture0_with 'fprintf(stderr, "rank 0: zero_grad: a byte \\377 that is not UTF-8\\n"); exit(3);'
for f in gradescope junit; do
  LC_ALL=C.UTF-8 MINE=$tmp/wrong LC=0 CHECK=lc0.2a GRADE_DIR="$tmp/grade" FORMAT=$f RESULTS="$tmp/bytes.$f" \
    tests/grader/grade.sh >"$tmp/out" 2>&1
  check "a non-UTF-8 byte in the log: the verdict keeps the rank's line ($f)" \
    grep -aq '^    it stopped: rank 0: zero_grad: a byte' "$tmp/out"
  check "  and the $f file is valid ($(tests/grader/check_results.py $f "$tmp/bytes.$f" "$tmp/out" 2>&1 | tail -n 1))" \
    tests/grader/check_results.py $f "$tmp/bytes.$f" "$tmp/out"
done

# results.awk alone, on a report whose lines hold every kind of ill-formed
# UTF-8 (a stray continuation byte, a lead byte cut short, an overlong form, a
# surrogate, a byte past U+10FFFF) beside well-formed characters: each ill-formed
# byte becomes U+FFFD, the rest is kept.
printf '5\t0\t0.1\t0\tlc0.2a\tzero \316\250\t1\tit stopped: \377 \200 \303 \300\257 \355\240\200 \365\200\200\200 \316\250\\nend\n' \
  >"$tmp/report"
for f in gradescope junit; do
  LC_ALL=C awk -F'\t' -v format=$f -v seconds=1 -f tests/grader/results.awk "$tmp/report" >"$tmp/r.$f"
done
check "results.awk: ill-formed UTF-8 replaced, the rest kept" python3 -c '
import json, sys, xml.etree.ElementTree as ET
want = "it stopped: \ufffd \ufffd \ufffd \ufffd\ufffd \ufffd\ufffd\ufffd \ufffd\ufffd\ufffd\ufffd \u03a8\nend"
got = json.load(open(sys.argv[1], encoding="utf-8"))["tests"][0]["output"]
assert got == want, repr(got)
got = ET.parse(sys.argv[2]).getroot().find("testsuite/testcase/failure").text
assert got == want, repr(got)' "$tmp/r.gradescope" "$tmp/r.junit"

# And on a report of two checks, one passed and one not, whose title and
# output hold what JSON and XML must escape: each reads back as it was, the
# score is the points got, one failure is counted; the checker takes these
# files against the terminal's lines, and refuses each made wrong in one place.
{
  printf '10\t10\t0.5\t2\tlc2.1a\t3\tcounts "bytes" & <more>\t\n'
  printf '5\t0\t0.1\t2\tlc2.2a\t3\tthe other\tit said "no" \\\\ & <stopped> %sx%s\\nend\n' "'" "'"
} >"$tmp/report2"
for f in gradescope junit; do
  LC_ALL=C awk -F'\t' -v format=$f -v seconds=2 -f tests/grader/results.awk "$tmp/report2" >"$tmp/r2.$f"
done
cat >"$tmp/terminal2" <<'END'
lc2.1a counts "bytes" & <more> (N=3) .......................... OK 10/10 (0.5s)
lc2.2a the other (N=3) ........................................ FAIL 0/5 (0.1s)
Score: 10/15
END
check "results.awk: what JSON and XML escape reads back as it was; the score and failures counted" python3 -c '
import json, sys, xml.etree.ElementTree as ET
out = "it said \"no\" \\ & <stopped> \x27x\x27\nend"
name = "lc2.1a counts \"bytes\" & <more> (N=3)"
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert d["score"] == 10, d["score"]
assert [t["status"] for t in d["tests"]] == ["passed", "failed"], d["tests"]
assert d["tests"][0]["name"] == name and d["tests"][1]["output"] == out, d["tests"]
r = ET.parse(sys.argv[2]).getroot()
assert r.get("failures") == "1" and r.find("testsuite").get("failures") == "1", r.attrib
cases = r.findall("testsuite/testcase")
assert cases[0].get("name") == name and cases[0].find("failure") is None, cases[0].attrib
f = cases[1].find("failure")
assert f.text == out and f.get("message") == out.split("\n")[0], (f.text, f.attrib)
' "$tmp/r2.gradescope" "$tmp/r2.junit"
for f in gradescope junit; do
  check "the results checker takes the right $f file" tests/grader/check_results.py $f "$tmp/r2.$f" "$tmp/terminal2"
done
# wrong FORMAT FILE EDIT WHAT: the checker refuses the file with the edit (sed).
wrong() {
  sed "$3" "$2" >"$tmp/wrong.$1"
  if cmp -s "$2" "$tmp/wrong.$1"; then bad=$((bad + 1)); echo "FAIL: the edit '$3' does not apply to $2"; return; fi
  check "the results checker refuses a $1 file $4" \
    sh -c "! tests/grader/check_results.py $1 '$tmp/wrong.$1' '$tmp/terminal2' >/dev/null"
}
wrong gradescope "$tmp/r2.gradescope" 's/^  "score": 10,$/  "score": 11,/' "with another total score"
wrong gradescope "$tmp/r2.gradescope" 's/"name": "lc2.2a the other/"name": "lc2.2a another/' "with a check renamed"
wrong gradescope "$tmp/r2.gradescope" 's/"status": "failed"/"status": "passed"/' "with a failed check passed"
wrong gradescope "$tmp/r2.gradescope" 's/"max_score": 5,/"max_score": 6,/' "with other points"
wrong junit "$tmp/r2.junit" 's/<testsuites name="make grade" tests="2" failures="1"/<testsuites name="make grade" tests="2" failures="0"/' \
  "with the failures miscounted"
wrong junit "$tmp/r2.junit" 's/name="lc2.2a the other (N=3)"/name="lc2.2a the others (N=3)"/' "with a check renamed"
wrong junit "$tmp/r2.junit" 's/ tests="2" failures="1" errors="0"/ tests="3" failures="1" errors="0"/' \
  "with a suite's tests miscounted"

# ------------------------------------------------------------------------------
# Stopped from outside: the check it runs and the check's ranks end with the
# grade, within seconds, not at their budget minutes later. (A terminal's
# Ctrl-C reaches the foreground group; a background job here would start with
# SIGINT ignored, so env gives it back its default.)

# stop_midway N SIGNAL: a grade of lecture 0 (N=1) or 2 (N=2) whose
# check spins, stopped by SIGNAL to its process group once the check runs.
stop_midway() {
  n=$1 sig=$2 g=$tmp/grade-stop-$1-$2
  if [ "$n" = 1 ]; then lecture0_with 'for (volatile int spin = 1; spin;) {}'; k=0 c=lc0.2a
  else
    rm -rf "$tmp/wrong" && mkdir -p "$tmp/wrong/lc2_zero1"
    sed '/^size_t own_numel/,/^}/s/^    size_t first = (size_t)rt.rank \* L->shard;$/    for (volatile int spin = 1; spin;) {}\n&/' \
      lc2_zero1/zero1.c >"$tmp/wrong/lc2_zero1/zero1.c"
    k=2 c=lc2.1a
  fi
  (ZC_TIME_SCALE=20 MINE=$tmp/wrong LC=$k CHECK=$c N=$n GRADE_DIR=$g \
     setsid env --default-signal=INT tests/grader/grade.sh >"$tmp/stop.out" 2>&1 & echo $! >"$tmp/stop.pid")
  pid=$(cat "$tmp/stop.pid")
  for _ in $(seq 600); do pgrep -f "$g/build/test/test_lc$k" >/dev/null && break; sleep 0.1; done
  sleep 1
  kill "-$sig" -- "-$pid"
  for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  left=$(pgrep -f "$g/build/test/test_lc$k" | tr '\n' ' ')
  check "N=$n, SIG$sig: the grade ends, saying so ($(tail -n 1 "$tmp/stop.out"))" \
    grep -q "^make grade: stopped (.*) before it ended: no score" "$tmp/stop.out"
  check "  and nothing of its check is left running (${left:-none})" test -z "$left"
  [ -z "$left" ] || kill -KILL $left 2>/dev/null
  wait 2>/dev/null
}
stop_midway 1 INT
stop_midway 2 INT
stop_midway 2 TERM
finish "make grade's outputs"
