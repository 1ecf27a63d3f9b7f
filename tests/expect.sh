# Shared by the shell suites: a scratch folder ($tmp, removed on exit), the
# counters and the two checks they are made of. Source it from the top of the
# tree; a suite ends with 'finish NAME'.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok=0 bad=0

# The smallest model the suites run, and each lecture's program in the suite's
# build folder ($BUILD).
small="--hidden 8 --layers 1 --batch 12 --steps 2 --sample 0 --log-every 0"
B=${BUILD:-build}/bin
lc0=$B/lc0_adam lc1=$B/lc1_distributed_adam lc2=$B/lc2_zero1 lc3=$B/lc3_zero2 lc4=$B/lc4_zero3
lc5=$B/lc5_mixed_precision

# expect N STATUS FRAGMENT PROGRAM ARGS...: exit status and one stderr line containing FRAGMENT.
expect() {
  n=$1 want=$2 says=$3; shift 3
  timeout 60 tools/launch "$n" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  lines=$(grep -c . "$tmp/err")
  if [ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && grep -qF -- "$says" "$tmp/err"; then
    ok=$((ok + 1))
  else
    bad=$((bad + 1))
    echo "FAIL (N=$n): $* -> exit $rc (want $want), $lines stderr lines, want '$says':"
    sed 's/^/    /' "$tmp/err" | head -5
  fi
}

# check WHAT COMMAND...: the command (a test) succeeds.
check() {
  what=$1; shift
  if "$@"; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "FAIL: $what"; fi
}

# finish NAME: the tally, and the status of the suite.
finish() {
  echo "$1: $ok passed, $bad failed"
  [ "$bad" -eq 0 ]
}

# descendants PID [NAME]: the processes below PID (children, theirs, ...), or
# those of them whose name is NAME. A suite signals or limits its own ranks
# this way, never by name across the machine, where other suites run the same
# programs at the same time (tests/run.sh runs suites side by side).
descendants() {
  for c in $(pgrep -P "$1"); do
    if [ -z "${2:-}" ] || [ "$(cat "/proc/$c/comm" 2>/dev/null)" = "$2" ]; then echo "$c"; fi
    descendants "$c" "${2:-}"
  done
}
