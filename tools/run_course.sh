#!/bin/sh
# make run: every stage that exists, in order, with the default data: lc0 on
# one process, the distributed stages on RANKS ranks, on the CPU or, with
# DEVICE=cuda, on the GPUs: through NCCL when there are at least as many GPUs
# as ranks, else through the MPI backend's copies via host memory (ranks then
# share GPUs). Logs go to BUILD/run/; the course ends with a comparison of the
# summary lines and the words the last stage's model made up.
# usage: tools/run_course.sh [BUILD] [RANKS] [cpu|cuda]
set -eu
BUILD=${1:-build}
RANKS=${2:-4}
DEVICE=${3:-cpu}
cd "$(dirname "$0")/.."
case $RANKS in ''|*[!0-9]*|0) echo "run_course: RANKS=$RANKS: a number of ranks, 1 or more" >&2; exit 2 ;; esac
[ ${#RANKS} -le 4 ] || { echo "run_course: RANKS=$RANKS: too many ranks for one machine" >&2; exit 2; }
device="" comm=""
case $DEVICE in
  cpu) ;;
  cuda)
    device="--device cuda"
    if ! why=$("$BUILD/bin/lc0_adam" --device cuda --steps 1 --log-every 0 --sample 0 2>&1 >/dev/null); then
      echo "run_course: DEVICE=cuda: $why" >&2; exit 2
    fi
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
    if [ "${gpus:-0}" -ge "$RANKS" ]; then comm="--comm nccl"; else comm="--comm mpi"; fi
    echo "on the GPU: $gpus GPU(s) for $RANKS ranks, so $comm" ;;
  *) echo "run_course: DEVICE=$DEVICE: expected cpu or cuda" >&2; exit 2 ;;
esac
stages=${ZC_STAGES:-$(make -s --no-print-directory stages)}  # the Makefile's list
mkdir -p "$BUILD/run"
last=""
for stage in $stages; do
  [ -x "$BUILD/bin/$stage" ] || continue
  n=$RANKS; [ "$stage" = lc0_adam ] && n=1
  echo
  echo "=================== $stage ($n rank$( [ "$n" -gt 1 ] && echo s)) ==================="
  opts=$device; [ "$stage" = lc0_adam ] || opts="$opts $comm"   # lc0 has no collectives
  # --bind: each rank held to a core; make run has the machine to itself.
  # shellcheck disable=SC2086
  tools/launch --bind "$n" "$BUILD/bin/$stage" $opts --loss-log "$BUILD/run/$stage.loss" | tee "$BUILD/run/$stage.log"
  last=$stage
done

echo
echo "=================== the course so far ==================="
mkdir -p "$BUILD/plots"
"$BUILD/bin/compare" "$BUILD/run" "$BUILD/plots"
echo
echo "words made up by $last:"
grep '^samples:' "$BUILD/run/$last.log" | sed 's/^samples: *//' | tr ' ' '\n' | sed 's/^/  /'
