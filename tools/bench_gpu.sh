#!/bin/sh
# bench_gpu (make bench-gpu): the GPU figures. The fused Adam kernel against a
# copy of the same bytes (bench_adam, 64M parameters), then lc0 in fp32 and lc5
# in bf16 and fp32 through NCCL, lc5 in bf16 through --comm mpi (the cost of
# staging through host memory), and lc5 with the memory pool handing memory
# back at every sync (ZC_POOL_RELEASE=1), on a model big enough to time
# (GPU_MODEL: the options, default hidden 4096, 8 layers, batch 4096, 30 steps).
# Each prints its progress lines and summary. tools/offline_run.sh runs it too.
# usage: tools/bench_gpu.sh [BUILD_DIR]
set -eu
set -f  # GPU_MODEL's words are options, never file patterns
BUILD=${1:-build}
model=${GPU_MODEL:---hidden 4096 --layers 8 --batch 4096 --steps 30 --log-every 10 --sample 0}
"$BUILD/bin/bench_adam" -d cuda -p 67108864 -n 50
for run in "lc0_adam" "lc5_mixed_precision --dtype bf16 --comm nccl" "lc5_mixed_precision --dtype fp32 --comm nccl" \
    "lc5_mixed_precision --dtype bf16 --comm mpi"; do
  echo "== $run --device cuda $model"
  # shellcheck disable=SC2086
  "$BUILD"/bin/$run --device cuda $model | grep -E '^step|^summary'
done
echo "== lc5_mixed_precision --dtype bf16 --comm nccl, the pool handing memory back at every sync (ZC_POOL_RELEASE=1)"
# shellcheck disable=SC2086
ZC_POOL_RELEASE=1 "$BUILD/bin/lc5_mixed_precision" --dtype bf16 --comm nccl --device cuda $model | grep -E '^step|^summary'
