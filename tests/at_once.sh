# How many runs a test script starts at once; sourced by tests/run.sh,
# tests/trails.sh and tests/grader/selftest.sh.
# at_once WHO NAME: prints the setting NAME if it is set (a whole number, at
# least 1; else WHO says so and the status is 2), else the machine's cores, at
# most 4: runs of several ranks each, more of them than cores, only slow one
# another (each rank yields as it waits), and four keeps the suites' time
# limits, measured on two cores, meaningful on a larger machine.
at_once() {
  eval "n=\${$2:-}"
  if [ -z "$n" ]; then
    n=$(nproc 2>/dev/null || echo 1)
    [ "$n" -le 4 ] || n=4
  fi
  case $n in *[!0-9]* | 0*) echo "$1: $2 must be a whole number, at least 1 (got '$n')" >&2; return 2 ;; esac
  echo "$n"
}
