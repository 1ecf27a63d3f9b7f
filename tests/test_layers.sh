#!/bin/sh
# The floors of common/: each module's object may use only symbols defined by
# modules listed before it in the Makefile's COMMON (the ground first; the build
# writes its list to BUILD/modules), so no
# module calls a higher one and nothing loops. Read from the compiled objects
# (nm), so a call hidden behind a macro counts too. Also: no stage and no tool
# includes a module's private backend interface.
# usage: tests/test_layers.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
[ -f "$BUILD/modules" ] || { echo "FAIL: $BUILD/modules missing (build first)"; exit 1; }
modules=$(cat "$BUILD/modules")
obj=$BUILD/obj/common
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0

# Who defines what: "symbol module" for every global a module defines.
for m in $modules; do
  [ -f "$obj/$m.o" ] || { echo "FAIL: $obj/$m.o missing (build first)"; exit 1; }
  nm -g --defined-only "$obj/$m.o" | awk -v m="$m" 'NF == 3 { print $3, m }'
done | sort >"$tmp/defs"

floor=0
for m in $modules; do
  floor=$((floor + 1))
  echo "$m $floor" >>"$tmp/floors"
done

for m in $modules; do
  mine=$(awk -v m="$m" '$1 == m { print $2 }' "$tmp/floors")
  nm -u "$obj/$m.o" | awk '{ print $NF }' | sort -u >"$tmp/uses"
  join "$tmp/uses" "$tmp/defs" | while read -r sym owner; do
    [ "$owner" = "$m" ] && continue
    theirs=$(awk -v m="$owner" '$1 == m { print $2 }' "$tmp/floors")
    if [ "$theirs" -gt "$mine" ]; then
      echo "FAIL: $m (floor $mine) calls $sym of $owner (floor $theirs): a call upward"
      echo x >>"$tmp/upward"
    fi
  done
done
[ -f "$tmp/upward" ] && bad=1

# comm_backend.h is what the backends implement, not what stages call.
if grep -l 'comm_backend\.h' lc*/*.c tools/*.c 2>/dev/null | grep -q .; then
  echo "FAIL: a stage or tool includes comm_backend.h (use comm.h)"
  bad=1
fi

n=$(echo $modules | wc -w)
if [ $bad -eq 0 ]; then echo "layers of common/: $n modules, every call goes down"; fi
exit $bad
