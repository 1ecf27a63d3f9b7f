#!/bin/sh
# offline_rehearsal: tools/offline_pack.sh and tools/offline_run.sh tried on a
# machine as bare as an offline GPU node can be: a minimal Debian made by
# debootstrap (no Open MPI, OpenBLAS, Check, Jansson, xxHash or word list, no
# network used inside it), with the CUDA toolkit's folder mounted in as the
# GPU node would have it. The pack's mpirun must train lc2 at N = 2 on the
# CPU, and the GPU steps must end as they end where no GPU opens: the kernels
# and test_gpu skipped (77), lc0 --device cuda refused with its reason; make
# run's course runs on the CPU, its plots drawn by the pack's gnuplot. Not
# part of make test: debootstrap and apt-get download need Debian's mirror
# (about 2 minutes the first time; the root is kept in BUILD/bare).
# usage: tests/offline_rehearsal.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. tests/expect.sh
[ "$(id -u)" = 0 ] || { echo "offline_rehearsal: SKIPPED: needs root (chroot)"; exit 77; }
command -v debootstrap >/dev/null || { echo "offline_rehearsal: SKIPPED: debootstrap is not installed"; exit 77; }
root=$(pwd)/$BUILD/bare
if [ ! -x "$root/bin/bash" ]; then
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$tmp/debootstrap" 2>&1 ||
    { echo "offline_rehearsal: debootstrap failed:"; tail -n 3 "$tmp/debootstrap"; exit 1; }
fi
tools/offline_pack.sh "$BUILD" "$BUILD/offline" || exit 1

rm -rf "$root/zc" && mkdir -p "$root/zc/build"
git ls-files -co --exclude-standard | tar cf - -T - | tar xf - -C "$root/zc"  # what a copy of the working tree holds
cp -a "$BUILD/offline" "$root/zc/build/"
mounted=""
bind() { mkdir -p "$root/$2" && mount "$@" 2>/dev/null && mounted="$root/$2 $mounted"; }
cleanup() { for m in $mounted; do umount "$m"; done; rm -rf "$tmp"; }
trap cleanup EXIT
mount --bind /proc "$root/proc" && mounted="$root/proc"
mount --bind /sys "$root/sys" && mounted="$root/sys $mounted"
mount --bind /dev "$root/dev" && mounted="$root/dev $mounted"
mount -t tmpfs tmpfs "$root/dev/shm" && mounted="$root/dev/shm $mounted"
mount -t tmpfs tmpfs "$root/tmp" && mounted="$root/tmp $mounted"
cuda=$(readlink -f /usr/local/cuda 2>/dev/null)
if [ -d "$cuda" ]; then
  mkdir -p "$root/usr/local/cuda" && mount --bind "$cuda" "$root/usr/local/cuda" && mounted="$root/usr/local/cuda $mounted"
fi

check "the bare root has no Open MPI of its own" sh -c "! chroot '$root' sh -c 'command -v mpirun orted; ls /usr/lib/x86_64-linux-gnu | grep -q libmpi'"
check "nor a gnuplot" sh -c "! chroot '$root' sh -c 'command -v gnuplot gnuplot-nox'"
chroot "$root" /bin/bash -c 'cd /zc && tools/offline_run.sh build/offline /zc/out 540 facts mpi kernels smoke test_gpu course' \
  >"$tmp/run" 2>&1
s=$root/zc/out/SUMMARY
check "facts ok" grep -q "^facts: ok" "$s"
check "the pack's mpirun trains lc2 at N = 2" grep -q "^mpi: ok" "$s"
check "and the program's summary line came back" grep -q "^summary stage=lc2_zero1 ranks=2 " "$root/zc/out/steps.log"
check "no GPU here: the kernels are skipped" grep -q "^kernels: SKIPPED" "$s"
check "no GPU here: lc0 --device cuda is refused with its reason" grep -q "no usable GPU on this machine" "$root/zc/out/steps.log"
check "no GPU here: test_gpu is skipped" grep -q "^test_gpu: SKIPPED" "$s"
check "no GPU here: make run's course runs on the CPU, table and all" grep -q "^course: ok" "$s"
check "and the pack's gnuplot drew its plots" sh -c "for p in loss memory peak; do [ -s $root/zc/build/plots/\$p.png ] && [ -s $root/zc/build/plots/\$p.svg ] || exit 1; done"
[ "$bad" = 0 ] || sed "s/^/    /" "$tmp/run"
finish offline_rehearsal
