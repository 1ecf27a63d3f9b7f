#!/bin/sh
# The mutation tool the grader is measured with (universalmutator, from PyPI),
# in a virtual environment of the build: BUILD/venv. Installed once, pinned;
# prints the path of its `mutate` command.
# usage: tests/grader/mutation_venv.sh [BUILD_DIR]
set -eu
BUILD=${1:-build}
VERSION=1.14.1
venv=$BUILD/venv
mutate=$venv/bin/mutate
if [ -x "$mutate" ] && [ "$(cat "$venv/universalmutator.version" 2>/dev/null)" = "$VERSION" ]; then
  echo "$mutate"
  exit 0
fi
rm -rf "$venv"
# Debian's own Python: its venv module comes from python3-venv (tools/install_deps.sh).
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if ! "$py" -m venv "$venv" >&2; then
  echo "mutation tool: cannot make a virtual environment in $venv ($py -m venv)" >&2
  exit 1
fi
if ! "$venv/bin/pip" install --quiet --disable-pip-version-check "universalmutator==$VERSION" >&2; then
  echo "mutation tool: pip could not install universalmutator==$VERSION from PyPI" >&2
  rm -rf "$venv"
  exit 1
fi
echo "$VERSION" >"$venv/universalmutator.version"
echo "$mutate"
