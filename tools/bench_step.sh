#!/bin/sh
# bench_step (make bench-step): each stage's step time on a GEMM-bound model
# beside its floor, the time its rank's matrix products take with the library
# the stages use and nothing else (build/bin/bench_gemm --floor: every product
# of a step timed by itself, the median of 7 rounds), N ranks' products at once
# as in the stage (they share the caches and memory: on 2 cores two at once
# run slower than one alone, BENCHMARKS.md says by how much), and beside
# PyTorch's step on
# the same model where PyTorch is installed (tools/pytorch_step.py: DDP for
# lc1, ZeroRedundancyOptimizer for lc2; gloo, one thread a rank; Debian's
# python3-torch will do).
# The model (STEP_MODEL, default --context 8 --hidden 1024 --layers 4 --batch
# 512) runs at N = STEP_N ranks (default 2), lc0 at N = 1 on the same batch
# (its floor is then twice a rank's). Steps: STEP_STEPS (default 40); the
# stages' step_ms averages steps 2 on.
# usage: tools/bench_step.sh [BUILD_DIR]
set -eu
set -f  # STEP_MODEL's words are options, never file patterns
BUILD=${1:-build}
model=${STEP_MODEL:---context 8 --hidden 1024 --layers 4 --batch 512}
n=${STEP_N:-2}
steps=${STEP_STEPS:-40}
cd "$(dirname "$0")/.."
opt() {  # opt NAME DEFAULT: the value of --NAME in the model's options
  echo "$model" | awk -v o="--$1" -v d="$2" '{ for (i = 1; i < NF; i++) if ($i == o) { print $(i + 1); exit } print d }'
}
context=$(opt context 5) hidden=$(opt hidden 128) layers=$(opt layers 2) batch=$(opt batch 384)
# The build's libraries, small products/large (bench_gemm --floor takes both).
choice() { sed -n "s/^#define ZC_GEMM_$1 \"\(.*\)\"/\1/p" "$BUILD/gemm_choice.h" 2>/dev/null || true; }
small=$(choice SMALL) large=$(choice LARGE)
lib=${ZC_GEMM:-${small:-openblas}/${large:-openblas}}
# floor ROWS K: the products of a rank of ROWS examples, K ranks' at once (as
# the stage runs them: K processes sharing the machine's caches and memory),
# the slowest of the K; K = 1 is the product alone.
floor() {
  for i in $(seq "$2"); do
    "$BUILD/bin/bench_gemm" --floor "$context" "$hidden" "$layers" "$1" "$lib" >"$tmp/floor.$i" &
  done
  wait
  for i in $(seq "$2"); do cat "$tmp/floor.$i"; done | awk '$2 > m { m = $2 } END { print m }'
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
f1=$(floor "$batch" 1)
fa=$(floor $((batch / n)) 1)
fn=$fa
[ "$n" = 1 ] || fn=$(floor $((batch / n)) "$n")
torch=""  # a Python with torch: PYTHON, python3, or the system's (Debian's python3-torch)
for py in ${PYTHON:-} python3 /usr/bin/python3; do
  if "$py" -c 'import torch' 2>/dev/null; then torch=$py; break; fi
done

echo "# step times, $model, $steps steps; floor: a rank's products with $lib (build/bin/bench_gemm --floor),"
if [ -n "$torch" ]; then
  # PyTorch's CPU products go to the BLAS it was built with; Debian's is
  # OpenBLAS, whose kernels follow the processor it recognizes (on one it does
  # not, a generic one: OPENBLAS_CORETYPE picks another). Said, so that a
  # ratio is read against the library that ran.
  said=$(OPENBLAS_VERBOSE=2 "$torch" -c 'import torch; print("version", torch.__version__)' 2>&1)
  core=$(echo "$said" | sed -n 's/^Core: //p' | head -n 1)
  blas="its BLAS"; [ -z "$core" ] || blas="OpenBLAS's $core kernels"
  echo "# PyTorch $(echo "$said" | sed -n 's/^version //p'), its products on $blas"
fi
echo "# every rank's at once as in the stage (alone, one process: $(printf %.2f "$fa") ms a rank at N = $n, $(printf %.2f "$f1") ms at N = 1)"
printf '# %-34s %4s %10s %10s %7s %12s %7s\n' stage N "step(ms)" "floor(ms)" "/floor" "PyTorch(ms)" "/torch"
for run in "lc0_adam" "lc1_distributed_adam" "lc2_zero1" "lc3_zero2" "lc4_zero3" \
    "lc5_mixed_precision --dtype fp32" "lc5_mixed_precision --dtype bf16"; do
  stage=${run%% *}
  ranks=$n fl=$fn
  [ "$stage" = lc0_adam ] && ranks=1 fl=$f1
  # shellcheck disable=SC2086
  ms=$(tools/launch "$ranks" "$BUILD"/bin/$run $model --steps "$steps" --log-every 0 --sample 0 |
       sed -n 's/.* step_ms=\([0-9.]*\).*/\1/p')
  pt="-" ratio_pt="-"
  case $stage in lc1_*) what=ddp ;; lc2_*) what=zero1 ;; *) what="" ;; esac
  if [ -n "$torch" ] && [ -n "$what" ]; then
    # shellcheck disable=SC2086
    pt=$("$torch" tools/pytorch_step.py --what "$what" --ranks "$ranks" --steps "$steps" $model)
    ratio_pt=$(awk -v a="$ms" -v b="$pt" 'BEGIN { printf "%.2f", a / b }')
  fi
  printf '  %-34s %4d %10.2f %10.2f %7.2f %12s %7s\n' "$run" "$ranks" "$ms" "$fl" \
    "$(awk -v a="$ms" -v b="$fl" 'BEGIN { print a / b }')" "$pt" "$ratio_pt"
done
[ -n "$torch" ] || echo "# PyTorch is not installed here: no PyTorch column"
