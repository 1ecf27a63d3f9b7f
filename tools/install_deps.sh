#!/bin/sh
# Installs the Debian packages the course needs, only those missing (procps:
# pgrep, which tests/test_faults.sh uses to find the ranks; strace, with which
# tests/test_hostile.sh checks the order of fsync and rename; python3-venv,
# for the mutation tool's virtual environment, tests/grader/mutation_venv.sh).
# As root it runs apt-get itself; otherwise it prints the exact command and
# fails, so `make` stops before a confusing compile error.
set -eu

PKGS="openmpi-bin libopenmpi-dev check libsubunit-dev libopenblas-dev libdnnl-dev libxxhash-dev libjansson-dev pkg-config wamerican gnuplot-nox procps strace python3-venv"

missing=""
for p in $PKGS; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
  echo "missing Debian packages:$missing" >&2
  echo "run as root:  apt-get update && $cmd" >&2
  exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
