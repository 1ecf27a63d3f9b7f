#!/bin/sh
# Hostile input and faults, one check per class of issue 14: paths that are not
# regular files (a FIFO would block an open), outputs that clash with inputs,
# refused runs that must leave no debris, write errors that must keep the old
# file, long paths, non-finite models and losses, a loss scale stuck at its
# floor, a model that does not fit, a trace past its bound, a rank killed by a
# signal. Every run is bounded by a timeout: a hang fails the suite.
# usage: tests/test_faults.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. tests/expect.sh
tools/launch 1 "$BUILD/bin/lc0_adam" $small --save-model "$tmp/m.st" >/dev/null 2>&1

# no_debris DIR: nothing in DIR but what the test put there (no temporary file).
no_debris() { [ -z "$(find "$1" -name '*.tmp.*')" ]; }

# poke FILE TENSOR COUNT BYTES: writes the float BYTES (octal escapes, little
# endian) over the first COUNT elements of TENSOR in a safetensors FILE.
poke() {
  hlen=$(od -An -t u8 -N 8 "$1" | tr -d ' ')
  off=$(dd if="$1" bs=1 skip=8 count="$hlen" 2>/dev/null | grep -o "\"$2\":{[^}]*}" |
        grep -o '"data_offsets":\[[0-9]*' | grep -o '[0-9]*$')
  i=0
  while [ $i -lt "$3" ]; do printf "$4"; i=$((i + 1)); done |
    dd of="$1" bs=1 seek=$((8 + hlen + off)) conv=notrunc 2>/dev/null
}

# ------------------------------------------------------------------------------
# Paths that are not regular files are refused before anything opens them.

mkfifo "$tmp/fifo"
mkdir "$tmp/dir"
for opt in --data --init; do
  expect 2 2 "not a regular file" "$lc1" $small $opt "$tmp/fifo"
done
for opt in --save-model --loss-log --trace; do
  expect 2 2 "not a regular file" "$lc1" $small $opt "$tmp/fifo"
done
expect 2 2 "cannot write loss log '/dev/full': not a regular file" "$lc1" $small --loss-log /dev/full
expect 2 2 "cannot write model file '$tmp/dir': not a regular file" "$lc4" $small --save-model "$tmp/dir"
expect 1 2 "cannot read data file '$tmp/dir': not a regular file" "$BUILD/bin/lc0_adam" $small --data "$tmp/dir"

# ------------------------------------------------------------------------------
# An output equal to an input or to another output, however it is spelled.

ln -s m.st "$tmp/link.st"
expect 2 2 "--init and --save-model name the same file" "$lc1" $small --init "$tmp/m.st" --save-model "$tmp/./m.st"
expect 2 2 "--init and --save-model name the same file" "$lc4" $small --init "$tmp/link.st" --save-model "$tmp/m.st"
expect 2 2 "--loss-log and --trace name the same file" "$lc5" $small --loss-log "$tmp/x" --trace "$tmp/x"
expect 2 2 "name the same file" "$lc1" $small --data "$tmp/m.st" --loss-log "$tmp/m.st"

# ------------------------------------------------------------------------------
# A refused run leaves no file behind and does not touch an old one.

mkdir "$tmp/out1"
echo old >"$tmp/out1/old.log"
printf 'not a model' >"$tmp/garbage.st"
expect 2 2 "over the format's limit" "$lc4" $small --init "$tmp/garbage.st" \
  --save-model "$tmp/out1/new.st" --trace "$tmp/out1/old.log"
check "a refused run leaves no debris" test "$(ls "$tmp/out1")" = old.log
check "a refused run keeps the old trace" test "$(cat "$tmp/out1/old.log")" = old

# ------------------------------------------------------------------------------
# Write errors: a file-size limit on the ranks makes a write fail with EFBIG
# mid-run. The run stops with the reason and a non-zero status, the old file is
# kept whole, and no temporary file is left.

# limited STATUS FRAGMENT LIMIT_BYTES PROGRAM ARGS...: runs on 2 ranks, each
# started under the limit by prlimit, which mpirun starts as the rank's command
# and which becomes the program (mpirun itself cannot start under one). The
# ranks talk over TCP: Open MPI's shared-memory transport sizes a file of its
# own as it starts, past any small limit. The limit is there from the first
# write, so the verdict never depends on how fast the machine is (it once
# capped running ranks from outside, which a loaded machine stretched past
# the run's time limit).
limited() {
  want=$1 says=$2 cap=$3; shift 3
  OMPI_MCA_btl=self,tcp timeout 60 tools/launch 2 prlimit --fsize="$cap" -- "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ $rc -eq "$want" ] && [ "$(grep -c . "$tmp/err")" -eq 1 ] && grep -qF -- "$says" "$tmp/err"
  then ok=$((ok + 1))
  else
    bad=$((bad + 1))
    echo "FAIL: a write error -> exit $rc (want $want), want '$says':"
    sed 's/^/    /' "$tmp/err" | head -5
  fi
}
mkdir "$tmp/w"
echo old >"$tmp/w/l.log"
limited 1 "loss log '$tmp/w/l.log': File too large" 16384 \
  "$lc1" --hidden 8 --layers 1 --batch 12 --steps 100000 --sample 0 --log-every 0 --loss-log "$tmp/w/l.log"
check "a failed loss log keeps the old one" test "$(cat "$tmp/w/l.log")" = old
cp "$tmp/m.st" "$tmp/w/m.st"
limited 1 "model file '$tmp/w/m.st'" 131072 \
  "$lc4" --hidden 512 --layers 1 --batch 12 --steps 20 --sample 0 --log-every 0 \
  --loss-log "$tmp/w/l2.log" --save-model "$tmp/w/m.st"
check "a failed save keeps the old model" cmp -s "$tmp/m.st" "$tmp/w/m.st"
check "a failed save leaves no temporary file" no_debris "$tmp/w"

# ------------------------------------------------------------------------------
# Long paths: the message keeps the reason, whatever the path's length.

long=$(printf 'd%.0s' $(seq 200))
expect 2 2 "No such file or directory" "$lc1" $small --save-model "$tmp/$long/$long/$long/$long/$long/m.st"
expect 2 2 "File name too long" "$lc1" $small --loss-log "$tmp/$long$long.log"

# ------------------------------------------------------------------------------
# Non-finite values: a model with a NaN is refused; weights that overflow the
# forward pass stop the run at that step, naming the tensor, with no model
# written; lc5 stops when steps keep overflowing at its lowest loss scale.

cp "$tmp/m.st" "$tmp/nan.st"
poke "$tmp/nan.st" layers.1.weight 1 '\000\000\300\177'
expect 2 2 "tensor 'layers.1.weight' holds nan at element 0" "$lc1" $small --init "$tmp/nan.st"
cp "$tmp/m.st" "$tmp/big.st"
poke "$tmp/big.st" layers.0.weight 81 '\346\261\141\177'   # 3e38, 81 times
for stage in "$lc1" "$lc4"; do
  expect 2 1 "step 1: the loss is nan, and after the step's update layers.0.weight holds a value that is not finite" \
    "$stage" $small --init "$tmp/big.st" --save-model "$tmp/none.st"
done
check "a non-finite run writes no model" test ! -e "$tmp/none.st"
expect 2 1 "step 1: the loss is nan, though every parameter is finite (the forward pass overflowed)" \
  "$lc5" $small --dtype fp16 --init "$tmp/big.st"
expect 2 1 "step 10: 10 steps in a row overflowed at the static loss scale 1e+09" \
  "$lc5" $small --steps 50 --dtype fp16 --loss-scale 1e9

# ------------------------------------------------------------------------------
# Memory: the ranks of a node together against what the node has (the test
# pretends it has 1 MiB; each rank of this small run holds about 0.6 MiB), and
# a model far beyond any machine.

expect 2 2 "the model does not fit: set-up holds" env ZC_HOST_MEM_MB=1 "$lc4" $small
check "one rank fits in 1 MiB" env ZC_HOST_MEM_MB=1 timeout 60 tools/launch 1 "$lc4" $small >/dev/null
expect 2 2 "does not fit" "$lc4" --hidden 65536 --layers 64 --steps 1

# ------------------------------------------------------------------------------
# The trace: bounded per rank; what is kept is still a valid trace, and says so.

ZC_TRACE_LIMIT_KB=16 timeout 60 tools/launch 2 "$lc4" $small --steps 50 --trace "$tmp/t.json" >"$tmp/out"
check "a trace past its bound is dropped and said" grep -q "events past the bound of 16 KiB" "$tmp/out"
check "a truncated trace says so" grep -q "trace truncated" "$tmp/t.json"
check "a truncated trace is valid" "$BUILD/test/validate_trace" "$tmp/t.json" 2 >/dev/null

# ------------------------------------------------------------------------------
# A rank killed by a signal: every rank stops, and the user is told which.

timeout 60 tools/launch 3 sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then sleep 1; kill -KILL $$; fi
  exec "$0" "$@"' "$lc1" --hidden 8 --layers 1 --batch 12 --steps 1000000 --sample 0 --log-every 0 \
  >/dev/null 2>"$tmp/err"
rc=$?
check "a killed rank stops the run (exit $rc)" test $rc -ne 0 -a $rc -ne 124
check "a killed rank is named" grep -q "launch: rank 1 (node .*) died of signal 9 (Killed)" "$tmp/err"

# ------------------------------------------------------------------------------
# The planner takes whole numbers only.

expect 1 2 "--ranks 2.5: expected a whole number" "$BUILD/bin/plan" --params 1e9 --ranks 2.5
expect 1 2 "--layers 7.5: expected a whole number" "$BUILD/bin/plan" --hidden 1024 --layers 7.5 --ranks 8

# ------------------------------------------------------------------------------
# A GPU that nvidia-smi lists but that cannot be opened fails the GPU suites
# (where none opens here; with a fake nvidia-smi first on the PATH).

if ! "$BUILD/bin/lc0_adam" --device cuda $small >/dev/null 2>&1; then
  mkdir "$tmp/bin"
  printf '#!/bin/sh\necho "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)"\n' >"$tmp/bin/nvidia-smi"
  chmod +x "$tmp/bin/nvidia-smi"
  PATH="$tmp/bin:$PATH" tests/test_gpu.sh "$BUILD" >"$tmp/out" 2>&1
  check "a listed GPU that cannot be opened fails test_gpu (1, not 77: skipped)" test $? = 1
  check "and says so" grep -q "nvidia-smi lists 1 GPU(s) but none could be opened" "$tmp/out"
  if [ -x "$BUILD/test/test_kernels_cuda" ]; then
    PATH="$tmp/bin:$PATH" "$BUILD/test/test_kernels_cuda" >"$tmp/out" 2>&1
    check "a listed GPU that cannot be opened fails test_kernels_cuda (1, not 77: skipped)" test $? = 1
  fi
  # With no GPU listed, the GPU suites are skipped, which is not a pass.
  if ! command -v nvidia-smi >/dev/null 2>&1 || [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" = 0 ]; then
    tests/test_gpu.sh "$BUILD" >"$tmp/out" 2>&1
    check "no GPU: test_gpu says it is skipped (77)" test $? = 77
    if [ -x "$BUILD/test/test_kernels_cuda" ]; then
      "$BUILD/test/test_kernels_cuda" >"$tmp/out" 2>&1
      check "no GPU: test_kernels_cuda says it is skipped (77)" test $? = 77
    fi
  fi
fi

finish "faults"
