#!/bin/bash
# Hostile input, round 3 (issue 25): jobs whose ranks do not all start or do not
# run the same program, runs stopped from outside, limits the launcher cannot
# work under, checkpoints whose files are not what they claim, outputs that
# would destroy a checkpoint, and the debris of a save that never finished.
# Each case ends in bounded time with one line and its exit status; every run is
# under a timeout, so a hang fails the suite instead of stopping it.
# usage: tests/test_hostile.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. tests/expect.sh
S="--hidden 8 --layers 1 --batch 12 --steps 4 --sample 0 --log-every 0"

# ------------------------------------------------------------------------------
# Ranks that never join, or join as another program.

# A rank that exits before MPI_Init leaves the others waiting there: bounded by
# the start-up alarm (3 s here, 60 s by default).
for prog in "$lc1" "$lc5"; do
  ZC_START_TIMEOUT_S=3 expect 3 1 "not every rank of the job started within 3 s" \
    sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exit 0; fi; exec "$0" "$@"' "$prog" $S
done
# A rank that exits non-zero before starting: the launcher names it.
expect 2 3 "without a word; mpirun stopped every rank" \
  sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exit 3; fi; exec "$0" "$@"' "$lc2" $S
# mpirun itself crashing as it finishes (seen now and then in PMIx_Finalize,
# after a correct refusal): a stand-in mpirun prints a rank's refusal, mpirun's
# summary of it, and Open MPI's crash report under its own process id, then dies
# of SIGSEGV. The launcher gives the rank's line and status; with no rank
# failed, one line that mpirun crashed. A rank's own crash report (another
# process id) is not taken for mpirun's.
mkdir -p "$tmp/fake"
cat >"$tmp/fake/mpirun" <<'FAKE'
#!/bin/sh
if [ "${FAKE_RANK_STATUS:-0}" != 0 ]; then
  echo "prog: a refusal" >&2
  printf -- '%s\n' -------------------- \
    "mpirun detected that one or more processes exited with non-zero status, thus causing" \
    "  Process name: [[123,1],1]" "  Exit code:    $FAKE_RANK_STATUS" -------------------- >&2
fi
[ "${FAKE_RANK_CRASH:-0}" = 1 ] && printf '[vm:%05d] Signal: Segmentation fault (11)\n' 0 >&2
for l in "*** Process received signal ***" "Signal: Segmentation fault (11)" \
         "[ 1] /lib/libpmix.so.2(PMIx_Finalize+0x1b)[0x7f]" "*** End of error message ***"; do
  printf '[vm:%05d] %s\n' $$ "$l" >&2
done
kill -SEGV $$
FAKE
chmod +x "$tmp/fake/mpirun"
PATH=$tmp/fake:$PATH FAKE_RANK_STATUS=2 expect 2 2 "prog: a refusal" true
PATH=$tmp/fake:$PATH expect 2 139 "launch: mpirun itself crashed (Segmentation fault) after no rank failed" true
PATH=$tmp/fake:$PATH FAKE_RANK_STATUS=3 FAKE_RANK_CRASH=1 timeout 60 tools/launch 2 true 2>"$tmp/err"
check "a rank's own crash report passes, mpirun's does not" \
  test "$(cat "$tmp/err")" = "$(printf 'prog: a refusal\n[vm:00000] Signal: Segmentation fault (11)')"
# Open MPI's TCP transport complains on a rank whose peer died mid-send; after
# a death the launcher names, that is noise (test_nodes' elastic run saw it
# once in a loaded make test); with no death named it is the only clue, and
# is shown.
mkdir -p "$tmp/fake_tcp"
cat >"$tmp/fake_tcp/mpirun" <<'FAKE'
#!/bin/sh
echo '[node1][[13510,1],1][../../../../../../opal/mca/btl/tcp/btl_tcp_frag.c:135:mca_btl_tcp_frag_send] mca_btl_tcp_frag_send: writev failed: Connection reset by peer (104)' >&2
echo '[node1][[13510,1],1][../../../../../../opal/mca/btl/tcp/btl_tcp_endpoint.c:1065:mca_btl_tcp_endpoint_send_handler] invalid connection state (2)' >&2
if [ "${FAKE_DEATH:-0}" = 1 ]; then
  printf -- '%s\n' -------------------- \
    "mpirun noticed that process rank 2 with PID 0 on node node2 exited on signal 9 (Killed)." -------------------- >&2
  exit 137
fi
echo "prog: a refusal" >&2
printf -- '%s\n' -------------------- \
  "mpirun detected that one or more processes exited with non-zero status, thus causing" \
  "  Process name: [[123,1],1]" "  Exit code:    2" -------------------- >&2
exit 2
FAKE
chmod +x "$tmp/fake_tcp/mpirun"
PATH=$tmp/fake_tcp:$PATH FAKE_DEATH=1 timeout 60 tools/launch 3 true 2>"$tmp/err"
check "after a rank's death, the TCP transport's complaints are left out" \
  test "$(cat "$tmp/err")" = "launch: rank 2 (node node2) died of signal 9 (Killed); mpirun stopped every rank"
PATH=$tmp/fake_tcp:$PATH timeout 60 tools/launch 3 true 2>"$tmp/err"
check "with no death named, they are shown, after the rank's own line" \
  sh -c "[ \$(grep -c . '$tmp/err') = 3 ] && head -n 1 '$tmp/err' | grep -qx 'prog: a refusal' && grep -q 'writev failed: Connection reset by peer' '$tmp/err'"
# The launcher's own options are input too: one line, exit 2, nothing run.
# refused FRAGMENT ARGS...: tools/launch ARGS exits 2 with one stderr line holding FRAGMENT.
refused() {
  says=$1; shift
  timeout 60 tools/launch "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" = 2 ] && [ "$(grep -c . "$tmp/err")" = 1 ] && grep -qF -- "$says" "$tmp/err" && [ ! -s "$tmp/out" ]; then
    ok=$((ok + 1))
  else
    bad=$((bad + 1)); echo "FAIL: tools/launch $* -> exit $rc, want 2 and one line '$says':"; sed 's/^/    /' "$tmp/err" | head -3
  fi
}
printf 'node1 slots=2\nnode2 slots=2\n' >"$tmp/hosts"
refused "unknown option '--nodes'" --nodes 2 2 "$lc1" $S
refused "--per-node must be a whole number, at least 1 (got '0')" --per-node 0 --hosts a,b 2 "$lc1" $S
refused "N must be a whole number of ranks, at least 1 (got 'two')" two "$lc1" $S
refused "node a is listed twice" --hosts a:2,a:2 2 "$lc1" $S
refused "node b: how many ranks? (give --per-node K, or NAME:K)" --hosts a:2,b 2 "$lc1" $S
refused "a node's name is letters, digits and . _ - (got 'a;b')" --hosts 'a;b:2' 2 "$lc1" $S
refused "--hostfile '$tmp/none' is not a readable file" --hostfile "$tmp/none" 2 "$lc1" $S
refused "give --hostfile or --hosts, not both" --hostfile "$tmp/hosts" --hosts a:1 2 "$lc1" $S
refused "N = 6 ranks, but the nodes hold 4 slots (node1 node2)" --hostfile "$tmp/hosts" 6 "$lc1" $S
refused "--iface: an interface name or an address range (got 'eth0;x'" --iface 'eth0;x' 2 "$lc1" $S
refused "--elastic 5: more than the N = 4 the job starts with" --elastic 5 4 "$lc1" $S --save-dir "$tmp/e"
refused "--elastic restarts from the job's checkpoints: give the program --save-dir DIR" --elastic 2 4 "$lc1" $S
refused "--restarts must be a whole number (got '-1')" --restarts -1 2 "$lc1" $S
refused "--hosts needs a value" --hosts
# Numbers are whole and decimal (08 is 8, not bash's octal error), nine digits
# at most (not mpirun's message, nor an overflow); a hostfile line is NAME or
# NAME slots=K (a word mpirun would take and launch's file drop is refused);
# an interface is one of this machine's, or a range; an empty value, or one
# with a newline, is said in one line.
refused "N = 20 ranks, but the nodes hold 10 slots (a b)" --hosts a:08,b:2 20 "$lc1" $S
refused "N must be a whole number of ranks, at least 1 (got '99999999999')" 99999999999 "$lc1" $S
refused "--per-node must be a whole number, at least 1 (got '99999999999999999999')" --per-node 99999999999999999999 \
  --hosts a,b 2 "$lc1" $S
refused "--restarts must be a whole number (got '1e3')" --restarts 1e3 2 "$lc1" $S
refused "--iface needs a value" --iface '' 2 "$lc1" $S
refused "--agent needs a value" --agent '' 2 "$lc1" $S
refused "--iface 'nosuch0': no such interface here" --iface nosuch0 2 "$lc1" $S
refused "--iface '10.1.0.0/99': a range's length is 0 to 32" --iface 10.1.0.0/99 2 "$lc1" $S
refused "--iface '300.1.0.0/16': an address has four numbers of 0 to 255" --iface 300.1.0.0/16 2 "$lc1" $S
refused "unknown option '--a\nb'" "$(printf -- '--a\nb')" 2 "$lc1" $S
printf 'node1 slots=2 max_slots=4\n' >"$tmp/h"
refused "--hostfile line 1: 'max_slots=4' after slots=: a line is NAME or NAME slots=K" --hostfile "$tmp/h" 2 "$lc1" $S
printf '# nodes\nnode1 cpu=2\n' >"$tmp/h"
refused "--hostfile line 2: 'cpu=2': a line is NAME or NAME slots=K" --hostfile "$tmp/h" 2 "$lc1" $S
printf 'node1 slots=abc\n' >"$tmp/h"
refused "--hostfile line 1: node node1: slots must be a whole number, at least 1 (got 'abc')" --hostfile "$tmp/h" 2 "$lc1" $S
printf 'node1 slots=2 # two\r\n\r\nnode2 slots=02\r\n' >"$tmp/h"
refused "N = 6 ranks, but the nodes hold 4 slots (node1 node2)" --hostfile "$tmp/h" 6 "$lc1" $S
printf 'node\001x slots=2\n' >"$tmp/h"
refused "--hostfile line 1: a node's name is letters, digits and . _ - (got 'node?x')" --hostfile "$tmp/h" 2 "$lc1" $S
# A node whose agent never returns (ssh at a prompt, a host that drops
# packets; here an agent that waits forever) ends the job within the start
# bound, naming the node, and no agent is left; ssh's own failure (status 255)
# is said as such, not as a signal. (The nodes are addresses of the test range
# 198.18.0.0/15, which nothing here routes: the agents are ours.)
printf '#!/bin/sh\nwhile :; do sleep 1; done\n' >"$tmp/hang_agent" && chmod +x "$tmp/hang_agent"
ZC_START_TIMEOUT_S=3 timeout 60 tools/launch --hosts 198.18.0.7:1,198.18.0.8:1 --agent "$tmp/hang_agent" 2 "$lc1" $S \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
check "an agent that never returns: the job ends (exit $rc, not timeout's 124)" [ "$rc" != 0 -a "$rc" != 124 ]
check "  in one line naming the nodes and the bound ($(head -n 1 "$tmp/err"))" sh -c "[ \$(grep -c . '$tmp/err') = 1 ] &&
  grep -q '^launch: nodes 198.18.0.7, 198.18.0.8 did not start in 3 s: the agent (.*hang_agent) never reached it' '$tmp/err'"
sleep 1
check "  and no agent is left running" sh -c "! pgrep -f '$tmp/[h]ang_agent' >/dev/null"  # ([h]: not this sh -c itself)
mkdir -p "$tmp/agent_bin"
printf '#!/bin/sh\necho "ssh: connect to host 198.18.0.7 port 22: Connection refused" >&2\nexit 255\n' >"$tmp/agent_bin/ssh"
chmod +x "$tmp/agent_bin/ssh"
timeout 60 tools/launch --hosts 198.18.0.7:1 --agent "$tmp/agent_bin/ssh" 1 "$lc1" $S >"$tmp/out" 2>"$tmp/err"
check "ssh's status 255 is said as ssh's failure ($(tail -n 1 "$tmp/err"))" \
  grep -q "^launch: node 198.18.0.7 was lost (ssh could not reach it or log in: status 255)" "$tmp/err"
# --bind holds each rank to one core (make run's); without it a rank may run on
# any core the launcher could (make test's suites share the machine).
all=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
cpus() { timeout 60 tools/launch "$@" sh -c 'sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status' 2>&1 | sort | tr '\n' ' '; }
bound=$(cpus --bind 3) free=$(cpus 3)
check "--bind: each of 3 ranks held to one core (got: $bound)" \
  sh -c 'set -- $1; [ $# = 3 ] && for c; do case $c in *[!0-9]*) exit 1 ;; esac; done' sh "$bound"
check "without --bind: each of 3 ranks free to run on $all (got: $free)" [ "$free" = "$all $all $all " ]
# Two stages in one job, or two builds of one stage.
expect 1 2 "rank 1 runs lc2_zero1, rank 0 runs lc1_distributed_adam: every rank of a job must run the same" \
  "$lc1" $S : -n 1 "$lc2" $S
expect 1 2 "rank 1 runs lc2_zero1, rank 0 runs lc3_zero2" "$lc3" $S : -n 1 "$lc2" $S
cp "$lc2" "$tmp/lc2_zero1" && echo >>"$tmp/lc2_zero1"
expect 1 2 "rank 1 runs another build of lc2_zero1" "$lc2" $S : -n 1 "$tmp/lc2_zero1" $S

# ------------------------------------------------------------------------------
# Stopped from outside, and limits.

# stop_mpirun SIG READY COUNT PROGRAM...: PROGRAM on 2 ranks, and SIG to this
# run's mpirun (other suites run beside it) once COUNT lines of its output match
# READY (its set-up done, the handlers in place), however long a loaded
# machine takes to get there; rc is launch's status, $tmp/err its stderr.
stop_mpirun() {
  sig=$1 ready=$2 count=$3
  shift 3
  # Emptied here, not by the job's redirection: a look before the job's shell
  # had opened it once found no file, read its count as "", and sent SIG
  # before mpirun had started (the run then went on to its 60 s).
  : >"$tmp/started"
  timeout 60 tools/launch 2 "$@" >"$tmp/started" 2>"$tmp/err" &
  job=$!
  while kill -0 $job 2>/dev/null && [ "$(grep -c "$ready" "$tmp/started")" -lt "$count" ]; do sleep 0.1; done
  kill -"$sig" $(descendants $job mpirun)
  wait $job
  rc=$?
}
for sig in TERM INT; do
  stop_mpirun "$sig" '^lc2_zero1: 2 ranks' 1 "$lc2" --steps 100000 --sample 0 --log-every 0
  # Rank 0's line, or launch's where a loaded machine gave rank 0 no processor
  # time in mpirun's second between its SIGTERM and its SIGKILL.
  check "SIG$sig to mpirun: exit 1 and one line (got $rc, $(cat "$tmp/err"))" \
    sh -c "[ $rc = 1 ] && [ \$(grep -c . '$tmp/err') = 1 ] &&
           grep -qE 'stopped by SIGTERM before the run finished|^launch: mpirun was stopped by a signal' '$tmp/err'"
done
# That second, spent: ranks that ignore SIGTERM die of mpirun's SIGKILL without
# a word, and launch says why the run ended.
stop_mpirun TERM '^up$' 2 sh -c 'trap "" TERM; echo up; exec sleep 100'
check "SIGTERM to mpirun, ranks killed before a word: exit 1 and launch's line (got $rc, $(cat "$tmp/err"))" \
  sh -c "[ $rc = 1 ] && [ \$(grep -c . '$tmp/err') = 1 ] &&
         grep -qx 'launch: mpirun was stopped by a signal before the run finished, and no rank could say so in its last second' '$tmp/err'"
# mpirun cannot run under a tiny file size limit: the launcher says so; under
# a larger one, a model past it is a write error with its reason.
(ulimit -f 8; expect 1 2 "launch: the file size limit (ulimit -f) is 8 blocks" "$lc1" $S; echo "$ok $bad" >"$tmp/tally")
read -r ok bad <"$tmp/tally"
echo old >"$tmp/model.st"
(ulimit -f 16384; expect 2 1 "cannot write model file '$tmp/model.st': File too large" \
  "$lc2" --hidden 2100 --layers 2 --batch 12 --steps 1 --sample 0 --log-every 0 --save-model "$tmp/model.st"
 echo "$ok $bad" >"$tmp/tally")
read -r ok bad <"$tmp/tally"
check "a write past the file size limit keeps the old model" grep -qx old "$tmp/model.st"

# ------------------------------------------------------------------------------
# Checkpoints whose files are not what they claim.

sign="$BUILD/test/sign_manifest"
tools/launch 2 "$lc2" $S --save-dir "$tmp/ck" >/dev/null 2>&1
st=$tmp/ck/step-00000004
# fresh NAME: a copy of the checkpoint folder to spoil.
fresh() { rm -rf "${tmp:?}/$1"; cp -r "$st" "$tmp/$1"; }
rm "$tmp/ck/latest" && mkfifo "$tmp/ck/latest"
expect 2 2 "cannot read checkpoint pointer '$tmp/ck/latest': not a regular file" "$lc2" $S --steps 8 --resume "$tmp/ck"
expect 1 2 "cannot read checkpoint pointer '$tmp/ck/latest': not a regular file" "$BUILD/bin/consolidate" \
  "$tmp/ck" "$tmp/model.st"
rm "$tmp/ck/latest" && ln -s latest "$tmp/ck/latest"
expect 2 2 "cannot read checkpoint pointer '$tmp/ck/latest': Too many levels of symbolic links" \
  "$lc2" $S --steps 8 --resume "$tmp/ck"
rm "$tmp/ck/latest" && echo step-00000009 >"$tmp/ck/latest"
expect 2 2 "its 'latest' file names step-00000009, which is not a folder there" "$lc2" $S --steps 8 --resume "$tmp/ck"
echo step-00000004 >"$tmp/ck/latest"
# Every line the resume needs is there once, in range, and agrees; any edit
# that leaves the manifest's own checksum as it was is refused.
fresh e && sed -i 's/^step 4$/step 3/' "$tmp/e/manifest"
expect 2 2 "do not match the checksum on its 'end' line" "$lc2" $S --steps 8 --resume "$tmp/e"
for key in step adam_step seed examples data; do
  fresh e && sed -i "/^$key /d" "$tmp/e/manifest" && "$sign" "$tmp/e/manifest"
  expect 2 2 "is incomplete: it has no '$key' line" "$lc2" $S --steps 8 --resume "$tmp/e"
done
fresh e && sed -i 's/^adam_step 4$/adam_step 5/' "$tmp/e/manifest" && "$sign" "$tmp/e/manifest"
expect 2 2 "Adam's step 5 is past the step 4" "$lc2" $S --steps 8 --resume "$tmp/e"
fresh e && sed -i 's/^step 4$/step 4\nstep 5/' "$tmp/e/manifest" && "$sign" "$tmp/e/manifest"
expect 2 2 "is corrupt at line" "$lc2" $S --steps 8 --resume "$tmp/e"
# Numbers as the writer writes them, no more: one past the int range wraps
# back into it under scanf, a sign or a leading zero reads the same, a
# carriage return is white space to it; each is refused, the line escaped.
for edit in 's/^ranks 2$/ranks 4294967298/' 's/^batch \([0-9]*\)$/batch +\1/' 's/^step 4$/step 04/' 's/^ranks 2$/ranks 2\r/'; do
  fresh e && sed -i "$edit" "$tmp/e/manifest" && "$sign" "$tmp/e/manifest"
  line=$(grep -n '^ranks 4294967298$\|^batch +\|^step 04$\|^ranks 2.$' "$tmp/e/manifest" | head -n 1)
  shown=$(printf '%s' "${line#*:}" | sed 's/\r/\\x0d/')
  expect 2 2 "is corrupt at line ${line%%:*}: '$shown' is not as this version writes it" "$lc2" $S --steps 8 --resume "$tmp/e"
done
fresh e && sed -i '1s/$/\r/' "$tmp/e/manifest" && "$sign" "$tmp/e/manifest"
expect 2 2 "is from another version of the course ('$(head -n 1 "$st/manifest")\x0d'" "$lc2" $S --steps 8 --resume "$tmp/e"
# lc5's scaler state passes the checks of the options that would set it.
tools/launch 2 "$lc5" $S --dtype fp16 --scale-window 4 --save-dir "$tmp/k5" >/dev/null 2>&1
for edit in "scale inf" "scale nan" "scale -1" "scale 0.5" "scale 1.0000000000000001e+39" "scale 33554432" "clean nan" "clean -1" \
           "clean 4" "clean 1.5" "skipped -1" "at_floor 11"; do
  rm -rf "$tmp/e" && cp -r "$tmp/k5/step-00000004" "$tmp/e"
  set -- $edit
  sed -i "s/^value $1 .*/value $1 $2/" "$tmp/e/manifest" && "$sign" "$tmp/e/manifest"
  expect 2 2 "holds $1 " "$lc5" $S --dtype fp16 --scale-window 4 --steps 8 --resume "$tmp/e"
done
rm -rf "$tmp/e" && cp -r "$tmp/k5/step-00000004" "$tmp/e"
sed -i '/^value clean /d' "$tmp/e/manifest" && "$sign" "$tmp/e/manifest"
expect 2 2 "which keeps no 'clean': lc5_mixed_precision cannot resume it" \
  "$lc5" $S --dtype fp16 --scale-window 4 --steps 8 --resume "$tmp/e"
check "lc5 resumes its own checkpoint" sh -c "timeout 60 tools/launch 2 '$lc5' $S --dtype fp16 --scale-window 4 \
  --steps 6 --resume '$tmp/k5' >/dev/null"

# ------------------------------------------------------------------------------
# Outputs that would destroy a checkpoint; saves that never leave the save dir.

cp -r "$tmp/ck" "$tmp/ck_before"
ln -s ck "$tmp/ck_link"
for out in "$tmp/ck/latest" "$st/manifest" "$st/rank-00000.safetensors" "$tmp/ck/./step-00000004/manifest" \
           "$tmp/ck_link/latest"; do
  expect 1 2 "is inside the checkpoint" "$BUILD/bin/consolidate" "$tmp/ck" "$out"
done
expect 1 2 "is inside the checkpoint" "$BUILD/bin/consolidate" "$st" "$st/manifest"
for opt in --save-model --loss-log --trace; do
  expect 2 2 "$opt '$st/manifest' is --resume '$tmp/ck' or inside it" "$lc2" $S --steps 8 --resume "$tmp/ck" $opt "$st/manifest"
  expect 2 2 "$opt '$tmp/ck_link/latest' is --save-dir '$tmp/ck' or inside it" "$lc2" $S --save-dir "$tmp/ck" \
    $opt "$tmp/ck_link/latest"
  expect 2 2 "$opt '$tmp/x' is --save-dir '$tmp/x' or inside it" "$lc2" $S --save-dir "$tmp/x" $opt "$tmp/x"
done
check "no refusal touched the checkpoint" diff -r "$tmp/ck" "$tmp/ck_before"
# Inside means below the folder, not a name that begins like it: a file beside
# it, named after it, is written (and consolidate writes one too).
mkdir -p "$tmp/ck2"
check "--save-model 'ck.safetensors' beside --save-dir 'ck' is not inside it" \
  sh -c "timeout 60 tools/launch 2 '$lc2' $S --save-dir '$tmp/ck2' --save-model '$tmp/ck2.safetensors' --loss-log \
    '$tmp/ck2-log' >/dev/null 2>&1 && test -s '$tmp/ck2.safetensors' && test -s '$tmp/ck2-log'"
check "consolidate 'ck' into 'ck.safetensors' beside it" \
  sh -c "'$BUILD/bin/consolidate' '$tmp/ck2' '$tmp/ck2.st' >/dev/null 2>&1 && test -s '$tmp/ck2.st'"
# A step folder that is a link into another save dir is never pruned through;
# a 'latest' that is a link is replaced, not written through.
mkdir -p "$tmp/other/step-00000001" && echo precious >"$tmp/other/step-00000001/manifest"
echo precious >"$tmp/outside"
mkdir "$tmp/sd" && ln -s ../other/step-00000001 "$tmp/sd/step-00000001" && ln -s ../outside "$tmp/sd/latest"
tools/launch 2 "$lc2" $S --save-every 2 --save-dir "$tmp/sd" >/dev/null 2>"$tmp/err"
check "pruning left the linked folder's files alone" grep -qx precious "$tmp/other/step-00000001/manifest"
check "the file 'latest' linked to is as it was" grep -qx precious "$tmp/outside"
check "'latest' is now a file of the save dir" sh -c "[ ! -L '$tmp/sd/latest' ] && grep -qx step-00000004 '$tmp/sd/latest'"
ln -s ../other/step-00000001 "$tmp/sd/step-00000006"
expect 2 1 "cannot write checkpoint folder '$tmp/sd/step-00000006': not a folder" \
  "$lc2" $S --steps 6 --save-dir "$tmp/sd" --resume "$tmp/sd"
check "and wrote nothing through it" test "$(ls "$tmp/other/step-00000001")" = manifest

# A manifest that cannot be replaced (a folder in its place) stops the save.
mkdir -p "$tmp/mdir/step-00000004/manifest"
expect 2 1 "cannot replace checkpoint manifest '$tmp/mdir/step-00000004/manifest'" "$lc2" $S --save-dir "$tmp/mdir"

# ------------------------------------------------------------------------------
# Debris: temporaries of killed saves go with the next save; a failed save
# takes its folder with it.

touch "$tmp/ck/latest.tmp.12345.0" "$st/rank-00001.safetensors.tmp.12345.3" "$st/manifest.tmp.999.1" "$st/notes.tmp.1.1"
tools/launch 2 "$lc2" $S --steps 8 --save-every 4 --save-dir "$tmp/ck" --resume "$tmp/ck" >/dev/null 2>&1
check "a save removed the temporaries a killed save left" test -z "$(find "$tmp/ck" -name '*.tmp.[0-9]*' ! -name 'notes.*')"
check "and nothing it does not own" test -f "$st/notes.tmp.1.1"
(ulimit -f 16384
 expect 2 1 "File too large" "$lc2" --hidden 2100 --layers 2 --batch 12 --steps 2 --sample 0 --log-every 0 \
   --save-every 1 --save-dir "$tmp/big"
 echo "$ok $bad" >"$tmp/tally")
read -r ok bad <"$tmp/tally"
check "a failed save left no folder behind" test -z "$(ls "$tmp/big" 2>/dev/null)"

# ------------------------------------------------------------------------------
# Found at the start, not after the training: names a write will use, values
# that would turn into 0, options a computation needs, memory.

long=$tmp/$(printf 'm%.0s' $(seq 250))
expect 2 2 "cannot write model file" "$lc2" $S --steps 100000 --save-model "$long"
expect 1 2 "--clip 1e-46: too small for fp32" "$lc1" $S --clip 1e-46
expect 1 2 "--weight-decay 1e-40: too small for fp32" "$lc1" $S --weight-decay 1e-40
expect 1 2 "--layers needs --hidden" "$BUILD/bin/plan" --layers 3 --ranks 4
# A block larger than the node can give is refused with the numbers where it
# is asked for (under grading, where freed blocks are written, from the start).
ZC_GRADING=1 expect 1 2 "cannot allocate 1008.06 GiB of params in host memory: this node has" \
  "$BUILD/bin/lc0_adam" --hidden 65536 --layers 64 --steps 1
python3 - "$tmp/dtype.st" <<'PY'
import json, struct, sys
h = json.dumps({"w": {"dtype": "A" * 40, "shape": [1], "data_offsets": [0, 4]}}).encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + b"\0" * 4)
PY
expect 1 2 "unknown dtype 'AAAAAAAAAAAAAAAAAAAA...'" "$BUILD/bin/lc0_adam" $S --init "$tmp/dtype.st"

# ------------------------------------------------------------------------------
# Durability only an OS crash would show (issue 25.5): every file a run writes
# is synced before its rename, and its folder after, in that order. Read from
# the system calls themselves, per process (each rank writes its own file).

if strace -qq -o /dev/null true 2>/dev/null; then
  mkdir "$tmp/dur"
  timeout 120 tools/launch 2 strace -ff -y -qq -e trace=fsync,fdatasync,rename,renameat,renameat2 -o "$tmp/dur/sys" \
    "$lc2" $S --save-every 2 --save-model "$tmp/dur/m.st" --loss-log "$tmp/dur/l.txt" --trace "$tmp/dur/t.json" \
    --save-dir "$tmp/dur/ck" >/dev/null 2>&1
  # Each rename: its file synced before it, the first sync after it its folder.
  # Prints each target so checked, or BAD lines.
  cat "$tmp"/dur/sys.* /dev/null | awk '
    FNR == 1 { delete synced; pending = "" }
    /^f(data)?sync\(/ { p = $0; sub(/^[^<]*</, "", p); sub(/>\).*$/, "", p)
                        if (pending != "") { print (p == pending ? "" : "BAD dir ") renamed; pending = "" }
                        synced[p] = 1; next }
    /^rename/ { split($0, q, "\""); src = q[2]; renamed = q[4]
                if (!(src in synced)) print "BAD data " renamed
                pending = renamed; sub(/\/[^\/]*$/, "", pending) }
    END { if (pending != "") print "BAD dir " renamed }' >"$tmp/dur/checked"
  d=$tmp/dur
  for f in m.st l.txt t.json ck/latest ck/step-00000002/manifest ck/step-00000004/manifest \
           ck/step-00000004/rank-00000.safetensors ck/step-00000004/rank-00001.safetensors; do
    check "$f: synced, renamed, its folder synced" grep -qx "$(realpath "$d")/$f" "$d/checked"
  done
  check "no write out of that order ($(grep BAD "$d/checked" | head -n 2))" sh -c "! grep -q BAD '$d/checked'"
else
  echo "skipped: the order of fsync and rename (no strace here, or it cannot trace)"
fi

# ------------------------------------------------------------------------------
# Round 4: the environment and bench_comm's options are inputs like the command
# line: read whole, in range, escaped when echoed, and the same on every rank.

one_rank='if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then export "$0"; fi; exec "$@"'  # sh -c "$one_rank" VAR=VALUE PROGRAM ARGS...
expect 4 2 "ZC_LINK is not the same on every rank (rank 1's differs from rank 0's)" \
  sh -c "$one_rank" ZC_LINK=bogus "$lc1" $S --comm hier --ranks-per-node 2
expect 2 2 "ZC_LINK is not the same on every rank (rank 1's differs" \
  sh -c "$one_rank" ZC_LINK=inter:20us,1GB/s "$lc1" $S --comm auto
expect 2 2 "ZC_GRADING is not the same on every rank" sh -c "$one_rank" ZC_GRADING=1 "$lc3" $S
# The products' library: one of two words, whole, and the same on every rank.
for v in mkl '' 'onednn ' 'openblas onednn' ONEDNN; do
  ZC_GEMM=$v expect 2 2 "ZC_GEMM='$v': expected one of: openblas onednn" "$lc1" $S
done
expect 2 2 "ZC_GEMM is not the same on every rank" sh -c "$one_rank" ZC_GEMM=onednn "$lc2" $S
ZC_GEMM=onednn timeout 60 tools/launch 2 "$lc2" $S >"$tmp/out" 2>&1
check "ZC_GEMM=onednn runs, and the report says so" grep -q "^matmul: oneDNN .* as ZC_GEMM asks" "$tmp/out"
printf 'call 1e-6\nalpha 1e-6\nbeta 1e-9\ngamma 0\ndelta 0\n' >"$tmp/fit0"
expect 2 2 "ZC_COMM_FIT is not the same on every rank" sh -c "$one_rank" "ZC_COMM_FIT=$tmp/fit0" "$lc1" $S --comm auto
# Set and empty (the built-in fit) is not unset (the cached fit): not the same either.
expect 2 2 "ZC_COMM_FIT is not the same on every rank (rank 1's differs from rank 0's): set it" \
  sh -c "$one_rank" "ZC_COMM_FIT=" "$lc1" $S --comm auto
for v in 1e1 3abc abc '' 0 -3 nan 99999999999; do
  ZC_START_TIMEOUT_S=$v expect 2 2 "ZC_START_TIMEOUT_S='$v': expected whole seconds in [1, 86400]" "$lc1" $S
done
for v in 1e3 18014398509481984 0.5; do
  ZC_TRACE_LIMIT_KB=$v expect 2 2 "ZC_TRACE_LIMIT_KB='$v': expected whole KiB" "$lc1" $S --trace "$tmp/t.json"
done
# The graded checks' time limits: a factor in range, the same on every rank,
# refused by the test program and by make grade before anything runs (inf
# removed every bound, abc meant 1, 1e-300 failed the reference's own checks).
lc1t=$B/../test/test_lc1
for v in inf abc 1e-300 0 -1 nan '' ' 2' 2x 101; do
  ZC_TIME_SCALE=$v expect 2 2 "ZC_TIME_SCALE='$v': expected a factor in [0.01, 100]" "$lc1t"
  ZC_TIME_SCALE=$v expect 1 2 "ZC_TIME_SCALE='$v': expected a factor in [0.01, 100]" "$lc1t" --list
done
expect 2 2 "ZC_TIME_SCALE is not the same on every rank" sh -c "$one_rank" ZC_TIME_SCALE=2 "$lc1t"
mkdir -p "$tmp/mine/lc0_adam" && cp lc0_adam/adam.c "$tmp/mine/lc0_adam/"
ZC_TIME_SCALE=inf MINE=$tmp/mine LC=0 GRADE_DIR=$tmp/grade tests/grader/grade.sh >"$tmp/out" 2>"$tmp/err"
rc=$?
check "make grade refuses ZC_TIME_SCALE=inf in one line, status 2 (got $rc)" \
  sh -c "[ $rc = 2 ] && [ \$(grep -c . '$tmp/err') = 1 ] && grep -q \"ZC_TIME_SCALE='inf'\" '$tmp/err'"
# Its watchdog's log: a file it can write, on every rank, the same everywhere.
expect 2 2 "ZC_WATCHDOG_LOG='$tmp/none/w.log': cannot write it: No such file or directory" env \
  ZC_WATCHDOG_LOG="$tmp/none/w.log" ZC_REF="$tmp" "$lc1t"
expect 2 2 "ZC_WATCHDOG_LOG is not the same on every rank" sh -c "$one_rank" ZC_WATCHDOG_LOG="$tmp/w.log" "$lc1t"
ZC_HOST_MEM_MB=lots expect 1 2 "ZC_HOST_MEM_MB='lots'" "$lc0" $S
ZC_CKPT_KILL_AT=5x expect 1 2 "ZC_CKPT_KILL_AT='5x'" "$lc0" $S
ZC_LINK="inter:20us,1GB/s$(printf '%0120d' 0)" expect 2 2 "expected inter:LATENCY,BANDWIDTH" "$lc1" $S
ZC_LINK="$(printf 'inter:20us,\n1GB/s')" expect 2 2 "ZC_LINK='inter:20us,\n1GB/s'" "$lc1" $S
# A value with a newline is echoed escaped, in one line; a save dir that is a
# link to nothing is refused at the start, not at the first save.
expect 2 2 "--lr 1\n2: expected a number" "$lc2" $S --lr "$(printf '1\n2')"
expect 2 2 "unknown option '--a\nb'" "$lc2" $S "$(printf -- '--a\nb')"
expect 2 2 "unexpected argument 'a\nb'" "$lc2" $S "$(printf 'a\nb')"
ln -s "$tmp/nowhere/at/all" "$tmp/dangling"
expect 2 2 "cannot write checkpoint folder '$tmp/dangling': a link to a path that does not exist" "$lc2" $S \
  --save-dir "$tmp/dangling"
# A fit file is read whole: a trailing word, a misspelt name, a long line or
# binary bytes are refused at the start, in one line, with no abort banner.
printf 'call 1e-6\nalpha 1e-6 s\nbeta 1e-9\ngamma 0\ndelta 0\n' >"$tmp/fit1"
printf 'call 1e-6\nalpah 1e-6\nbeta 1e-9\ngamma 0\ndelta 0\n' >"$tmp/fit2"
{ printf 'call 1e-6 '; printf '%0300d\n' 0; } >"$tmp/fit3"
printf 'call 1e-6\n\001\002\033[31m\n' >"$tmp/fit4"
for f in fit1 fit2 fit3 fit4; do
  ZC_COMM_FIT=$tmp/$f expect 2 2 "cost model fit '$tmp/$f', line" "$lc1" $S --comm auto
done
ZC_COMM_FIT=$tmp/fit4 timeout 60 tools/launch 2 "$lc1" $S >/dev/null 2>"$tmp/err"
check "  a control character is shown escaped" grep -qF "got '\x01\x02\x1b[31m'" "$tmp/err"
# The fit make comm-fit keeps beside the build's programs (BUILD/comm_fit),
# where it is a link to nothing: said, not taken for "no fit" (a program
# copied to a build folder of its own, so the tree's fit is not touched).
mkdir -p "$tmp/fitbuild/bin" && cp "$lc1" "$tmp/fitbuild/bin/"
ln -s "$tmp/fitbuild/gone" "$tmp/fitbuild/comm_fit"
expect 2 2 "the fit make comm-fit keeps, '$tmp/fitbuild/comm_fit', is a link to nothing" \
  "$tmp/fitbuild/bin/lc1_distributed_adam" $S --comm auto

# bench_comm: one rank given other options stops every rank at once; values
# are whole and in range; an output that cannot be written, or buffers larger
# than the node, are refused before the benchmark.
bc=$B/bench_comm
expect 2 2 "the ranks were started with different options (rank 1's differ" \
  sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exec "$0" -B tree -b 1K -e 1K; fi; exec "$0" -b 1K -e 1K' "$bc"
expect 2 2 "the ranks were started with different options (rank 1's differ" \
  sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exec "$0" -b abc; fi; exec "$0" -b 1K -e 1K' "$bc"
for f in -b -e; do expect 2 2 "$f 'nan': expected a size in bytes" "$bc" "$f" nan; done
expect 2 2 "-o '': expected one or more of" "$bc" -o ''
expect 2 2 "-B ' ': expected one or more of" "$bc" -B ' '
expect 2 2 "-d '': expected cpu or cuda" "$bc" -d ''
expect 2 2 "-d 'cpu cuda': expected cpu or cuda" "$bc" -d 'cpu cuda'
mkfifo "$tmp/fifo"
for out in "$tmp" "$tmp/fifo" /dev/full "$tmp/no/such/fit"; do
  expect 2 2 "cannot write cost model fit '$out'" "$bc" -b 1K -e 1K -m --fit "$out"
done
# --rules adds to a fit that exists (or that --fit writes first), measured on
# one node with host buffers: anything else is refused before the benchmark.
expect 2 2 "cannot read cost model fit '$tmp/no_fit'" "$bc" -b 1K -e 1K --rules "$tmp/no_fit"
expect 2 2 "cost model fit '$tmp/fit2', line 2" "$bc" -b 1K -e 1K --rules "$tmp/fit2"
expect 2 2 "cannot write cost model fit '/dev/full'" "$bc" -b 1K -e 1K --rules /dev/full
expect 2 2 "--rules: measured on one node with buffers on the cpu" "$bc" -b 1K -e 1K -k 1 --rules "$tmp/fit0"
ZC_HOST_MEM_MB=100 expect 2 2 "the buffers of -e 2.00 GiB do not fit: they need 12.00 GiB of host memory" \
  "$bc" -b 2G -e 2G -n 1 -w 0 -o all_gather -B ring
ZC_HOST_MEM_MB=100 expect 1 2 "the five buffers of -p 4294967296 do not fit: they need 80.00 GiB of host memory" \
  "$B/bench_adam" -p 4294967296
expect 2 2 "the ranks were started with different options (rank 1's differ" \
  sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exec "$0" -p 1000; fi; exec "$0" -p 2000' "$B/bench_adam"

# Grading mode checks a collective's whole input at the run: a write to its
# last element while in flight (for a reduce-scatter, in the last rank's
# slice) stops the run, naming the collective.
for k in all_reduce reduce_scatter all_gather; do
  for n in 1 3; do
    timeout 60 tools/launch $n "$B/../test/comm_misuse" $k >"$tmp/out" 2>"$tmp/err"
    check "$k at N=$n: an input written in flight is seen" \
      grep -q "the input of $k #[0-9]* ([0-9.]* KiB) was written before the collective completed" "$tmp/err"
  done
done

finish test_hostile
