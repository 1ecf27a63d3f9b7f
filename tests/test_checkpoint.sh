#!/bin/sh
# Training checkpoints (--save-every, --save-dir, --resume) and consolidate:
# a resumed run is the uninterrupted run bit for bit at the same N (every stage,
# N = 1..4, accumulation and clipping on; lc5 in fp16 with a dynamic scale and a
# step skipped at the save); a checkpoint resumes at another N and in another
# stage on the same curve, within the stages' grading tolerance; a bad
# checkpoint is refused with one line and exit 2; a rank killed between its
# files and the manifest leaves the previous checkpoint loadable; consolidate
# writes what --save-model writes, byte for byte; the files hold exactly the
# state the stage keeps. Every run is bounded by a timeout.
# usage: tests/test_checkpoint.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. tests/expect.sh
model="--hidden 16 --layers 2 --context 3 --batch 48 --sample 0 --log-every 1"
train="$model --accum 2 --clip 0.5"
fp16="--dtype fp16 --initial-scale 16777216 --scale-window 3"
S=16 H=8  # steps in all, and where the interrupted runs stop

stage_bin() { eval "printf '%s\\n' \"\$$1\""; }  # lc4 -> $lc4 (tests/expect.sh)
opts() { [ "$1" = lc5 ] && echo "$train $fp16" || echo "$train"; }

# run N STAGE ARGS...: a bounded run, its stdout in $tmp/out; fails the check on a non-zero exit.
run() {
  n=$1 st=$2; shift 2
  timeout 120 tools/launch "$n" "$(stage_bin "$st")" $(opts "$st") "$@" >"$tmp/out" 2>"$tmp/err" ||
    { echo "run failed (N=$n $st $*):"; sed 's/^/    /' "$tmp/err" | head -5; return 1; }
}

# same_curve A B TOL: loss logs A and B cover the same steps, each loss within
# TOL relative (0: identical text).
same_curve() {
  [ "$3" = 0 ] && { cmp -s "$1" "$2"; return; }
  awk -v tol="$3" 'NR == FNR { l[$1] = $2; next }
    { n++; if (!($1 in l)) bad = 1; d = $2 - l[$1]; if (d < 0) d = -d; if (d > tol * l[$1]) bad = 1 }
    END { exit bad || n == 0 }' "$1" "$2"
}

# ------------------------------------------------------------------------------
# Exact resume: S steps in one run; H steps, a checkpoint, then H more in a
# second run: the same loss log and the same model, byte for byte.

exact() {
  n=$1 st=$2 d=$tmp/x-$st-$n
  mkdir -p "$d"
  run "$n" "$st" --steps $S --loss-log "$d/full.log" --save-model "$d/full.st" &&
    cp "$tmp/out" "$d/full.out" &&
    run "$n" "$st" --steps $H --save-dir "$d/ck" --loss-log "$d/a.log" &&
    run "$n" "$st" --steps $S --resume "$d/ck" --loss-log "$d/b.log" --save-model "$d/res.st" &&
    cat "$d/a.log" "$d/b.log" | cmp -s - "$d/full.log" && cmp -s "$d/full.st" "$d/res.st"
}
# skipped STEP OUT: lc5's count of skipped steps after STEP, from its progress lines.
skipped() { sed -n "s|^step *$1/.* skipped \([0-9]*\)$|\1|p" "$2"; }
check "lc0 resumes exactly" exact 1 lc0
for n in 1 2 3 4; do
  for st in lc1 lc2 lc3 lc4 lc5; do check "$st resumes exactly at N=$n" exact "$n" "$st"; done
  # The fp16 run skips the step right after the save (the scale doubled at it):
  # the restored loss scale, not a fresh one, is what makes that step the same.
  check "lc5 at N=$n skips step $((H + 1)), just after the save" \
    test "$(skipped $((H + 1)) "$tmp/x-lc5-$n/full.out")" -gt "$(skipped $H "$tmp/x-lc5-$n/full.out")"
done

# lc5's scaler state saved where its counters are something: after step 6 and 7
# the clean count is 1 and 2 of the window of 3, after 10 it is 1 with a skip
# just behind. The resumed run's losses, model, and the scale and skipped count
# of every step are the uninterrupted run's (a counter not saved moves when
# the scale next doubles, and with it the losses).
counters() { sed -n 's/^step *\([0-9]*\)\/.*\(| scale .*\)$/\1 \2/p' "$1"; }
counters "$tmp/x-lc5-2/full.out" >"$tmp/lc5-full.c"
lc5_at() {
  e=$tmp/s5-$1
  mkdir -p "$e"
  run 2 lc5 --steps "$1" --save-dir "$e/ck" --loss-log "$e/a.log" && counters "$tmp/out" >"$e/a.c" &&
    run 2 lc5 --steps $S --resume "$e/ck" --loss-log "$e/b.log" --save-model "$e/res.st" &&
    counters "$tmp/out" >"$e/b.c" && cat "$e/a.log" "$e/b.log" | cmp -s - "$tmp/x-lc5-2/full.log" &&
    cmp -s "$e/res.st" "$tmp/x-lc5-2/full.st" && cat "$e/a.c" "$e/b.c" | cmp -s - "$tmp/lc5-full.c"
}
check "lc5's counters are there to save (every step has its scale and skipped)" test "$(wc -l <"$tmp/lc5-full.c")" -eq $S
for h in 6 7 10; do check "lc5 saved after step $h (clean steps mid-window) resumes exactly, counters too" lc5_at $h; done
# The floor's count: a static scale that overflows every step stops the run at
# the 10th skip in a row; saved after 5 of them, the resumed run stops at the 10th too.
flood="--dtype fp16 --loss-scale 1e9"
timeout 120 tools/launch 2 "$B/lc5_mixed_precision" $model $flood --steps $S --save-every 5 --save-dir "$tmp/flood" \
  >"$tmp/out" 2>"$tmp/err"
check "a static scale that always overflows stops at step 10" grep -q "^lc5_mixed_precision: step 10: 10 steps in a row" "$tmp/err"
check "  having saved step 5 only (it stops before step 10's save)" test "$(cat "$tmp/flood/latest")" = step-00000005
timeout 120 tools/launch 2 "$B/lc5_mixed_precision" $model $flood --steps $S --resume "$tmp/flood" >"$tmp/out" 2>"$tmp/err"
check "  and resumed after 5 of them, at step 10 too" grep -q "^lc5_mixed_precision: step 10: 10 steps in a row" "$tmp/err"

# ------------------------------------------------------------------------------
# Resharding, and other stages: the curve continues within the grading tolerance
# of the uninterrupted run (1e-6 relative: the sums run in another order).

tol=1e-6
run 4 lc4 --steps $S --loss-log "$tmp/lc4.log" >/dev/null
run 4 lc4 --steps $H --save-dir "$tmp/c4" >/dev/null
run 3 lc2 --steps $S --loss-log "$tmp/lc2.log" >/dev/null
run 3 lc2 --steps $H --save-dir "$tmp/c3" >/dev/null
for n in 3 1; do
  check "lc4 saved at N=4 resumes at N=$n" run "$n" lc4 --steps $S --resume "$tmp/c4" --loss-log "$tmp/r.log"
  check "  and its curve is lc4's at N=4" same_curve "$tmp/lc4.log" "$tmp/r.log" $tol
  check "  and it says it resharded" grep -q "resharded" "$tmp/out"
done
check "lc2 saved at N=3 resumes at N=4" run 4 lc2 --steps $S --resume "$tmp/c3" --loss-log "$tmp/r.log"
check "  and its curve is lc2's at N=3" same_curve "$tmp/lc2.log" "$tmp/r.log" $tol
run 3 lc3 --steps $H --save-dir "$tmp/c32" >/dev/null
check "a ZeRO-2 checkpoint (N=3) resumes in ZeRO-3 (N=4)" \
  run 4 lc4 --steps $S --resume "$tmp/c32" --loss-log "$tmp/r.log"
check "  on lc4's curve" same_curve "$tmp/lc4.log" "$tmp/r.log" $tol
check "a ZeRO-3 checkpoint (N=4) resumes in lc1 (N=2)" run 2 lc1 --steps $S --resume "$tmp/c4" --loss-log "$tmp/r.log"
check "  on lc4's curve" same_curve "$tmp/lc4.log" "$tmp/r.log" $tol
check "lc5 in fp32 resumes lc5's fp16 checkpoint (the master is the model)" \
  run 3 lc5 --steps $S --resume "$tmp/x-lc5-3/ck" --dtype fp32 --loss-log "$tmp/r.log"
check "  with no loss scale (fp32's is none)" grep -q "^step *$S/$S .*| scale 1 |" "$tmp/out"
check "and in lc0" run 1 lc0 --steps $S --resume "$tmp/c4" --loss-log "$tmp/r.log"
check "  on lc4's curve" same_curve "$tmp/lc4.log" "$tmp/r.log" $tol

# ------------------------------------------------------------------------------
# What a checkpoint holds: the last two, exactly the state, the report.

run 4 lc4 --steps 8 --save-every 2 --save-dir "$tmp/keep" >/dev/null
check "the last two checkpoints are kept" \
  test "$(ls "$tmp/keep" | tr '\n' ' ')" = "latest step-00000006 step-00000008 "
check "latest names the last" test "$(cat "$tmp/keep/latest")" = step-00000008
# data_bytes FILE: a safetensors file's tensor data (its size less the header).
data_bytes() { echo $(($(stat -c %s "$1") - 8 - $(od -An -t u8 -N 8 "$1" | tr -d ' '))); }
sum_data() { t=0; for f in "$1"/rank-*.safetensors; do t=$((t + $(data_bytes "$f"))); done; echo $t; }
psi=$(grep -o 'params=[0-9]*' "$tmp/out" | head -1 | cut -d= -f2)
check "lc4's files hold 12Ψ bytes (params, m, v slices; no padding)" \
  test "$(sum_data "$tmp/keep/step-00000008")" = $((12 * psi))
check "the report shows what each rank saves" \
  grep -q "^checkpoints: 4 saved | .*params 4Ψ/N, m 4Ψ/N, v 4Ψ/N" "$tmp/out"
# A shorter run saving into that folder prunes only what is older than its
# save: steps 6 and 8 (the other run's, later) are left alone.
cp -r "$tmp/keep" "$tmp/keep2" && rm "$tmp/keep2/latest"
run 4 lc4 --steps 4 --save-every 2 --save-dir "$tmp/keep2" >/dev/null
check "a run that saves steps 2 and 4 beside a later run's 6 and 8 leaves those" \
  test "$(ls "$tmp/keep2" | tr '\n' ' ')" = "latest step-00000002 step-00000004 step-00000006 step-00000008 "
run 2 lc2 --steps 2 --save-dir "$tmp/k2" >/dev/null
check "lc2: rank 0 writes the params, each rank its m and v (4Ψ + 8Ψ)" \
  test "$(sum_data "$tmp/k2/step-00000002")" = $((12 * psi))
# tensors FILE: the names of a safetensors file's tensors, in order.
tensors() { dd if="$1" bs=1 skip=8 count="$(od -An -t u8 -N 8 "$1" | tr -d ' ')" 2>/dev/null |
  grep -o '"[a-z0-9_]*":{"dtype"' | cut -d'"' -f2 | tr '\n' ' '; }
k2=$tmp/k2/step-00000002
check "lc2: rank 0's file holds params, m, v" test "$(tensors "$k2/rank-00000.safetensors")" = "params m v "
check "lc2: rank 1's only m and v" test "$(tensors "$k2/rank-00001.safetensors")" = "m v "
run 3 lc5 --steps 2 --save-dir "$tmp/k5" >/dev/null
check "lc5 fp16: 2Ψ + 4Ψ + 4Ψ + 4Ψ bytes in all" test "$(sum_data "$tmp/k5/step-00000002")" = $((14 * psi))
check "lc5 saves the loss scale" grep -q "^value scale " "$tmp/k5/step-00000002/manifest"

# ------------------------------------------------------------------------------
# Refusals: one line, exit 2.

expect 2 2 "is of another model" "$lc4" $train --hidden 8 --steps $S --resume "$tmp/c4"
expect 2 2 "was saved with --seed" "$lc4" $train --seed 7 --steps $S --resume "$tmp/c4"
expect 2 2 "was saved with --batch" "$lc4" $train --batch 24 --steps $S --resume "$tmp/c4"
expect 2 2 "leaves nothing to train" "$lc4" $train --steps $H --resume "$tmp/c4"
grep -x "[a-z]*" /usr/share/dict/words | head -n 20000 >"$tmp/fewer_words"
expect 2 2 "was trained on another data set (592752 examples" "$lc4" $train --steps $S --data "$tmp/fewer_words" \
  --resume "$tmp/c4"
# Another data set of as many examples (every first 'a' of a word an 'e'):
# refused by the data's fingerprint, not its size.
sed 's/a/e/' /usr/share/dict/words >"$tmp/other_words"
expect 2 2 "was trained on another data set (592752 examples" "$lc4" $train --steps $S --data "$tmp/other_words" \
  --resume "$tmp/c4"
expect 2 2 "lc5_mixed_precision cannot resume it" "$B/lc5_mixed_precision" $train --steps $S --resume "$tmp/c4"
expect 2 2 "lc4_zero3 cannot resume it" "$lc4" $train --steps $S --resume "$tmp/k5"
expect 2 2 "this run keeps it as BF16" "$B/lc5_mixed_precision" $train --steps $S --resume "$tmp/k5"
expect 2 2 "no checkpoint in" "$lc4" $train --steps $S --resume "$tmp"
expect 2 2 "No such file or directory" "$lc4" $train --steps $S --resume "$tmp/nowhere"
expect 2 2 "--resume and --init both given" "$lc4" $train --steps $S --resume "$tmp/c4" --init "$tmp/x-lc4-1/full.st"
expect 2 2 "--save-every 2: needs --save-dir" "$lc4" $train --steps $S --save-every 2
touch "$tmp/plain"
expect 2 2 "cannot write checkpoint folder '$tmp/plain': not a directory" \
  "$lc4" $train --steps 2 --save-dir "$tmp/plain"
cp -r "$tmp/c4" "$tmp/bad"
ck=$tmp/bad/step-0000000$H
printf 'x' | dd of="$ck/rank-00002.safetensors" bs=1 seek=200 conv=notrunc 2>/dev/null
expect 2 2 "rank-00002.safetensors' is corrupt" "$lc4" $train --steps $S --resume "$tmp/bad"
rm "$ck/rank-00002.safetensors"
expect 2 2 "cannot read checkpoint file" "$lc4" $train --steps $S --resume "$tmp/bad"
sed -i 's/^ranks 4$/ranks four/' "$ck/manifest"
expect 2 2 "is corrupt at line" "$lc4" $train --steps $S --resume "$tmp/bad"
rm "$ck/manifest"
expect 2 2 "is incomplete: it has no manifest" "$lc4" $train --steps $S --resume "$ck"
expect 2 2 "is incomplete: it has no manifest" "$lc4" $train --steps $S --resume "$tmp/bad"

# ------------------------------------------------------------------------------
# A crash between the shard files and the manifest: the previous checkpoint is
# whole, latest still names it, and training resumes from it exactly.

d=$tmp/x-lc3-3
ZC_CKPT_KILL_AT=12 timeout 60 tools/launch 3 "$B/lc3_zero2" $train --steps $S --save-every 4 --save-dir "$tmp/crash" \
  --loss-log "$tmp/k.log" >/dev/null 2>&1
check "the killed run failed" test $? -ne 0
check "  its loss log holds steps 1..8, as the last complete checkpoint does" \
  sh -c "head -n 8 '$d/full.log' | cmp -s - '$tmp/k.log'"
check "it left step 12's files without a manifest" test -f "$tmp/crash/step-00000012/rank-00000.safetensors" -a \
  ! -f "$tmp/crash/step-00000012/manifest"
check "latest still names step 8" test "$(cat "$tmp/crash/latest")" = step-00000008
check "the run resumes from step 8" run 3 lc3 --steps $S --resume "$tmp/crash" --loss-log "$tmp/r.log" \
  --save-model "$tmp/r.st"
check "  exactly as the uninterrupted run" cmp -s "$tmp/r.st" "$d/full.st"
check "  and its loss log is steps 9..16 of it" sh -c "tail -n 8 '$d/full.log' | cmp -s - '$tmp/r.log'"
check "resumed into the killed run's loss log, it continues it" run 3 lc3 --steps $S --resume "$tmp/crash" \
  --loss-log "$tmp/k.log"
check "  to the uninterrupted run's, byte for byte" cmp -s "$tmp/k.log" "$d/full.log"
expect 2 2 "is incomplete: it has no manifest" "$B/lc3_zero2" $train --steps $S --resume "$tmp/crash/step-00000012"
# Saving again into that folder: the incomplete step 12 is not "the checkpoint
# before" (a prune that took it so would delete step 8, the last good one).
cp -r "$tmp/crash" "$tmp/crash2"
check "a run resumed there saves into the same folder" run 3 lc3 --steps $S --resume "$tmp/crash2" \
  --save-dir "$tmp/crash2"
check "  which then holds step 8, the last complete before, and step 16; not the incomplete 12" \
  test "$(ls "$tmp/crash2" | tr '\n' ' ')" = "latest step-00000008 step-00000016 "

# ------------------------------------------------------------------------------
# --resume-if-any: a job script passes it on every run; the first finds nothing
# there and starts from the start, the next resume, on the uninterrupted curve.

d=$tmp/x-lc3-3
check "--resume-if-any with no checkpoint yet starts from the start" \
  run 3 lc3 --steps $H --save-dir "$tmp/job" --resume-if-any "$tmp/job" --loss-log "$tmp/j1.log"
check "  and says so" grep -q "^--resume-if-any: no checkpoint in '$tmp/job' yet: starting from the start" "$tmp/out"
check "the same command line later resumes" \
  run 3 lc3 --steps $S --save-dir "$tmp/job" --resume-if-any "$tmp/job" --loss-log "$tmp/j2.log" --save-model "$tmp/j.st"
check "  exactly as the uninterrupted run" sh -c "cat '$tmp/j1.log' '$tmp/j2.log' | cmp -s - '$d/full.log' &&
  cmp -s '$tmp/j.st' '$d/full.st'"
mkdir -p "$tmp/empty"
check "an empty folder holds no checkpoint either" \
  run 1 lc0 --steps 2 --resume-if-any "$tmp/empty"
expect 2 2 "--resume and --resume-if-any both given" "$B/lc3_zero2" $train --steps $S --resume "$tmp/job" \
  --resume-if-any "$tmp/job"
expect 2 2 "not a folder" "$B/lc3_zero2" $train --steps $S --resume-if-any "$tmp/plain"
# Something that was a checkpoint and is broken is refused, never skipped.
cp -r "$tmp/job" "$tmp/job2"
echo garbage > "$tmp/job2/latest"
expect 2 2 "its 'latest' file is corrupt" "$B/lc3_zero2" $train --steps $S --resume-if-any "$tmp/job2"
rm "$tmp/job2/latest" "$tmp"/job2/step-*/manifest
expect 2 2 "incomplete" "$B/lc3_zero2" $train --steps $S --resume-if-any "$tmp/job2/step-00000016"
# A save dir that lost its 'latest' still holds the run: --resume-if-any resumes
# its newest complete checkpoint, never starts afresh over it (the first save
# would then prune both).
run 3 lc3 --steps $H --save-every 4 --save-dir "$tmp/lost" >/dev/null
rm "$tmp/lost/latest"
check "a save dir without its 'latest' resumes its newest complete checkpoint" \
  run 3 lc3 --steps $S --save-dir "$tmp/lost" --resume-if-any "$tmp/lost" --loss-log "$tmp/l2.log"
check "  which is step 8" grep -q "^resumed from $tmp/lost/step-00000008:" "$tmp/out"
check "  on the uninterrupted curve" cmp -s "$tmp/l2.log" "$tmp/j2.log"
check "  and the checkpoints it found are there" test -f "$tmp/lost/step-00000008/manifest"
# Step folders with no complete checkpoint, or a save's temporary alone: refused,
# naming what is there, and left as they were.
mkdir -p "$tmp/torn"
cp -r "$tmp/job/step-00000008" "$tmp/torn/" && rm "$tmp/torn/step-00000008/manifest"
expect 2 2 "no complete checkpoint in '$tmp/torn': its 1 step folder has no manifest" "$B/lc3_zero2" $train \
  --steps $S --save-dir "$tmp/torn" --resume-if-any "$tmp/torn"
check "  and leaves it there" test -f "$tmp/torn/step-00000008/rank-00000.safetensors"
mkdir -p "$tmp/tmponly" && echo step-00000008 > "$tmp/tmponly/latest.tmp.123.0"
expect 2 2 "only a temporary file of a save that stopped" "$B/lc3_zero2" $train --steps $S \
  --resume-if-any "$tmp/tmponly"
# A 'latest' that names a path, not a folder of its own, is corrupt: a resume
# never reads another run's checkpoint through it.
cp -r "$tmp/job" "$tmp/job3"
echo "step-00000008/../../job/step-00000016" > "$tmp/job3/latest"
expect 2 2 "its 'latest' file is corrupt" "$B/lc3_zero2" $train --steps $S --resume "$tmp/job3"
# Pruning removes an older incomplete folder, and says so.
mkdir -p "$tmp/note" && cp -r "$tmp/torn/step-00000008" "$tmp/note/step-00000002"
check "a run that prunes an incomplete checkpoint" run 1 lc0 --steps 4 --save-dir "$tmp/note"
check "  says so" grep -q "note: removed '$tmp/note/step-00000002', an incomplete checkpoint" "$tmp/err"
check "  and it is gone" test ! -e "$tmp/note/step-00000002"

# ------------------------------------------------------------------------------
# consolidate: the --save-model file of the same run, byte for byte (lc5: the
# fp32 master, which is what its --save-model writes too).

for x in lc0-1 lc1-2 lc2-3 lc3-4 lc4-4 lc4-3 lc5-3 lc5-2; do
  d=$tmp/x-$x
  mkdir -p "$d/ck2"
  st=${x%-*} n=${x#*-}
  run "$n" "$st" --steps $H --save-dir "$d/ck2" --save-model "$d/h.st" >/dev/null
  check "consolidate $st (N=$n) = its --save-model" sh -c \
    "'$B/consolidate' '$d/ck2' '$d/c.st' >/dev/null && cmp -s '$d/c.st' '$d/h.st'"
done
# And into PyTorch, where torch is installed (not a dependency: elsewhere this
# is skipped): its loss over the whole data set is lc0's.
if python3 -c 'import torch, safetensors' 2>/dev/null; then
  py=$(python3 tools/pytorch_loss.py "$tmp/x-lc4-4/c.st" --context 3 | sed -n 's/.*mean loss //p')
  examples=$(sed -n 's/.* \([0-9]*\) examples$/\1/p' "$tmp/out" | head -1)
  timeout 120 tools/launch 1 "$B/lc0_adam" --hidden 16 --layers 2 --context 3 --init "$tmp/x-lc4-4/c.st" \
    --batch "$examples" --steps 1 --lr 1e-9 --sample 0 --log-every 0 --loss-log "$tmp/pt.log" >/dev/null 2>&1
  check "consolidate's model in PyTorch: lc0's loss ($py)" \
    awk -v p="$py" '{ d = $2 - p; exit !(p != "" && (d < 0 ? -d : d) <= 1e-6) }' "$tmp/pt.log"
else
  echo "skipped: consolidate's model in PyTorch (no torch here)"
fi
expect 1 2 "usage: consolidate DIR OUT.safetensors" "$B/consolidate" "$tmp/c4"
expect 1 2 "is incomplete: it has no manifest" "$B/consolidate" "$tmp/crash/step-00000012" "$tmp/o.st"
check "consolidate makes no output from a bad checkpoint" test ! -e "$tmp/o.st"

finish test_checkpoint
