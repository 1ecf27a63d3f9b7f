#!/bin/sh
# offline_pack: what a bare, offline machine (a GPU node with no network, an
# air-gapped cluster) needs to run this course's built tree, in one folder:
# the Debian packages of every shared library the programs load, of Open MPI's
# runtime (mpirun, its daemon, its components and PMIx's), of gnuplot and of the word list,
# downloaded here by apt-get (no file of them is picked by hand), and the built
# programs. tools/offline_run.sh unpacks them there, into the folder, never
# into the system, and runs the GPU list. The C library, the C++ runtime and
# CUDA's own libraries (cuBLAS, NCCL, the runtime) are not packed: they must be
# the target's own, matching its driver.
# usage: tools/offline_pack.sh [BUILD_DIR] [PACK_DIR]     (default: build, BUILD_DIR/offline)
set -eu
BUILD=${1:-build}
PACK=${2:-$BUILD/offline}
cd "$(dirname "$0")/.."
[ -x "$BUILD/bin/lc0_adam" ] || { echo "offline_pack: build first (make all): no $BUILD/bin/lc0_adam" >&2; exit 2; }
command -v apt-get >/dev/null && command -v dpkg >/dev/null ||
  { echo "offline_pack: needs Debian's apt-get and dpkg (the packs are Debian packages)" >&2; exit 2; }

# PACK_DIR is new, empty or an earlier pack (its PACKED file says so): never
# a folder of other files, the build, the tree or a folder above them, which
# replacing it would destroy. The pack is made beside it and takes its place
# only when whole: a failed download leaves the earlier pack as it was.
. tools/shown.sh
refuse() { printf '%s\n' "offline_pack: PACK_DIR '$(shown "$PACK")' $*" >&2; exit 2; }
pack_abs=$(realpath -m -- "$PACK")
above() { case "$1/" in "${pack_abs%/}"/*) return 0 ;; esac; return 1; }  # $1 is PACK_DIR or below it
above "$(pwd -P)" && refuse "is the course's tree or a folder above it: give a folder of its own"
above "$(realpath -m -- "$BUILD")" && refuse "is the build folder or a folder above it: give a folder of its own"
if [ -L "$PACK" ] || { [ -e "$PACK" ] && [ ! -d "$PACK" ]; }; then
  refuse "is not a folder: give a new or empty one, or an earlier pack"
fi
[ -d "$PACK" ] && [ -n "$(ls -A "$PACK")" ] && [ ! -f "$PACK/PACKED" ] &&
  refuse "holds files that are not a pack: give a new or empty folder, or an earlier pack"
mkdir -p "$(dirname "$pack_abs")" || exit 2
new=$(mktemp -d "$pack_abs.new.XXXXXX") || { printf '%s\n' "offline_pack: cannot make a folder beside '$(shown "$PACK")'" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$new"' EXIT
final=$PACK PACK=$new
mkdir -p "$PACK/debs" "$PACK/build/bin" "$PACK/build/test"

# Everything that loads shared libraries: the programs, Open MPI's launcher and
# daemon and every component they may open.
ompi_lib=$(ompi_info --path libdir --parsable 2>/dev/null | sed -n 's/^path:libdir://p')
ompi_pkglib=$(ompi_info --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p')
[ -d "$ompi_pkglib" ] || { echo "offline_pack: Open MPI's components not found (ompi_info)" >&2; exit 2; }
pmix_plugins=$(dpkg -L libpmix2 2>/dev/null | grep '/pmix/.*\.so$' || true)
gpu_tests="test_kernels_cuda test_comm_device model_diff libnccl_fault.so"  # what tests/test_gpu.sh runs
# gnuplot draws make run's plots (tools/compare runs it).
gnuplot=$(readlink -f "$(command -v gnuplot-nox || command -v gnuplot || echo /nonexistent)")
[ -x "$gnuplot" ] || { echo "offline_pack: gnuplot is not installed here (make deps installs gnuplot-nox)" >&2; exit 2; }
loaders="$BUILD/bin/* $(for t in $gpu_tests; do echo "$BUILD/test/$t"; done) $(command -v orterun) $(command -v orted) $ompi_pkglib/*.so $pmix_plugins $gnuplot"
for f in $loaders; do
  [ -f "$f" ] || continue
  ldd "$f" 2>/dev/null | awk '$3 ~ /^\// { print $3 }'
done | sort -u >"$tmp/libs"
# The package of each (files not from a Debian package, CUDA's, are left out).
while read -r lib; do
  dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null || true
done <"$tmp/libs" | cut -d: -f1 | sort -u >"$tmp/pkgs"
# Open MPI's runtime and data, PMIx's plugins, the word list, gnuplot; not the C
# library, the C++ runtime or the GCC runtime: the target's own must be used.
{ cat "$tmp/pkgs"; echo openmpi-bin; echo openmpi-common; echo libopenmpi3; echo libpmix2; echo wamerican; echo gnuplot-nox; } |
  grep -vxE 'libc6|libstdc\+\+6|libgcc-s1' | sort -u >"$PACK/packages"
(cd "$PACK/debs" && xargs apt-get download -q <"../packages") >"$tmp/log" 2>&1 ||
  { echo "offline_pack: apt-get download failed:" >&2; tail -n 5 "$tmp/log" >&2; exit 1; }

# The built programs the GPU list runs (no rebuild there: no compiler, Check,
# Jansson or xxHash headers are needed).
cp "$BUILD"/bin/* "$PACK/build/bin/"
for t in $gpu_tests; do [ -f "$BUILD/test/$t" ] && cp "$BUILD/test/$t" "$PACK/build/test/"; done
cp "$BUILD/config" "$BUILD/modules" "$PACK/build/" 2>/dev/null || true
make -s --no-print-directory stages >"$PACK/stages"  # the course's stages, in order (no make there)
{
  echo "packed $(date -u +%Y-%m-%dT%H:%MZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(uname -m)"
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "build: $(cat "$BUILD/config")"
} >"$PACK/PACKED"
summary="$(wc -l <"$PACK/packages") packages ($(du -sh "$PACK/debs" | cut -f1)), the built programs ($(du -sh "$PACK/build" | cut -f1))"
# The whole pack takes the old one's place (an earlier pack, or nothing).
rm -rf "$final" && mv "$new" "$final" || { printf '%s\n' "offline_pack: cannot put the pack at '$(shown "$final")'" >&2; exit 1; }
echo "offline_pack: $final: $summary; run there: tools/offline_run.sh $final OUT_DIR [SECONDS]"
