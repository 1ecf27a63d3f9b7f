#!/bin/sh
# tools/offline_pack.sh and tools/offline_run.sh with careless and hostile
# input, without a network: apt-get is replaced by one of the suite's own that
# makes each package asked for as a small valid .deb (or fails, as a download
# with no network does). The pack never replaces what is not a pack (the
# build, the tree, someone's folder), a failed pack leaves the earlier one as
# it was, offline_run refuses a pack that is not whole before it writes
# anything, and it runs the pack's programs where they are: the tree's build
# folder is never written.
# usage: tests/test_offline.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. tests/expect.sh
command -v dpkg-deb >/dev/null && command -v apt-get >/dev/null ||
  { echo "test_offline: SKIPPED: needs Debian's dpkg-deb and apt-get"; exit 77; }
command -v gnuplot-nox >/dev/null || command -v gnuplot >/dev/null ||
  { echo "test_offline: SKIPPED: gnuplot is not installed (make deps installs it)"; exit 77; }

# The suite's apt-get: "download -q PKG..." makes PKG_1.0_all.deb for each,
# in the current folder; with APT_FAIL set it fails as apt-get does offline.
mkdir -p "$tmp/bin"
cat >"$tmp/bin/apt-get" <<'EOF'
#!/bin/sh
[ "$1" = download ] || { echo "apt-get (test_offline's): only download" >&2; exit 100; }
shift
if [ -n "${APT_FAIL:-}" ]; then echo "E: Failed to fetch http://deb.debian.org/...: Temporary failure resolving" >&2; exit 100; fi
for p; do
  case $p in -*) continue ;; esac
  d=$(mktemp -d) && mkdir -p "$d/DEBIAN" "$d/usr/share/doc/$p" && echo "$p" >"$d/usr/share/doc/$p/NAME" &&
    printf 'Package: %s\nVersion: 1.0\nArchitecture: all\nMaintainer: test <t@t>\nDescription: test\n' "$p" \
      >"$d/DEBIAN/control" && dpkg-deb --build "$d" "./${p}_1.0_all.deb" >/dev/null && rm -rf "$d" || exit 100
done
EOF
chmod +x "$tmp/bin/apt-get"
pack() { PATH=$tmp/bin:$PATH timeout 300 tools/offline_pack.sh "$BUILD" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
# refused FRAGMENT PACK_DIR: offline_pack exits 2 with one line holding FRAGMENT.
refused() {
  pack "$2"
  if [ $rc = 2 ] && [ "$(grep -c . "$tmp/err")" = 1 ] && grep -qF -- "$1" "$tmp/err"; then ok=$((ok + 1))
  else bad=$((bad + 1)); echo "FAIL: offline_pack $BUILD '$2' -> exit $rc, want 2 and '$1':"; sed 's/^/    /' "$tmp/err" | head -3; fi
}
# The tree's build folder, as a list of its files with their times and sizes.
build_state() { find "$BUILD/bin" "$BUILD/test" -maxdepth 1 -type f -printf '%p %T@ %s\n' | sort; }

# ------------------------------------------------------------------------------
# offline_pack: what PACK_DIR may be. The build, the tree and the folders
# above them are tried on a scratch tree of the pack tool and one program
# (so that a regression would destroy only that), at the scratch folder's own.

scratch=$tmp/up/tree
mkdir -p "$scratch/tools" "$scratch/b/bin"
cp tools/offline_pack.sh tools/shown.sh "$scratch/tools/" && cp "$BUILD/bin/lc0_adam" "$scratch/b/bin/"
echo keep >"$tmp/up/kept"
# refused_there FRAGMENT PACK_DIR: the same, with the scratch tree's tool and build.
refused_there() {
  (cd "$scratch" && PATH=$tmp/bin:$PATH timeout 60 tools/offline_pack.sh b "$2") >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ $rc = 2 ] && [ "$(grep -c . "$tmp/err")" = 1 ] && grep -qF -- "$1" "$tmp/err"; then ok=$((ok + 1))
  else bad=$((bad + 1)); echo "FAIL: offline_pack b '$2' (in the scratch tree) -> exit $rc, want 2 and '$1':"; sed 's/^/    /' "$tmp/err" | head -3; fi
}
refused_there "is the build folder or a folder above it" b
refused_there "is the build folder or a folder above it" "$scratch/b/."
refused_there "is the course's tree or a folder above it" .
refused_there "is the course's tree or a folder above it" ..
refused_there "is the course's tree or a folder above it" "$tmp/up/./tree/.."
check "  the scratch tree and what is above it are whole" \
  sh -c "test -x '$scratch/b/bin/lc0_adam' -a -f '$scratch/tools/offline_pack.sh' && grep -qx keep '$tmp/up/kept'"
mkdir -p "$tmp/mine" && echo "my notes" >"$tmp/mine/notes.txt"
refused "holds files that are not a pack" "$tmp/mine"
check "  whose files are kept" grep -qx "my notes" "$tmp/mine/notes.txt"
echo "a file" >"$tmp/afile"
refused "is not a folder" "$tmp/afile"
ln -s "$tmp/mine" "$tmp/alink"
refused "is not a folder" "$tmp/alink"
check "  nothing made beside them" sh -c "! ls '$tmp' | grep -q '\.new\.'"

# A pack, then a failed download over it: the earlier pack stays whole.
pack "$tmp/pack"
check "a pack is made (exit $rc: $(tail -n 1 "$tmp/err" "$tmp/out" | tr '\n' ' '))" test "$rc" = 0 -a -f "$tmp/pack/PACKED"
check "  with its packages and programs" sh -c "ls '$tmp/pack/debs' | grep -q '\.deb$' && test -x '$tmp/pack/build/bin/lc0_adam'"
echo mark >"$tmp/pack/earlier"
APT_FAIL=1 pack "$tmp/pack"
check "a download that fails: offline_pack fails (exit $rc) saying so" \
  sh -c "[ $rc = 1 ] && grep -q 'apt-get download failed' '$tmp/err'"
check "  the earlier pack as it was" sh -c "test -f '$tmp/pack/earlier' -a -f '$tmp/pack/PACKED' -a -x '$tmp/pack/build/bin/lc0_adam'"
check "  and nothing left beside it" sh -c "! ls '$tmp' | grep -q '^pack\.new\.'"
pack "$tmp/pack"
check "an earlier pack is replaced by a new one (exit $rc)" sh -c "[ $rc = 0 ] && test ! -e '$tmp/pack/earlier'"

# ------------------------------------------------------------------------------
# offline_run: a pack that is not whole is refused before anything is written.

run_offline() { timeout 120 tools/offline_run.sh "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
mkdir -p "$tmp/empty"
run_offline "$tmp/empty" "$tmp/o1" 60 facts
check "an empty pack: refused in one line, exit 2 ($(head -n 1 "$tmp/err"))" \
  sh -c "[ $rc = 2 ] && [ \$(grep -c . '$tmp/err') = 1 ] && grep -q 'is not a whole pack' '$tmp/err'"
check "  and no SUMMARY written" test ! -e "$tmp/o1/SUMMARY"
cp -r "$tmp/pack" "$tmp/partial" && rm -f "$tmp"/partial/debs/*.deb
run_offline "$tmp/partial" "$tmp/o2" 60 facts
check "a pack without its packages: refused ($(head -n 1 "$tmp/err"))" \
  sh -c "[ $rc = 2 ] && grep -q 'not a whole pack (no debs/\*.deb)' '$tmp/err' && test ! -e '$tmp/o2/SUMMARY'"
run_offline "$tmp/pack" "$tmp/afile" 60 facts
check "an OUT_DIR that is a file: refused" sh -c "[ $rc = 2 ] && grep -q 'is not a folder' '$tmp/err' && grep -qx 'a file' '$tmp/afile'"

# A whole pack: its programs run from it; the tree's build is not touched.
before=$(build_state)
run_offline "$tmp/pack" "$tmp/o3" 60 facts '*'
check "a whole pack runs its steps (exit $rc), each in SUMMARY" grep -q "^facts: " "$tmp/o3/SUMMARY"
check "  a step named '*' is one unknown step, not a file pattern" grep -qx "\*: no such step .*" "$tmp/o3/SUMMARY"
check "  and the tree's build folder is as it was" test "$(build_state)" = "$before"
finish test_offline
