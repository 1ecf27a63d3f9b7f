#!/bin/bash
# offline_run: on a bare, offline machine, runs the course from a folder that
# tools/offline_pack.sh made elsewhere, and the GPU list, within a time given,
# every log and figure into one folder. The packs are unpacked into the folder
# (dpkg -x, never into the system); Open MPI runs from there (OPAL_PREFIX);
# CUDA's libraries are the machine's own, found where CUDA or pip put them.
# The steps, each stopped at what is left of the time, each said in SUMMARY:
#   facts         the GPU, the driver, the libraries each program will load
#   mpi           lc2 at N = 2 on the CPU through the pack's mpirun (MPI works)
#   kernels       the pack's test_kernels_cuda: every GPU kernel against the CPU's
#   smoke         lc0 on the GPU: a few steps, its reports
#   memcheck      compute-sanitizer memcheck on lc0, the kernels' test and lc4 at N = 2 (NCCL);
#   racecheck     racecheck on lc0 (where compute-sanitizer is installed)
#   test_gpu      tests/test_gpu.sh: every stage on the GPU against its CPU run
#   bench_gpu     tools/bench_gpu.sh: the GPU figures of BENCHMARKS.md
#   course        make run: every stage on the default data at N = 4, its table
#                 and plots (tools/run_course.sh); on the GPU where nvidia-smi
#                 lists one (DEVICE=cuda), else on the CPU
# OUT_DIR gets SUMMARY (a line per step: ok, FAIL, SKIPPED or out of time, and
# seconds), steps.log (every step's output, in order), bench.txt and
# test_gpu.tgz (every run of test_gpu.sh, its output and logs): four files, as
# few as a machine that hands back a handful of files needs.
# On an air-gapped cluster the same pair runs the course where no package can
# be installed: pack where Debian's apt works, copy the folder, run this.
# usage: tools/offline_run.sh PACK_DIR OUT_DIR [SECONDS] [STEPS...]   (default 540 s, every step, in the
#        order above; STEPS names some, in the order they run)
set -u
if [ $# -lt 2 ]; then echo "usage: $0 PACK_DIR OUT_DIR [SECONDS] [STEPS...]" >&2; exit 2; fi
cd "$(dirname "$0")/.." || exit 2
top=$(pwd)
pack=$(cd "$1" 2>/dev/null && pwd) || { echo "offline_run: no pack folder '$1'" >&2; exit 2; }
out=$2 budget=${3:-540}
shift 2; [ $# -gt 0 ] && shift
steps=${*:-facts mpi kernels smoke memcheck racecheck test_gpu bench_gpu course}
case $budget in '' | *[!0-9]*) echo "offline_run: SECONDS must be a whole number (got '$budget')" >&2; exit 2 ;; esac
# A whole pack, said in one line before anything is written: its stamp, its
# packages, the programs the steps run and the stage list.
missing=""
[ -f "$pack/PACKED" ] || missing="$missing PACKED"
ls "$pack"/debs/*.deb >/dev/null 2>&1 || missing="$missing debs/*.deb"
[ -x "$pack/build/bin/lc0_adam" ] || missing="$missing build/bin/lc0_adam"
[ -s "$pack/stages" ] || missing="$missing stages"
[ -z "$missing" ] || { echo "offline_run: $pack is not a whole pack (no$missing): make it again with tools/offline_pack.sh" >&2; exit 2; }
if [ -e "$out" ] && [ ! -d "$out" ]; then echo "offline_run: OUT_DIR '$out' is not a folder" >&2; exit 2; fi
mkdir -p "$out" 2>/dev/null || { echo "offline_run: cannot make OUT_DIR '$out'" >&2; exit 2; }
out=$(cd "$out" && pwd)
start=$(date +%s)
: >"$out/SUMMARY"; : >"$out/steps.log"; : >"$out/bench.txt"
note() { echo "$*" | tee -a "$out/SUMMARY"; }

# ------------------------------------------------------------------------------
# The packs, unpacked into the folder once.

root=$pack/root
if [ ! -f "$root/.unpacked" ]; then
  rm -rf "$root" && mkdir -p "$root"
  for d in "$pack"/debs/*.deb; do
    if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$d" "$root"
    else (cd "$root" && ar p "$d" "$(ar t "$d" | grep '^data\.tar')" | tar -xJf - 2>/dev/null ||
          ar p "$d" "$(ar t "$d" | grep '^data\.tar')" | tar -xf -)
    fi || { echo "offline_run: cannot unpack $d" >&2; exit 1; }
  done
  ln -sf orterun "$root/usr/bin/mpirun"
  ln -sf gnuplot-nox "$root/usr/bin/gnuplot"  # (Debian's alternatives name it)
  touch "$root/.unpacked"
fi
arch=x86_64-linux-gnu
lib=$root/usr/lib/$arch
# A library the machine has already is the machine's (its newer C runtime's
# companions); Open MPI's and PMIx's own come from the pack, as one set.
mkdir -p "$pack/libs"
rm -f "$pack/libs"/*
# (openblas-pthread: Debian's alternatives link libopenblas from there; /lib:
# a few packages, libexpat1 among them, still put their libraries there.)
for f in "$lib"/*.so.* "$lib"/openblas-pthread/*.so.* "$root/lib/$arch"/*.so.*; do
  [ -e "$f" ] || continue
  name=$(basename "$f")
  case $name in libmpi* | libopen-* | libpmix* | libmca_* | libompitrace*) ;;
    *) ldconfig -p 2>/dev/null | grep -q " $name " && continue ;; esac
  ln -sf "$f" "$pack/libs/$name"
done
# CUDA's libraries: the toolkit's, or pip's (nvidia-*-cu13 wheels), or the system's.
cuda="" cuda_from=""
for want in libcudart.so libcublas.so libcublasLt.so libnccl.so; do
  found=$(ldconfig -p 2>/dev/null | awk -v w="$want" 'index($1, w) == 1 { print $NF; exit }')
  [ -n "$found" ] || found=$(find /usr/local/cuda*/lib* /usr/local/cuda*/targets/*/lib /opt /usr/lib/python3* \
                               /usr/local/lib/python3* -name "$want*" 2>/dev/null | head -n 1)
  if [ -z "$found" ]; then cuda_from="$cuda_from $want: NOT FOUND;"; continue; fi
  cuda_from="$cuda_from $found;"
  case ":$cuda:" in *":$(dirname "$found"):"*) ;; *) cuda="$cuda:$(dirname "$found")" ;; esac
done
export PATH=$root/usr/bin:$PATH
export LD_LIBRARY_PATH=$pack/libs:$lib/openmpi/lib${cuda}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OPAL_PREFIX=$root/usr OPAL_SYSCONFDIR=$root/etc/openmpi OPAL_PKGDATADIR=$root/usr/share/openmpi
export PMIX_MCA_mca_base_component_path=$lib/pmix2/lib/pmix
export OMPI_MCA_mca_base_component_show_load_errors=0  # a component whose network library is absent stays unused
# PMIx's compression component is not found from the pack (a first GPU node
# printed a 12-line banner on every launch, into every log); it only compresses
# large start-up messages.
export PMIX_MCA_pcompress_base_silence_warning=1
# On one node mpirun starts no daemon elsewhere, but refuses to start where
# neither ssh nor rsh exists at all.
command -v ssh >/dev/null || command -v rsh >/dev/null || export OMPI_MCA_plm_rsh_agent=false
# The word list the stages read by default.
if [ ! -s /usr/share/dict/words ]; then
  mkdir -p /usr/share/dict 2>/dev/null && cp "$root/usr/share/dict/american-english" /usr/share/dict/words 2>/dev/null ||
    { echo "offline_run: cannot put the word list at /usr/share/dict/words" >&2; exit 1; }
fi
# The pack's own build folder is the build every step runs: the tree's build
# folder is never written (a program copied there, its time kept, is one make
# would then take for its own).
B=$pack/build

# ------------------------------------------------------------------------------
# The steps

left() { echo $((budget - ($(date +%s) - start))); }
# step NAME SECONDS COMMAND...: runs COMMAND if NAME is asked for, for at most
# SECONDS and what is left; 77 is a skip.
step() {
  local name=$1 want=$2; shift 2
  case " $steps " in *" $name "*) ;; *) return 0 ;; esac
  local secs t0 rc
  secs=$(left)
  [ "$want" -lt "$secs" ] && secs=$want
  if [ "$secs" -lt 5 ]; then note "$name: out of time, not run"; return 0; fi
  { echo; echo "======== $name ($*), at most $secs s"; } >>"$out/steps.log"
  t0=$(date +%s)
  timeout -k 5 "$secs" bash -c '"$@"' "$name" "$@" >>"$out/steps.log" 2>&1  # bash: a step may be a function
  rc=$?
  case $rc in
    0) note "$name: ok ($(($(date +%s) - t0)) s)" ;;
    77) note "$name: SKIPPED ($(($(date +%s) - t0)) s): $(tail -n 1 "$out/steps.log")" ;;
    124 | 137) note "$name: FAIL, out of its $secs s" ;;
    *) note "$name: FAIL, exit $rc ($(($(date +%s) - t0)) s)" ;;
  esac
}
small="--hidden 64 --layers 2 --batch 64 --steps 3 --sample 0 --log-every 1"
facts() {
  nvidia-smi || echo "no nvidia-smi"
  uname -a; cat /etc/os-release 2>/dev/null | head -n 2
  echo "PACKED: $(cat "$pack/PACKED")"
  echo "CUDA's libraries:$cuda_from"
  for p in "$B/bin/lc0_adam" "$B/test/test_kernels_cuda"; do echo "$p:"; ldd "$p" | sed 's/^/  /'; done
  command -v compute-sanitizer || echo "no compute-sanitizer"
  mpirun --version | head -n 1
}
sanitize() {
  command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer is not installed"; return 77; }
  compute-sanitizer --tool "$1" --error-exitcode 3 "$B/bin/lc0_adam" --device cuda $small || return
  [ "$1" = memcheck ] || return 0
  # Every kernel, at the shapes the CPU comparison uses.
  compute-sanitizer --tool memcheck --error-exitcode 3 "$B/test/test_kernels_cuda" || return
  # Not the API errors: NCCL's set-up probes kernels it has no image for
  # (cudaFuncGetAttributes: no kernel image, 4 a rank on an H200) and carries
  # on; the course's own calls are checked by the program itself.
  # A host id per rank: NCCL refuses two ranks on one GPU of one host.
  tools/launch 2 sh -c 'NCCL_HOSTID=rank${OMPI_COMM_WORLD_RANK:-0} exec "$@"' hostid \
    compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 "$B/bin/lc4_zero3" --device cuda --comm nccl $small
}

# A GPU listed but not usable fails the step (run_course says why), as in make run.
course_device=cpu
nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && course_device=cuda
export -f facts sanitize
export pack out cuda_from small B
# The steps run in the order asked (the most telling first where time is short).
set -f  # the step names are words, never file patterns
for s in $steps; do
  case $s in
    facts) step facts 60 facts ;;
    mpi) step mpi 60 tools/launch 2 "$B/bin/lc2_zero1" $small ;;
    kernels) step kernels 120 "$B/test/test_kernels_cuda" ;;
    smoke) step smoke 60 "$B/bin/lc0_adam" --device cuda --steps 20 --log-every 5 ;;
    memcheck) step memcheck 240 sanitize memcheck ;;
    racecheck) step racecheck 120 sanitize racecheck ;;
    test_gpu) step test_gpu 300 env TEST_GPU_KEEP="$out/test_gpu.tgz" tests/test_gpu.sh "$B" ;;
    bench_gpu) step bench_gpu 300 sh -c 'tools/bench_gpu.sh "$1" | tee "$0"' "$out/bench.txt" "$B" ;;
    course) step course 300 env ZC_STAGES="$(cat "$pack/stages")" tools/run_course.sh "$B" 4 "$course_device" ;;
    *) note "$s: no such step (facts mpi kernels smoke memcheck racecheck test_gpu bench_gpu course)" ;;
  esac
done
note "offline_run: $(($(date +%s) - start)) s of $budget"
! grep -q "FAIL" "$out/SUMMARY"
