#!/bin/sh
# The numeric suites that depend on the matrix libraries, run again with both
# libraries held to an older instruction set: what a processor without this
# one's would compute, checked on this one. OpenBLAS picks its kernels by core
# (OPENBLAS_CORETYPE), oneDNN by the highest ISA it may use
# (ONEDNN_MAX_CPU_ISA); the build's measured choice of library stays as built,
# and must hold under either. The products round differently there, so lc0's
# references and the trails are recorded afresh beside the others
# (BUILD/test/ref-LEVEL), and each stage is held to them at N = 1..4.
#   avx512: OpenBLAS's Skylake-X kernels, oneDNN's AVX-512 without its newer
#           extensions (what OpenBLAS runs on a Zen 4, where the two libraries
#           gave the same bits on the products a check once told apart by theirs)
#   avx2: OpenBLAS's Haswell kernels, oneDNN's AVX2 (a Zen 2, a Haswell)
#   avx:  OpenBLAS's Sandy Bridge kernels, oneDNN's AVX (no FMA)
# Exits 77 (skipped, with the reason) where this processor lacks the level.
# usage: tests/isa.sh BUILD LEVEL
set -u
BUILD=${1:?usage: tests/isa.sh BUILD LEVEL}
level=${2:?usage: tests/isa.sh BUILD LEVEL}
cd "$(dirname "$0")/.." || exit 2
case $level in
  avx512) core=SkylakeX isa=AVX512_CORE flags="avx512f avx512dq avx512bw avx512vl" ;;
  avx2) core=Haswell isa=AVX2 flags="avx2 fma" ;;
  avx) core=Sandybridge isa=AVX flags="avx" ;;
  *) echo "tests/isa.sh: LEVEL '$level': one of avx512 avx2 avx"; exit 2 ;;
esac
have=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
for f in $flags; do
  case " ${have#*:} " in
    *" $f "*) ;;
    *) echo "SKIPPED: this processor has no $f, so it cannot run the $level kernels"; exit 77 ;;
  esac
done
export OPENBLAS_CORETYPE=$core ONEDNN_MAX_CPU_ISA=$isa ZC_ISA_LEVEL=$isa CK_FORK=no
export ZC_REF="$BUILD/test/ref-$level"
rm -rf "$ZC_REF"
mkdir -p "$ZC_REF" || exit 2
trap 'rm -rf "$ZC_REF"' EXIT
said=$(OPENBLAS_VERBOSE=2 "$BUILD/test/test_kernels" 2>&1 </dev/null)
case $said in
  *"Core: $core"*) ;;
  *) echo "FAILED: OpenBLAS did not take OPENBLAS_CORETYPE=$core:"; echo "$said" | head -5; exit 1 ;;
esac
echo "OpenBLAS on its $core kernels, oneDNN at most $isa"
fail=0
# suite NAME COMMAND...: one run, its output kept and shown on failure.
suite() {
  name=$1; shift
  if "$@" >"$ZC_REF/out" 2>&1 </dev/null; then echo "ok   $name"
  else echo "FAIL $name:"; cat "$ZC_REF/out"; fail=1; fi
}
suite "test_kernels (ZC_ISA_LEVEL checks oneDNN took the level)" "$BUILD/test/test_kernels"
suite "lc0 references" tests/refs.sh "$BUILD" "$ZC_REF"
suite "reference trails" tests/trails.sh "$BUILD" "$ZC_REF"
[ $fail = 0 ] || exit 1
export ZC_TRAIL=compare
suite test_lc0 "$BUILD/test/test_lc0"
for t in test_lc1 test_lc2 test_lc3 test_lc4 test_lc5; do
  for n in 1 2 3 4; do suite "$t N=$n" tools/launch "$n" "$BUILD/test/$t"; done
done
exit $fail
