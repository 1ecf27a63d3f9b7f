#!/bin/sh
# Installs the Debian packages the course needs, only those missing (procps:
# pgrep, which tests/test_faults.sh uses to find the ranks; strace, with which
# tests/test_hostile.sh checks the order of fsync and rename; python3-venv,
# for the mutation tool's virtual environment, tests/grader/mutation_venv.sh).
# As root it runs apt-get itself; otherwise it prints the exact command and
# fails, so `make` stops before a confusing compile error.
set -eu

PKGS="openmpi-bin libopenmpi-dev check libsubunit-dev libopenblas-dev libdnnl-dev libxxhash-dev libjansson-dev pkg-config wamerican gnuplot-nox procps strace python3-venv"

# One query for them all: every make target asks, and a query per package
# took a third of a second each time.
# shellcheck disable=SC2086
installed=" $(dpkg-query -W -f='${Package} ${Status}\n' $PKGS 2>/dev/null |
              awk '$2 == "install" && $3 == "ok" && $4 == "installed" { print $1 }' | tr '\n' ' ')"
missing=""
for p in $PKGS; do
  case $installed in *" $p "*) ;; *) missing="$missing $p" ;; esac
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
