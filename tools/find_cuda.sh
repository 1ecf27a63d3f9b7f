#!/bin/sh
# Finds the CUDA toolkit and NCCL for the Makefile and prints make variables:
#   CUDA=1 NVCC=... CUDA_HOME=... NCCL_INC=... NCCL_LIBDIR=... NCCL_LIB=...
# or CUDA=0 when no CUDA build is possible (with why on stderr if one was asked).
#
# nvcc: $NVCC, then PATH, $CUDA_HOME/bin, /usr/local/cuda/bin and the newest
# /usr/local/cuda-*/bin (a stock toolkit install does not touch PATH).
# NCCL is not part of the toolkit: $NCCL_HOME, the toolkit's own directories,
# the system's (Debian/Ubuntu libnccl-dev), then a pip-installed
# nvidia-nccl-cu* (which ships libnccl.so.2 and no libnccl.so: linked with
# -l:libnccl.so.2).
# usage: tools/find_cuda.sh [auto|1]   (1: a CUDA build was asked for; a
#        missing piece is then an error, one line naming what to install or set)
set -u
want=${1:-auto}

fail() {
  if [ "$want" = 1 ]; then echo "CUDA=1: $*" >&2; exit 1; fi
  [ -z "${ZC_QUIET:-}" ] && echo "note: building without CUDA: $*" >&2
  echo "CUDA=0"
  exit 0
}

# ------------------------------------------------------------------------------
# nvcc and the toolkit

nvcc=${NVCC:-}
if [ -z "$nvcc" ]; then
  nvcc=$(command -v nvcc 2>/dev/null)
  for c in ${CUDA_HOME:+"$CUDA_HOME/bin/nvcc"} /usr/local/cuda/bin/nvcc \
           $(ls -d /usr/local/cuda-*/bin/nvcc 2>/dev/null | sort -V -r); do
    [ -n "$nvcc" ] && break
    [ -x "$c" ] && nvcc=$c
  done
fi
if [ -z "$nvcc" ]; then
  [ "$want" = 1 ] || { echo "CUDA=0"; exit 0; }   # no toolkit: a CPU machine, nothing to say
  fail "nvcc not found (install the CUDA toolkit, or set NVCC=/path/to/nvcc or CUDA_HOME)"
fi
[ -x "$nvcc" ] || fail "NVCC=$nvcc is not an executable"
home=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$nvcc")")")}
[ -f "$home/include/cuda_runtime.h" ] || fail "no cuda_runtime.h under $home/include (set CUDA_HOME)"
[ -f "$home/include/cublas_v2.h" ] || fail "no cublas_v2.h under $home/include (install cuBLAS, part of the toolkit)"

# ------------------------------------------------------------------------------
# NCCL

inc="" libdir="" lib=""
try() {  # try INCDIR LIBDIR...: the first LIBDIR holding libnccl.so (or .so.2 alone)
  [ -n "$inc" ] && return
  [ -f "$1/nccl.h" ] || return
  d=$1; shift
  for l in "$@"; do
    if [ -e "$l/libnccl.so" ]; then inc=$d libdir=$l lib=-lnccl; return; fi
    if [ -e "$l/libnccl.so.2" ]; then inc=$d libdir=$l lib=-l:libnccl.so.2; return; fi
  done
}
if [ -n "${NCCL_HOME:-}" ]; then  # said where: only there
  try "$NCCL_HOME/include" "$NCCL_HOME/lib" "$NCCL_HOME/lib64"
  [ -n "$inc" ] || fail "no nccl.h and libnccl.so under NCCL_HOME=$NCCL_HOME (its include/ and lib/)"
fi
try "$home/include" "$home/lib64" "$home/lib"
arch=$(gcc -print-multiarch 2>/dev/null)
try /usr/include ${arch:+"/usr/lib/$arch"} /usr/lib64 /usr/lib
if [ -z "$inc" ]; then
  pip=$("${PYTHON:-python3}" -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)
  [ -n "$pip" ] && try "$pip/include" "$pip/lib"
fi
[ -n "$inc" ] || fail "NCCL not found (apt-get install libnccl-dev, or pip install nvidia-nccl-cu12, or set NCCL_HOME)"

echo "CUDA=1 NVCC=$nvcc CUDA_HOME=$home NCCL_INC=$inc NCCL_LIBDIR=$libdir NCCL_LIB=$lib"
