#!/bin/sh
# make bench-collectives: lecture 1's figures (BENCHMARKS.md, lc1's README),
# all from one run on this machine:
#   1. --comm auto's file, BUILD/comm_fit: the cost model fitted at N = 4 (the
#      course's N; where the algorithms' message counts differ enough to tell
#      alpha from the rest), and the rules: at N = 2, 3, 4, 8 on one node, for
#      every collective and size, the fastest measured of Open MPI's own and
#      the algorithms written here (Open MPI's unless another leads by 10%),
#      in two of three launches;
#   2. every algorithm against Open MPI's own collectives at N = 2, 3, 4, 8
#      (more ranks than cores is fine: the model counts how many share a core),
#      16 B to 64 MiB, with the model's prediction beside each time and auto's
#      choices (ZC_COMM_FIT = the file of step 1);
#   3. N = 4 as 2 emulated nodes of 2 over a slow link (ZC_LINK, default
#      inter:20us,1GB/s): hier against the flat algorithms, and where hier
#      starts to win, measured and predicted (no rules there: the model).
# The file of step 1 is --comm auto's for every run of this build
# (BUILD/comm_fit); `fit` runs step 1 alone (make comm-fit).
# usage: tools/bench_collectives.sh [BUILD_DIR] [fit]    (RANKS="2 3 4 8", LINK=..., ARGS=... override)
set -eu
BUILD=${1:-build}
ONLY=${2:-}
cd "$(dirname "$0")/.."
RANKS=${RANKS:-2 3 4 8}
LINK=${LINK:-inter:20us,1GB/s}
ARGS=${ARGS:--b 16 -e 64M -f 4 -w 2 -n 1000 -t 0.5}
fit=$BUILD/comm_fit
candidates="mpi naive ring tree rd rabenseifner"
echo "== 1. the fit at N = 4 and the rules at N = $RANKS ($(nproc) cores here, load average $(cut -d' ' -f1 /proc/loadavg): measure on a quiet machine)"
# shellcheck disable=SC2086
tools/launch 4 "$BUILD/bin/bench_comm" $ARGS -B "$candidates" --fit "$fit" |
  sed -n '/^# the fit/p'
# The rules: each N measured in LAUNCHES launches, each writing its rules into
# a copy of the fit; a size keeps an algorithm that LAUNCHES/2 + 1 of them
# named, else Open MPI's own. With more ranks than cores the scheduler places
# the ranks anew at every launch, and which ranks share a core changes which
# algorithm wins (at N = 4, 256 KiB: the ring measured at least 10% ahead of
# Open MPI in one launch, and 0.78-0.97x its speed in the twelve after), so one
# launch's winner is not a rule.
LAUNCHES=${LAUNCHES:-3}
runs=$(mktemp -d)
trap 'rm -rf "$runs"' EXIT
for n in $RANKS; do
  r=1
  while [ "$r" -le "$LAUNCHES" ]; do
    cp "$fit" "$runs/$n.$r"
    # shellcheck disable=SC2086
    tools/launch "$n" "$BUILD/bin/bench_comm" $ARGS -B "$candidates" --rules "$runs/$n.$r" >/dev/null
    r=$((r + 1))
  done
done
{
  grep -v '^rule ' "$fit"
  echo "# rule KIND N BYTES ALGO: at N ranks on one node, ALGO is the one measured to take for a KIND of BYTES" \
       "($((LAUNCHES / 2 + 1)) of $LAUNCHES launches agreeing, else mpi; auto takes the nearest size's)"
  cat "$runs"/* | awk -v need=$((LAUNCHES / 2 + 1)) '$1 == "rule" {
      k = $2 " " $3 " " $4; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
      if (++count[k " " $5] >= need) pick[k] = $5 }
    END { for (i = 1; i <= n; i++) print "rule", order[i], (order[i] in pick) ? pick[order[i]] : "mpi" }'
} >"$fit.tmp" && mv "$fit.tmp" "$fit"
echo "# the rules (at each size the algorithm $((LAUNCHES / 2 + 1)) of $LAUNCHES launches measured fastest;" \
     "Open MPI's own where none led it by 10%, or where they disagree):"
awk '$1 == "rule" { k = $2 " at N = " $3; sep = ", "
                   if (k != last) { if (last != "") print ""; printf "#   %s:", k; last = k; sep = " " }
                   printf "%s%s %s", sep, $4, $5 } END { print "" }' "$fit"
if [ "$ONLY" = fit ]; then
  echo "written to $fit: --comm auto uses it in every run of this build (ZC_COMM_FIT overrides it)"
  exit 0
fi
for n in $RANKS; do
  echo
  echo "== 2. N = $n: every algorithm, Open MPI, auto"
  # shellcheck disable=SC2086
  ZC_COMM_FIT=$fit tools/launch "$n" "$BUILD/bin/bench_comm" $ARGS -B "mpi naive ring tree rd rabenseifner auto" -m |
    sed -n '/side by side/,$p'
done
echo
echo "== 3. N = 4 as 2 nodes of 2, ZC_LINK=$LINK"
# shellcheck disable=SC2086
ZC_LINK=$LINK ZC_COMM_FIT=$fit tools/launch 4 "$BUILD/bin/bench_comm" $ARGS -k 2 -o all_reduce \
  -B "mpi ring tree rd rabenseifner hier auto" -m | sed -n '/side by side/,$p'
