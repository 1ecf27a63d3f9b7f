#!/bin/sh
# test_gpu: every stage with --device cuda follows the same stage on the CPU,
# step by step. Runs where the build has CUDA and a GPU can be opened; anywhere
# else it says so and exits 77, which tests/run.sh counts as skipped.
#   fp32 stages: every step's loss within 1e-5 relative of the CPU run. The two
#     devices add in different orders (cuBLAS, the reductions); on the CPU,
#     rank counts that add in different orders agree within 1e-8 after 30 steps.
#   lc5 in bf16 and fp16: within 2e-3 and 1e-3, lc5's own grading tolerances.
# Several ranks share one GPU through --comm mpi (staged through host memory);
# --comm nccl runs at one rank per GPU. Training checkpoints saved from GPU
# memory resume bit for bit on the GPU and on the curve on the CPU.
# usage: tests/test_gpu.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
B=$BUILD/bin
out=$(mktemp -d) || exit 2
# TEST_GPU_KEEP=FILE.tgz: every run's output and logs kept there (a first run on a new machine).
trap '[ -n "${TEST_GPU_KEEP:-}" ] && tar -czf "$TEST_GPU_KEEP" -C "$out" . 2>/dev/null; rm -rf "$out"' EXIT
trap 'exit 143' TERM  # (stopped by a time limit: the logs are still kept)

probe=$("$B/lc0_adam" --device cuda --steps 1 --log-every 0 --sample 0 2>&1 >/dev/null)
rc=$?
if [ $rc -ne 0 ]; then
  case $probe in
    *"no usable GPU"*|*"no CUDA support"*)
      # A GPU that nvidia-smi lists but that cannot be opened is a broken setup
      # (a driver older than the build's runtime, say), not a machine without one.
      listed=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
      if [ "${listed:-0}" -gt 0 ]; then
        echo "test_gpu: FAILED, nvidia-smi lists $listed GPU(s) but none could be opened: $probe"; exit 1
      fi
      echo "test_gpu: SKIPPED, no stage ran on a GPU: $probe"; exit 77 ;;  # run.sh counts it skipped
    *) echo "test_gpu: FAILED: lc0_adam --device cuda exited $rc: $probe"; exit 1 ;;
  esac
fi
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU') || gpus=1
ARGS="--steps 30 --hidden 64 --layers 2 --batch 96 --log-every 0 --sample 0"
printf '#!/bin/sh\nNCCL_HOSTID=rank${OMPI_COMM_WORLD_RANK:-0} exec "$@"\n' >"$out/hostid.sh"  # a host id per rank
chmod +x "$out/hostid.sh"
fails=0 checks=0

# same NAME TOL LOG_A LOG_B: every step's loss within TOL relative; and where
# both runs saved their model (LOG.st), every tensor within TOL in relative L2
# distance (tests/model_diff.c; the 16-bit types' are the loss tolerances
# until a GPU run measures the real gaps, which model_diff prints).
same() {
  if [ -s "$3.st" ] && [ -s "$4.st" ]; then
    checks=$((checks + 1))
    if "$BUILD/test/model_diff" "$3.st" "$4.st" "$2" >"$out/diff" 2>&1; then echo "ok   $1: model $(tail -n 1 "$out/diff")"
    else echo "FAIL $1: model $(tail -n 1 "$out/diff")"; fails=$((fails + 1)); fi
  fi
  checks=$((checks + 1))
  worst=$(paste "$3" "$4" | awk 'NF != 4 || $1 != $3 { print "mismatch"; exit }
    { d = $2 - $4; if (d < 0) d = -d; r = d / ($4 < 0 ? -$4 : $4); if (r > w) w = r }
    END { if (NR == 0) print "empty"; else printf "%.3g\n", w }')
  ok=$(echo "$worst $2" | awk '{ print ($1 ~ /^[0-9.e+-]+$/ && $1 <= $2) ? 1 : 0 }')
  if [ "$ok" = 1 ]; then echo "ok   $1: worst relative loss gap $worst (allowed $2)"
  else echo "FAIL $1: worst relative loss gap $worst (allowed $2)"; fails=$((fails + 1)); fi
}

# run NAME N STAGE ARGS...: the loss log of one run, or a failure.
run() {
  name=$1 n=$2 stage=$3; shift 3
  # shellcheck disable=SC2086
  if ! tools/launch "$n" ${WRAP:-} "$B/$stage" $ARGS --loss-log "$out/$name" --save-model "$out/$name.st" "$@" \
       >"$out/$name.out" 2>&1; then
    echo "FAIL $name: $stage exited non-zero"; tail -3 "$out/$name.out"; fails=$((fails + 1))
    : >"$out/$name"
  fi
}

run lc0.cpu 1 lc0_adam
run lc0.gpu 1 lc0_adam --device cuda
same "lc0_adam gpu" 1e-5 "$out/lc0.gpu" "$out/lc0.cpu"
for s in lc1_distributed_adam lc2_zero1 lc3_zero2 lc4_zero3; do
  run "$s.cpu" 2 "$s"
  run "$s.gpu" 2 "$s" --device cuda --comm mpi
  same "$s gpu N=2 mpi" 1e-5 "$out/$s.gpu" "$out/$s.cpu"
  run "$s.cpu1" 1 "$s"
  run "$s.nccl1" 1 "$s" --device cuda --comm nccl
  same "$s gpu N=1 nccl" 1e-5 "$out/$s.nccl1" "$out/$s.cpu1"
  if [ "$gpus" -ge 2 ]; then
    run "$s.nccl" 2 "$s" --device cuda --comm nccl
    same "$s gpu N=2 nccl" 1e-5 "$out/$s.nccl" "$out/$s.cpu"
  fi
  # NCCL at N = 2 and 3 on one GPU: each rank its own host id, so NCCL takes
  # them for separate hosts (socket transport over loopback) and in-place
  # offsets, uneven counts and 16-bit sums really run through it.
  for n in 2 3; do
    [ $n = 2 ] || run "$s.cpu$n" $n "$s"
    ref=$out/$s.cpu$n; [ $n = 2 ] && ref=$out/$s.cpu
    WRAP=$out/hostid.sh run "$s.hostid$n" $n "$s" --device cuda --comm nccl
    same "$s gpu N=$n nccl, one GPU, a host id per rank" 1e-5 "$out/$s.hostid$n" "$ref"
  done
done
# The options that change what runs where, on GPU buffers at N = 3 (uneven
# shards) through the host backends: accumulation with clipping and small
# buckets (lc3), no prefetch (lc4), the hand-written ring (lc2).
for v in "lc3_zero2:--accum 2 --clip 0.5 --bucket-mb 0.01" "lc4_zero3:--prefetch 0 --clip 0.5" \
         "lc2_zero1:--comm ring" "lc4_zero3:--comm ring"; do
  s=${v%%:*} opts=${v#*:} tag=$(echo "$v" | tr -c 'a-z0-9\n' _)
  # shellcheck disable=SC2086
  run "$tag.cpu" 3 "$s" $opts
  case $opts in *--comm*) ;; *) opts="$opts --comm mpi" ;; esac
  # shellcheck disable=SC2086
  run "$tag.gpu" 3 "$s" $opts --device cuda
  same "$s $opts gpu N=3" 1e-5 "$out/$tag.gpu" "$out/$tag.cpu"
done
# fp16 with dynamic loss scaling through NCCL, a host id per rank.
run lc5.fp16.cpu 2 lc5_mixed_precision --dtype fp16
WRAP=$out/hostid.sh run lc5.fp16.nccl 2 lc5_mixed_precision --dtype fp16 --device cuda --comm nccl
same "lc5_mixed_precision fp16 gpu N=2 nccl" 1e-3 "$out/lc5.fp16.nccl" "$out/lc5.fp16.cpu"
# Save on the GPU, start again from it on the GPU and on the CPU: the same first loss.
run lc4.save 2 lc4_zero3 --device cuda --comm mpi --save-model "$out/gpu.st"
run lc4.init.gpu 2 lc4_zero3 --device cuda --comm mpi --init "$out/gpu.st"
run lc4.init.cpu 2 lc4_zero3 --init "$out/gpu.st"
same "lc4_zero3 --init of a model saved on the GPU" 1e-5 "$out/lc4.init.gpu" "$out/lc4.init.cpu"
# Training checkpoints saved from GPU memory: resumed on the GPU, the same run
# bit for bit (loss log and model); resumed on the CPU at N = 3, the same curve.
for sc in lc4_zero3::1e-5 "lc5_mixed_precision:--dtype bf16:2e-3"; do
  st=${sc%%:*} rest=${sc#*:}
  o=${rest%%:*} tol=${rest#*:}
  # shellcheck disable=SC2086
  run "$st.ck.full" 2 "$st" $o --device cuda --comm mpi --save-model "$out/$st.full.st"
  # shellcheck disable=SC2086
  run "$st.ck.a" 2 "$st" $o --device cuda --comm mpi --steps 15 --save-dir "$out/$st.ck"
  # shellcheck disable=SC2086
  run "$st.ck.b" 2 "$st" $o --device cuda --comm mpi --resume "$out/$st.ck" --save-model "$out/$st.res.st"
  checks=$((checks + 1))
  if cat "$out/$st.ck.a" "$out/$st.ck.b" | cmp -s - "$out/$st.ck.full" && cmp -s "$out/$st.full.st" "$out/$st.res.st"
  then echo "ok   $st: a checkpoint saved on the GPU resumes there bit for bit"
  else echo "FAIL $st: the run resumed on the GPU differs from the uninterrupted one"; fails=$((fails + 1)); fi
  # shellcheck disable=SC2086
  run "$st.ck.cpu" 3 "$st" $o --resume "$out/$st.ck"
  tail -n 15 "$out/$st.ck.full" >"$out/$st.ck.tail"
  same "$st: the GPU's checkpoint resumed on the CPU at N=3" "$tol" "$out/$st.ck.cpu" "$out/$st.ck.tail"
done
# bench_comm on GPU buffers, NCCL and the host backends: no wrong element in
# any row (size count type redop time algbw busbw #wrong calls).
checks=$((checks + 1))
if tools/launch 2 "$out/hostid.sh" "$BUILD/bin/bench_comm" -d cuda -B 'nccl mpi ring naive' -b 1K -e 1M -f 8 -w 1 -n 2 \
     >"$out/bench" 2>&1 &&
   awk '$1 ~ /^[0-9]+$/ && NF == 9 { rows++; if ($8 != 0) bad++ } END { exit !(rows > 0 && bad == 0) }' "$out/bench"; then
  echo "ok   bench_comm -d cuda: every backend, every size, #wrong 0"
else echo "FAIL bench_comm -d cuda"; tail -5 "$out/bench"; fails=$((fails + 1)); fi

# Every collective on GPU buffers, NCCL's too, element by element: fp32, bf16,
# fp16, in and out of place, uneven sizes (tests/test_comm_device.c), at N = 1
# and, one host id per rank, at 2 and 3.
for n in 1 2 3; do
  checks=$((checks + 1))
  if COMM_TEST_DEVICE=cuda tools/launch "$n" "$out/hostid.sh" "$BUILD/test/test_comm_device" >"$out/coll" 2>&1; then
    echo "ok   every collective on GPU buffers, every backend with NCCL, N=$n"
  else echo "FAIL collectives on GPU buffers, N=$n"; tail -5 "$out/coll"; fails=$((fails + 1)); fi
done
# lc5 in bf16 over NCCL at N = 2, and a checkpoint saved over NCCL resumed
# there bit for bit.
run lc5.bf16.cpu2 2 lc5_mixed_precision --dtype bf16
WRAP=$out/hostid.sh run lc5.bf16.nccl2 2 lc5_mixed_precision --dtype bf16 --device cuda --comm nccl
same "lc5_mixed_precision bf16 gpu N=2 nccl" 2e-3 "$out/lc5.bf16.nccl2" "$out/lc5.bf16.cpu2"
WRAP=$out/hostid.sh run lc5.nccl.ck.a 2 lc5_mixed_precision --dtype bf16 --device cuda --comm nccl --steps 15 \
  --save-dir "$out/lc5.nccl.ck"
WRAP=$out/hostid.sh run lc5.nccl.ck.b 2 lc5_mixed_precision --dtype bf16 --device cuda --comm nccl \
  --resume "$out/lc5.nccl.ck"
checks=$((checks + 1))
if cat "$out/lc5.nccl.ck.a" "$out/lc5.nccl.ck.b" | cmp -s - "$out/lc5.bf16.nccl2" &&
   cmp -s "$out/lc5.nccl.ck.b.st" "$out/lc5.bf16.nccl2.st"; then
  echo "ok   lc5 bf16: a checkpoint saved over NCCL resumes there bit for bit"
else echo "FAIL lc5 bf16: the run resumed over NCCL differs from the uninterrupted one"; fails=$((fails + 1)); fi

# A NCCL failure (injected by tests/nccl_fault.c: streams never finish, NCCL
# reports a remote error) stops every rank within seconds, naming the
# collective, where a blocking wait would hang forever.
if [ -f "$BUILD/test/libnccl_fault.so" ]; then
  checks=$((checks + 1))
  t0=$(date +%s)
  LD_PRELOAD=$(cd "$BUILD" && pwd)/test/libnccl_fault.so NCCL_FAULT_AFTER=200 timeout 120 tools/launch 2 "$out/hostid.sh" \
    "$B/lc1_distributed_adam" $ARGS --device cuda --comm nccl >/dev/null 2>"$out/fault.err"
  rc=$? took=$(($(date +%s) - t0))
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $took -lt 60 ] &&
     grep -qE "nccl [a-z_]+ of [0-9]+ [a-z0-9]+ elements failed: .*the communicator was aborted" "$out/fault.err"; then
    echo "ok   a NCCL failure stops every rank in $took s, naming the collective"
  else echo "FAIL a NCCL failure: exit $rc after $took s"; head -3 "$out/fault.err"; fails=$((fails + 1)); fi
fi

# Without host ids, ranks on one GPU are refused with one line, exit 2.
if [ "$gpus" -lt 2 ]; then
  checks=$((checks + 1))
  tools/launch 2 "$B/lc2_zero1" $ARGS --device cuda --comm nccl >/dev/null 2>"$out/share.err"
  rc=$?
  if [ $rc -eq 2 ] && [ "$(grep -c . "$out/share.err")" -eq 1 ] && grep -q "share GPU" "$out/share.err"; then
    echo "ok   two ranks on one GPU with --comm nccl: refused"
  else echo "FAIL two ranks on one GPU with --comm nccl: exit $rc"; cat "$out/share.err"; fails=$((fails + 1)); fi
fi
for dt in fp32:1e-5 bf16:2e-3 fp16:1e-3; do
  d=${dt%%:*} tol=${dt#*:}
  run "lc5.$d.cpu" 2 lc5_mixed_precision --dtype "$d"
  run "lc5.$d.gpu" 2 lc5_mixed_precision --dtype "$d" --device cuda --comm mpi
  same "lc5_mixed_precision $d gpu N=2 mpi" "$tol" "$out/lc5.$d.gpu" "$out/lc5.$d.cpu"
done
run lc5.nccl1 1 lc5_mixed_precision --dtype bf16 --device cuda --comm nccl
run lc5.cpu1 1 lc5_mixed_precision --dtype bf16
same "lc5_mixed_precision bf16 gpu N=1 nccl" 2e-3 "$out/lc5.nccl1" "$out/lc5.cpu1"
[ "$gpus" -ge 2 ] || echo "note: one GPU, so NCCL ran at N = 2 and 3 with a host id per rank"

echo "test_gpu: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
