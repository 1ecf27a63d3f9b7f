#!/bin/sh
# tools/find_cuda.sh on fake layouts: nvcc off PATH under CUDA_HOME, NCCL in
# NCCL_HOME, in the toolkit, from pip (libnccl.so.2 alone), and the one-line
# refusal when CUDA=1 is asked for and NCCL is missing; and, in a CUDA build,
# that the programs open cuBLAS when the GPU path starts instead of loading it
# at every start, and can find it then.
# usage: tests/test_find_cuda.sh [BUILD_DIR]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. tests/expect.sh

# toolkit DIR: a fake CUDA toolkit (nvcc, the two headers, lib64).
toolkit() {
  mkdir -p "$1/bin" "$1/include" "$1/lib64"
  printf '#!/bin/sh\necho fake nvcc\n' >"$1/bin/nvcc"
  chmod +x "$1/bin/nvcc"
  : >"$1/include/cuda_runtime.h"
  : >"$1/include/cublas_v2.h"
}
# nccl INCDIR LIBDIR LIBNAME: a fake NCCL.
nccl() { mkdir -p "$1" "$2"; : >"$1/nccl.h"; : >"$2/$3"; }
# found ARGS...: what find_cuda.sh prints with a PATH that has no nvcc and
# neither the system's NCCL nor pip's (unless the case gives them).
found() { env PATH=/usr/bin:/bin PYTHON=false "$@" tools/find_cuda.sh 1 2>"$tmp/err"; }
# has TEXT PATTERN: TEXT matches the extended regular expression PATTERN.
has() { printf '%s\n' "$1" | grep -qE -- "$2"; }

toolkit "$tmp/cuda"
nccl "$tmp/nccl/include" "$tmp/nccl/lib" libnccl.so
out=$(found CUDA_HOME="$tmp/cuda" NCCL_HOME="$tmp/nccl")
check "nvcc under CUDA_HOME, off PATH" has "$out" "CUDA=1 NVCC=$tmp/cuda/bin/nvcc CUDA_HOME=$tmp/cuda "
check "NCCL in NCCL_HOME, linked -lnccl" has "$out" "NCCL_INC=$tmp/nccl/include NCCL_LIBDIR=$tmp/nccl/lib NCCL_LIB=-lnccl$"

out=$(found NVCC="$tmp/cuda/bin/nvcc" CUDA_HOME= NCCL_HOME="$tmp/none")
check "a wrong NCCL_HOME is refused, not searched around (exit 1)" test -z "$out"
check "and says where it looked" grep -q "no nccl.h and libnccl.so under NCCL_HOME=$tmp/none" "$tmp/err"

if [ ! -e /usr/include/nccl.h ]; then   # the system's NCCL would be found first
  toolkit "$tmp/cuda2"
  out=$(found CUDA_HOME="$tmp/cuda2" NCCL_HOME=)
  check "no NCCL anywhere: CUDA=1 stops (exit 1, nothing printed)" test -z "$out"
  check "with one line naming what to install" grep -q "NCCL not found (apt-get install libnccl-dev, or pip install" "$tmp/err"
  out=$(env PATH=/usr/bin:/bin PYTHON=false CUDA_HOME="$tmp/cuda2" NCCL_HOME= ZC_QUIET=1 tools/find_cuda.sh auto)
  check "no NCCL, not asked for: a CPU build" test "$out" = "CUDA=0"
  # pip's nvidia-nccl-cu*: libnccl.so.2 alone.
  nccl "$tmp/site/nvidia/nccl/include" "$tmp/site/nvidia/nccl/lib" libnccl.so.2
  out=$(env PATH=/usr/bin:/bin PYTHONPATH="$tmp/site" CUDA_HOME="$tmp/cuda2" NCCL_HOME= tools/find_cuda.sh 1)
  check "pip's NCCL, linked -l:libnccl.so.2" has "$out" "NCCL_LIBDIR=$tmp/site/nvidia/nccl/lib NCCL_LIB=-l:libnccl.so.2$"
  nccl "$tmp/cuda2/include" "$tmp/cuda2/lib64" libnccl.so
  out=$(found CUDA_HOME="$tmp/cuda2" NCCL_HOME=)
  check "NCCL inside the toolkit" has "$out" "NCCL_INC=$tmp/cuda2/include NCCL_LIBDIR=$tmp/cuda2/lib64 NCCL_LIB=-lnccl$"
fi

# No toolkit at all, not asked for: a CPU build, silently.
out=$(env PATH=/usr/bin:/bin CUDA_HOME="$tmp/empty" NVCC= tools/find_cuda.sh auto 2>"$tmp/err")
if [ ! -x /usr/local/cuda/bin/nvcc ] && ! ls /usr/local/cuda-*/bin/nvcc >/dev/null 2>&1; then
  check "no toolkit: CUDA=0" test "$out" = "CUDA=0"
fi

# A CUDA build: cuBLAS (half a gigabyte with cuBLASLt) is not among the
# libraries every start loads, and the file the programs will open is where
# their run path (or the system) says.
if grep -q '^CUDA=1 ' "$BUILD/config" 2>/dev/null; then
  for p in "$BUILD/bin/lc0_adam" "$BUILD/bin/lc4_zero3" "$BUILD/test/test_lc2"; do
    [ -x "$p" ] || continue
    check "$(basename "$p") does not load cuBLAS at start" sh -c "! ldd '$p' | grep -q libcublas"
  done
  want=$(strings "$BUILD/bin/lc0_adam" | grep -m 1 '^libcublas\.so\.[0-9]*$')
  dirs=$(readelf -d "$BUILD/bin/lc0_adam" | sed -n 's/.*Library runpath: \[\(.*\)\]/\1/p' | tr ':' ' ')
  at=""
  for d in $dirs; do [ -e "$d/$want" ] && at=$d/$want; done
  [ -n "$at" ] || at=$(ldconfig -p | awk -v w="$want" '$1 == w { print $NF; exit }')
  check "the cuBLAS it opens on the GPU ('$want') is found (${at:-nowhere})" test -n "$want" -a -n "$at"
fi

finish "find_cuda"
