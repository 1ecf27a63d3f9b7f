#!/bin/sh
# Command-line behaviour of the stage programs: bad input is one line on stderr
# and exit status 2 on every rank, never a crash or a hang; a runtime failure on
# one rank brings all ranks down with its reason; the summary line is last.
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
stages=${ZC_STAGES:-$(make -s --no-print-directory stages)}  # the Makefile's list
. tests/expect.sh
: >"$tmp/empty"
printf 'ABC\n123\n' >"$tmp/junk"
printf 'not a model' >"$tmp/garbage.st"
# Where a GPU opens, --device cuda runs (tests/test_gpu.sh grades it); elsewhere
# it must refuse with one line and exit 2, whether or not the build has CUDA.
gpu=0
"$BUILD/bin/lc0_adam" --device cuda $small >/dev/null 2>&1 && gpu=1

for stage in $stages; do
  bin="$BUILD/bin/$stage"
  n=1; [ "$stage" = lc0_adam ] || n=3
  expect $n 2 "unknown option '--bogus'" "$bin" --bogus 1
  expect $n 2 "--hidden abc: expected an integer" "$bin" --hidden abc
  expect $n 2 "--lr: missing value" "$bin" --lr
  expect $n 2 "--context 99: expected an integer in [1, 32]" "$bin" --context 99
  expect $n 2 "cannot read data file '/nonexistent/words'" "$bin" --data /nonexistent/words
  expect $n 2 "is empty" "$bin" --data "$tmp/empty"
  expect $n 2 "has no usable words" "$bin" --data "$tmp/junk"
  expect $n 2 "over the format's limit" "$bin" $small --init "$tmp/garbage.st"
  expect $n 2 "cannot write model file '/nonexistent/m.st'" "$bin" $small --save-model /nonexistent/m.st
  [ $gpu = 1 ] || expect $n 2 "--device cuda" "$bin" --device cuda
done
expect 2 2 "--comm nccl: needs --device cuda" "$BUILD/bin/lc3_zero2" --comm nccl
expect 1 2 "option --comm is not used by this stage" "$BUILD/bin/lc0_adam" --comm mpi
expect 3 2 "--batch 10: must be divisible by ranks x accum = 3 x 1" "$BUILD/bin/lc1_distributed_adam" --batch 10
expect 2 2 "--batch 12: must be divisible by ranks x accum = 2 x 5" "$BUILD/bin/lc1_distributed_adam" --batch 12 --accum 5
expect 1 2 "option --grad-sync is not used by this stage" "$BUILD/bin/lc1_distributed_adam" --grad-sync allreduce
expect 2 2 "--grad-sync gossip: expected one of: reduce_scatter allreduce" "$BUILD/bin/lc2_zero1" --grad-sync gossip
expect 2 2 "--bucket-mb -2: expected a number" "$BUILD/bin/lc3_zero2" --bucket-mb -2
expect 2 2 "option --grad-sync is not used by this stage" "$BUILD/bin/lc3_zero2" --grad-sync allreduce
expect 2 2 "--prefetch 3: expected an integer in [0, 1]" "$BUILD/bin/lc4_zero3" --prefetch 3
expect 2 2 "option --prefetch is not used by this stage" "$BUILD/bin/lc3_zero2" --prefetch 0
expect 2 2 "--dtype fp8: expected one of: bf16 fp16 fp32" "$BUILD/bin/lc5_mixed_precision" --dtype fp8
expect 2 2 "--loss-scale 0: expected one of: auto dynamic none, or a number" "$BUILD/bin/lc5_mixed_precision" --loss-scale 0
expect 2 2 "option --dtype is not used by this stage" "$BUILD/bin/lc4_zero3" --dtype bf16

# A command line per rank (MPMD launch, wrapper script, environment): every rank
# stops together with one line, exit 2, never a hang or a run with mixed options.
expect 3 2 "unknown option '--bogus'" env ZC_RANK1_ARGS="--bogus 1" tests/per_rank.sh "$BUILD/bin/lc1_distributed_adam" $small
expect 3 2 "--help was given to some ranks only" env ZC_RANK2_ARGS="--help" tests/per_rank.sh "$BUILD/bin/lc2_zero1" $small
expect 2 2 "--help was given to some ranks only" env ZC_RANK0_ARGS="--help" tests/per_rank.sh "$BUILD/bin/lc4_zero3" $small
expect 2 2 "the ranks were started with different options (rank 1's" \
  env ZC_RANK1_ARGS="--lr 0.01" tests/per_rank.sh "$BUILD/bin/lc3_zero2" $small
expect 3 2 "different options (rank 2's" env ZC_RANK2_ARGS="--dtype fp16" tests/per_rank.sh "$BUILD/bin/lc5_mixed_precision" $small
expect 2 2 "--loss-scale: empty value" "$BUILD/bin/lc5_mixed_precision" $small --loss-scale ''
expect 2 2 "--comm mpi ring: expected one of" "$BUILD/bin/lc2_zero1" $small --comm "mpi ring"

# Nodes and the link between them (lecture 1): a layout that does not divide N,
# and a link that does not parse, stop every rank with one line.
expect 3 2 "nodes of 2 ranks: 2 does not divide the 3 ranks" "$BUILD/bin/lc1_distributed_adam" $small \
  --ranks-per-node 2
expect 2 2 "--ranks-per-node -1: expected an integer" "$BUILD/bin/lc4_zero3" $small --ranks-per-node -1
expect 2 2 "ZC_LINK='fast': expected inter:LATENCY,BANDWIDTH" env ZC_LINK=fast "$BUILD/bin/lc2_zero1" $small
expect 2 2 "ZC_LINK='inter:20us,0GB/s': expected" env ZC_LINK=inter:20us,0GB/s "$BUILD/bin/lc2_zero1" $small
expect 2 2 "ZC_COMM_FIT: cannot read cost model fit '/nonexistent/fit'" env ZC_COMM_FIT=/nonexistent/fit "$BUILD/bin/lc2_zero1" $small --comm auto
# The hierarchical backend on emulated nodes, with the slow link: the traffic
# report gives the bytes to other nodes, and auto says what it chose.
ZC_LINK=inter:20us,1GB/s timeout 60 tools/launch 4 "$BUILD/bin/lc1_distributed_adam" $small --comm auto \
  --ranks-per-node 2 >"$tmp/auto" 2>&1
check "auto on 2 emulated nodes: the report gives the nodes, the bytes across them and auto's choices" \
  sh -c "grep -q 'N = 4 on 2 nodes' '$tmp/auto' && grep -q 'of them to other nodes' '$tmp/auto' &&
         grep -q 'auto chose for all_reduce:' '$tmp/auto'"

# Which cost model auto runs on: the one make comm-fit cached beside the build
# (BUILD/comm_fit, found from the program's path), ZC_COMM_FIT over it, empty
# ZC_COMM_FIT for the built-in one; the report names it, and the choices follow
# it (at this size a fit of bytes alone takes the ring, one of messages alone rd).
mkdir -p "$tmp/b/bin" && cp "$BUILD/bin/lc1_distributed_adam" "$tmp/b/bin/"
printf 'call 0\nalpha 0\nbeta 1e-3\ngamma 0\ndelta 0\n' >"$tmp/bytes_fit"
printf 'call 0\nalpha 1e-2\nbeta 0\ngamma 0\ndelta 0\n' >"$tmp/msgs_fit"
auto_fit() {  # auto_fit OUT [VAR=VALUE]: lc1 --comm auto at N = 4 from the copy
  out=$1; shift
  env "$@" timeout 60 tools/launch 4 "$tmp/b/bin/lc1_distributed_adam" $small --comm auto >"$tmp/$out" 2>&1
}
says() { grep -qF -- "$2" "$tmp/$1" || { echo "    $1 has no '$2':"; grep auto "$tmp/$1" | sed 's/^/    /'; false; }; }
auto_fit fit_none
cp "$tmp/bytes_fit" "$tmp/b/comm_fit"
auto_fit fit_cached
auto_fit fit_empty ZC_COMM_FIT=
auto_fit fit_env "ZC_COMM_FIT=$tmp/msgs_fit"
same_choice() { [ "$(grep 'auto chose' "$tmp/$1")" = "$(grep 'auto chose' "$tmp/$2")" ]; }
check "auto's cost model: built in where nothing is cached" \
  says fit_none "auto's cost model: built in, measured on the course's development machine, not this one"
check "auto's cost model: the cached one" says fit_cached "auto's cost model: measured here by make comm-fit, '$tmp/b/comm_fit'"
check "auto's choice follows the cached fit (the ring, for bytes alone)" says fit_cached 'auto chose for all_reduce: ring 1.00'
check "auto's cost model: empty ZC_COMM_FIT is the built-in one, whatever is cached" \
  says fit_empty "auto's cost model: built in (ZC_COMM_FIT is empty)"
check "auto's choice with empty ZC_COMM_FIT is the built-in one's" same_choice fit_empty fit_none
check "auto's cost model: ZC_COMM_FIT over the cached one" says fit_env "auto's cost model: ZC_COMM_FIT's, '$tmp/msgs_fit'"
check "auto's choice follows ZC_COMM_FIT's fit (rd, for messages alone)" says fit_env 'auto chose for all_reduce: rd 1.00'
# The measured rules in the fit's file: on one node, at their N, auto runs the
# nearest size's rule (a single rule: every size), Open MPI's own included
# (whose bytes the report then counts by the ring model), over the model's
# choice; another N's rules, or nodes, leave the choice to the model.
{ cat "$tmp/bytes_fit"; echo 'rule all_reduce 4 1024 tree'; } >"$tmp/tree_rule"
{ cat "$tmp/bytes_fit"; echo 'rule all_reduce 4 1024 mpi'; } >"$tmp/mpi_rule"
{ cat "$tmp/bytes_fit"; echo 'rule all_reduce 2 1024 tree'; } >"$tmp/n2_rule"
auto_fit rule_tree "ZC_COMM_FIT=$tmp/tree_rule"
auto_fit rule_mpi "ZC_COMM_FIT=$tmp/mpi_rule"
auto_fit rule_n2 "ZC_COMM_FIT=$tmp/n2_rule"
check "auto follows a measured rule over the model (tree, where bytes alone say ring)" \
  says rule_tree 'auto chose for all_reduce: tree 1.00'
check "auto runs Open MPI's collective where a rule says mpi" says rule_mpi 'auto chose for all_reduce: mpi 1.00'
check "the report counts the calls auto ran on mpi by the ring model, and says so" \
  says rule_mpi 'sent bytes as counted, by the ring model for the calls run on mpi'
check "the report of a run that ran nothing on mpi does not say so" sh -c "! grep -q 'calls run on mpi' '$tmp/rule_tree'"
check "a rule of another N is not followed (N = 4: the model's ring)" says rule_n2 'auto chose for all_reduce: ring 1.00'
timeout 60 env ZC_COMM_FIT="$tmp/tree_rule" ZC_LINK=inter:20us,1GB/s tools/launch 4 "$BUILD/bin/lc1_distributed_adam" \
  $small --comm auto --ranks-per-node 2 >"$tmp/rule_nodes" 2>&1
check "a rule is not followed on several nodes (measured on one)" \
  sh -c "grep -q 'auto chose for all_reduce' '$tmp/rule_nodes' && ! grep -q 'auto chose for all_reduce: tree' '$tmp/rule_nodes'"
echo 'rule all_reduce 4 1024 hier' >>"$tmp/bytes_fit"
expect 2 2 "ZC_COMM_FIT: cost model fit '$tmp/bytes_fit', line 6: expected 'NAME SECONDS'" \
  env ZC_COMM_FIT="$tmp/bytes_fit" "$BUILD/bin/lc2_zero1" $small --comm auto
echo call 1 >"$tmp/b/comm_fit"
expect 4 2 "--comm auto: cost model fit '$tmp/b/comm_fit': needs the lines call, alpha" \
  "$tmp/b/bin/lc1_distributed_adam" $small --comm auto

# A runtime failure on one rank: all ranks end (no hang), non-zero, with the reason.
timeout 60 tools/launch 3 "$BUILD/test/abort_one_rank" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q "rank 1: injected failure" "$tmp/err"; then ok=$((ok + 1))
else bad=$((bad + 1)); echo "FAIL: abort on one rank -> exit $rc"; cat "$tmp/err"; fi

# --help: the options with defaults, exit 0.
if "$BUILD/bin/lc0_adam" --help | grep -q -- "--hidden .*default 128"; then ok=$((ok + 1))
else bad=$((bad + 1)); echo "FAIL: --help"; fi

# The summary line is the last line of stdout, with every key in order.
keys="stage ranks device params steps final_loss model_state_bytes peak_bytes comm_bytes_per_step step_ms"
keys="$keys model_state_formula mem_params mem_grads mem_master_params mem_adam_m mem_adam_v"
keys="$keys peak_params peak_grads peak_master_params peak_adam_m peak_adam_v peak_activations"
keys="$keys peak_comm_buffers peak_data peak_workspace"
for stage in $stages; do
  n=1; [ "$stage" = lc0_adam ] || n=2
  tools/launch $n "$BUILD/bin/$stage" $small >"$tmp/out" 2>"$tmp/err"
  got=$(tail -n 1 "$tmp/out" | sed 's/=[^ ]*//g')
  if [ "$got" = "summary $keys" ]; then ok=$((ok + 1))
  else bad=$((bad + 1)); echo "FAIL: $stage summary line: $(tail -n 1 "$tmp/out")"; fi
  # The process's RSS beside the tracked bytes: present, and never below them.
  rss=$(sed -n 's/.*(RSS): .* MiB now, \([0-9.]*\) MiB peak, beside \([0-9.]*\) MiB tracked at peak$/\1 \2/p' "$tmp/out")
  if [ -n "$rss" ] && echo "$rss" | awk '{ exit !($1 >= $2 && $2 > 0) }'; then ok=$((ok + 1))
  else bad=$((bad + 1)); echo "FAIL: $stage: no RSS line, or RSS below the tracked peak: '$rss'"; fi
done

# The story of the course in its own peak numbers: on the default model at
# N = 4, the peak per rank falls from lc1 to lc2 to lc3 to lc4, and lc5's is
# below lc4's; by category, the model state falls as the formulas say, the
# full gradients in flight appear with lc3 and halve in lc5, and what ZeRO does
# not shard (the data, and lc1-lc4's activations) is the same in every stage;
# only lc5 needs workspace (its fp32 copies of 16-bit values).
: >"$tmp/peaks"
for stage in lc1_distributed_adam lc2_zero1 lc3_zero2 lc4_zero3 lc5_mixed_precision; do
  tools/launch 4 "$BUILD/bin/$stage" --steps 3 --sample 0 --log-every 0 | tail -n 1 >>"$tmp/peaks"
done
if awk '
  { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[NR, kv[1]] = kv[2] }
    state[NR] = v[NR, "mem_params"] + v[NR, "mem_grads"] + v[NR, "mem_master_params"] + v[NR, "mem_adam_m"] + v[NR, "mem_adam_v"]
    flight[NR] = v[NR, "peak_grads"] - v[NR, "mem_grads"] }
  function no(why) { print "  " why; bad = 1 }
  END {
    if (NR != 5) no("expected 5 summary lines, got " NR)
    for (k = 2; k <= 5; k++) if (!(v[k, "peak_bytes"] < v[k - 1, "peak_bytes"])) no("peak of stage " k " not below stage " k - 1)
    for (k = 2; k <= 4; k++) if (!(state[k] < state[k - 1])) no("model state of stage " k " not below stage " k - 1)
    if (state[5] != state[4]) no("lc5 model state differs from lc4 (16 bytes per parameter both)")
    if (flight[1] != 0 || flight[2] != 0) no("lc1/lc2 hold gradients beyond their own")
    if (!(flight[3] > 0) || flight[4] != flight[3] || 2 * flight[5] != flight[4]) no("gradients in flight: " flight[3] " " flight[4] " " flight[5])
    for (k = 2; k <= 5; k++) if (v[k, "peak_data"] != v[1, "peak_data"]) no("data differs between stages")
    for (k = 2; k <= 4; k++) if (v[k, "peak_activations"] != v[1, "peak_activations"]) no("activations differ lc1-lc4")
    for (k = 1; k <= 4; k++) if (v[k, "peak_workspace"] != 0) no("stage " k " has workspace")
    if (!(v[5, "peak_workspace"] > 0)) no("lc5 has no workspace")
    exit bad }' "$tmp/peaks" >"$tmp/why"; then ok=$((ok + 1))
else bad=$((bad + 1)); echo "FAIL: the peaks per rank do not tell the ZeRO story:"; cat "$tmp/why"; fi

# The planner: the ZeRO paper's figure, and bad input.
out=$("$BUILD/bin/plan" --params 7.5e9 --ranks 64 --precision mixed)
if echo "$out" | grep -q "120.0 GB" && echo "$out" | grep -q "31.4 GB" && echo "$out" | grep -q "16.6 GB" &&
   echo "$out" | grep -q "1.9 GB"; then ok=$((ok + 1))
else bad=$((bad + 1)); echo "FAIL: plan does not print the paper's figure:"; echo "$out"; fi
# DeepSpeed's documented t5-3b example (2851M params, largest layer 32M, 8 GPUs,
# no offload): its ZeRO-3 estimate prints 6.09GB; today's code gives 11.28GB for ZeRO-2.
out=$("$BUILD/bin/plan" --params 2851e6 --largest-layer 32e6 --ranks 8)
if echo "$out" | grep -q "^ZeRO-3 .* 6542750000 .*it prints 6.09GB" &&
   echo "$out" | grep -q "^ZeRO-2 .* 12116750000 .*it prints 11.28GB"; then ok=$((ok + 1))
else bad=$((bad + 1)); echo "FAIL: plan does not match DeepSpeed's estimator on t5-3b:"; echo "$out"; fi
# Where 18Ψ/N is not whole DeepSpeed truncates (Python's int()): Ψ = 7, N = 4
# gives 2 x 7 + int(31.5) = 45 bytes for ZeRO-2, and 4 x 3 + 31 = 43 for ZeRO-3.
out=$("$BUILD/bin/plan" --params 7 --largest-layer 3 --ranks 4)
if echo "$out" | grep -q "^ZeRO-2  *45  *45 B " && echo "$out" | grep -q "^ZeRO-3  *43  *43 B "; then ok=$((ok + 1))
else bad=$((bad + 1)); echo "FAIL: plan's DeepSpeed estimate does not truncate 18Ψ/N:"; echo "$out"; fi
expect 1 2 "--largest-layer goes with --params" "$BUILD/bin/plan" --hidden 8 --layers 1 --ranks 2 --largest-layer 5
expect 1 2 "--ranks 0: expected a number" "$BUILD/bin/plan" --params 1e9 --ranks 0
expect 1 2 "give either --params or --hidden and --layers" "$BUILD/bin/plan" --ranks 8
expect 1 2 "--precision half: expected mixed or fp32" "$BUILD/bin/plan" --params 1e9 --ranks 8 --precision half
expect 1 2 "--largest-layer is larger than --params" "$BUILD/bin/plan" --params 10 --largest-layer 11 --ranks 2
expect 1 2 "unknown option '--bogus'" "$BUILD/bin/plan" --params 10 --ranks 2 --bogus 1
expect 1 2 "--precision fp8: expected mixed or fp32" "$BUILD/bin/plan" --params 1e9 --ranks 8 --precision fp8
expect 2 2 "-b '10X': expected a size" "$BUILD/bin/bench_comm" -b 10X
# bench_comm --rules: this N's rules put into an existing fit, one per
# collective and size, each naming the fastest in the table it printed; the
# constants and another N's rules kept; a second run replaces this N's.
{ grep -v '^rule' "$tmp/bytes_fit"; echo 'rule all_reduce 3 16 tree'; } >"$tmp/ruled"
rules_run() {
  timeout 120 tools/launch 2 "$BUILD/bin/bench_comm" -b 1K -e 4K -w 1 -n 5 -B "mpi ring rd" --rules "$tmp/ruled" \
    >"$tmp/rules_out" 2>&1
}
rules_run
# Each rule names an algorithm of the least time its table shows (a tie in the
# printed tenths of a microsecond: any of them), or mpi where that least time
# is not 10% below mpi's (either, within the print's rounding, at the edge);
# and every size has one.
rules_fastest() {
  awk 'FNR == NR && /side by side/ { k = $2; next } FNR == NR && /^#/ { next }
       FNR == NR && k && NF == 7 { m = $2; if ($3 < m) m = $3; if ($4 < m) m = $4
         lead = m < 0.9 * $2 + 0.1; keep = m > 0.9 * $2 - 0.1
         ok[k " " $1 " mpi"] = $2 == m || keep; ok[k " " $1 " ring"] = $3 == m && lead
         ok[k " " $1 " rd"] = $4 == m && lead; sizes++; next }
       FNR < NR && $1 == "rule" && $3 == 2 { n++; if (!ok[$2 " " $4 " " $5]) { print "not the fastest:", $0; bad = 1 } }
       END { if (n != 6 || sizes != 6) { print n, "rules at N = 2 for", sizes, "sizes measured"; bad = 1 } exit bad }' \
    "$tmp/rules_out" "$tmp/ruled"
}
check "bench_comm --rules: one rule per collective and size at N = 2, the fastest of its table or mpi" \
  rules_fastest
check "bench_comm --rules keeps the constants and another N's rules" \
  sh -c "grep -q '^beta 1' '$tmp/ruled' && grep -q '^rule all_reduce 3 16 tree\$' '$tmp/ruled'"
rules_run
again=$?
rules_kept() {  # rules_kept STATUS: the second run's
  [ "$1" = 0 ] && [ "$(grep -c '^rule .* 2 ' "$tmp/ruled")" = 6 ] && grep -q 'all_reduce 3 16 tree' "$tmp/ruled" ||
    { echo "    the second run's status $1, its last lines, the file after it:"; tail -n 3 "$tmp/rules_out";
      sed 's/^/    /' "$tmp/ruled"; false; }
}
check "bench_comm --rules again: this N's rules replaced, not added to" rules_kept "$again"

# compare: a table and plots from stage logs; a malformed log is one line, exit 2.
mkdir -p "$tmp/run" "$tmp/plots" "$tmp/none"
tools/launch 1 "$BUILD/bin/lc0_adam" $small --loss-log "$tmp/run/lc0_adam.loss" >"$tmp/run/lc0_adam.log" 2>/dev/null
tools/launch 2 "$BUILD/bin/lc3_zero2" $small --loss-log "$tmp/run/lc3_zero2.loss" >"$tmp/run/lc3_zero2.log" 2>/dev/null
if "$BUILD/bin/compare" "$tmp/run" "$tmp/plots" >"$tmp/out" 2>"$tmp/err" && grep -q "^lc3_zero2 " "$tmp/out" &&
   [ -s "$tmp/plots/memory.png" ] && [ -s "$tmp/plots/loss.svg" ]; then ok=$((ok + 1))
else bad=$((bad + 1)); echo "FAIL: compare on good logs"; cat "$tmp/out" "$tmp/err"; fi
expect 1 2 "no stage logs" "$BUILD/bin/compare" "$tmp/none" "$tmp/plots"
echo "summary stage=lc2_zero1 ranks=four" >"$tmp/run/lc2_zero1.log"
expect 1 2 "lc2_zero1.log: malformed summary line: ranks=four is not a number" "$BUILD/bin/compare" "$tmp/run" "$tmp/plots"

# --trace: one valid Chrome trace for all ranks, begin/end balanced per track,
# compute and communication on every rank; an unwritable path is bad input.
for stage in lc0_adam lc1_distributed_adam lc3_zero2 lc4_zero3 lc5_mixed_precision; do
  n=2; [ "$stage" = lc0_adam ] && n=1
  tools/launch $n "$BUILD/bin/$stage" $small --trace "$tmp/t.json" >/dev/null 2>"$tmp/err"
  if "$BUILD/test/validate_trace" "$tmp/t.json" $n >"$tmp/out" 2>>"$tmp/err"; then ok=$((ok + 1))
  else bad=$((bad + 1)); echo "FAIL: $stage --trace"; cat "$tmp/err"; fi
done
expect 2 2 "cannot write trace '/nonexistent/t.json'" "$BUILD/bin/lc2_zero1" $small --trace /nonexistent/t.json
printf '{"traceEvents":[{"ph":"E","pid":0,"tid":0,"ts":1}]}\n' >"$tmp/bad.json"
if ! "$BUILD/test/validate_trace" "$tmp/bad.json" >/dev/null 2>&1; then ok=$((ok + 1))
else bad=$((bad + 1)); echo "FAIL: validate_trace accepted an unbalanced trace"; fi

# model_diff (test_gpu.sh's comparison of parameters): 0 within the tolerance,
# 1 beyond it, 2 for a file it cannot read.
"$lc0" $small --save-model "$tmp/m1.st" >/dev/null 2>&1
"$lc0" $small --steps 3 --save-model "$tmp/m2.st" >/dev/null 2>&1
"$BUILD/test/model_diff" "$tmp/m1.st" "$tmp/m1.st" 0 >/dev/null 2>&1; r1=$?
"$BUILD/test/model_diff" "$tmp/m1.st" "$tmp/m2.st" 1e-6 >/dev/null 2>&1; r2=$?
"$BUILD/test/model_diff" "$tmp/m1.st" "$tmp/m2.st" 1 >/dev/null 2>&1; r3=$?
"$BUILD/test/model_diff" "$tmp/m1.st" "$tmp/none.st" 1 >/dev/null 2>&1; r4=$?
if [ "$r1 $r2 $r3 $r4" = "0 1 0 2" ]; then ok=$((ok + 1))
else bad=$((bad + 1)); echo "FAIL: model_diff: same, differing, within 1, missing gave $r1 $r2 $r3 $r4 (want 0 1 0 2)"; fi

# lc5 in fp32 computes exactly what lc4 does: the same model file, byte for byte.
for n in 2 3; do
  tools/launch $n "$BUILD/bin/lc4_zero3" $small --steps 5 --clip 0.1 --save-model "$tmp/a.st" >/dev/null 2>&1
  tools/launch $n "$BUILD/bin/lc5_mixed_precision" $small --steps 5 --clip 0.1 --dtype fp32 \
    --save-model "$tmp/b.st" >/dev/null 2>&1
  if cmp -s "$tmp/a.st" "$tmp/b.st"; then ok=$((ok + 1))
  else bad=$((bad + 1)); echo "FAIL: lc5 --dtype fp32 differs from lc4 at N=$n"; fi
done

# Open MPI's start: where the node has no Omni-Path or InfiniPath adapter, a
# process does not load the PSM libraries (each times the clock for 0.1 s as
# it loads: common/rt.c), and what the site's file excludes stays excluded; a
# list the user or the site chose is followed as it is. Seen in the files a
# start opens (strace), where strace and Open MPI's psm2 and ofi components are.
opened() {  # HOME PATTERN VAR=VALUE...: how many files matching PATTERN lc0 --help opens
  home=$1 pattern=$2; shift 2
  env HOME="$home" "$@" strace -f -e trace=openat -o "$tmp/start.trace" "$lc0" --help >/dev/null 2>&1
  grep -v ENOENT "$tmp/start.trace" | grep -c -- "$pattern"
}
mca=$(ompi_info --path pkglibdir 2>/dev/null | sed -n 's/^ *Pkglibdir: //p')
conf=$(ompi_info --path sysconfdir 2>/dev/null | sed -n 's/^ *Sysconfdir: //p')
if command -v strace >/dev/null && [ -f "$mca/mca_mtl_psm2.so" ] && [ -f "$mca/mca_mtl_ofi.so" ] &&
   grep -q '^mtl *= *^ofi' "$conf/openmpi-mca-params.conf" 2>/dev/null &&
   ! ls /dev/hfi1* /dev/ipath* >/dev/null 2>&1; then
  mkdir -p "$tmp/use/.openmpi" "$tmp/skip/.openmpi"
  echo "mtl = psm2" >"$tmp/use/.openmpi/mca-params.conf"
  echo "mtl = ^ofi # Open MPI's own words: no PSM" >"$tmp/skip/.openmpi/mca-params.conf"
  check "no PSM library loaded where no adapter is" test "$(opened "$tmp" libpsm X=1)" = 0
  check "the site's exclusion (ofi, $conf) kept beside it" test "$(opened "$tmp" mca_mtl_ofi X=1)" = 0
  check "no PSM library with the user's exclusions either" test "$(opened "$tmp/skip" libpsm X=1)" = 0
  check "the user's OMPI_MCA_mtl is followed as it is (PSM loaded)" test "$(opened "$tmp" libpsm OMPI_MCA_mtl=^ofi)" -gt 0
  check "a list of the components to use is followed (PSM loaded)" test "$(opened "$tmp/use" libpsm X=1)" -gt 0
else
  echo "skipped: the PSM libraries at Open MPI's start (needs strace, Debian's Open MPI with its psm2 and ofi" \
       "components, and no PSM adapter)"
fi

# A status every rank agreed on (bad input: 2): under tools/launch each rank
# exits 0 and launch gives the status, from rank 0's line, which it never shows
# (common/rt.c, rt_exit); under plain mpirun each rank exits with it. Seen
# from a wrapper around each rank that says how the program exited.
printf '#!/bin/sh\n"%s" --steps x\necho "rank exit $?" >&2\n' "$lc1" >"$tmp/rank.sh"
chmod +x "$tmp/rank.sh"
timeout 60 tools/launch 2 "$tmp/rank.sh" >/dev/null 2>"$tmp/err"
check "bad input under launch: launch exits 2" test $? = 2
check "  each rank exited 0" test "$(grep -cx 'rank exit 0' "$tmp/err")" = 2
check "  one line of the program's, and no status line shown" \
  test "$(grep -v '^rank exit' "$tmp/err" | grep -c .)" = 1 -a "$(grep -c 'launch-status' "$tmp/err")" = 0
MPIRUN_FLAGS=--tag-output timeout 60 tools/launch 2 "$lc1" --steps x >/dev/null 2>"$tmp/err"
check "  and with mpirun's tags on each line: exit 2, one line" test $? = 2 -a "$(grep -c . "$tmp/err")" = 1
MPIRUN_FLAGS=--merge-stderr-to-stdout timeout 60 tools/launch 2 "$tmp/rank.sh" >"$tmp/out" 2>&1
check "  and with stderr sent to stdout (no line for launch): each rank exits 2" \
  test "$(grep -cx 'rank exit 2' "$tmp/out")" = 2
MPIRUN_FLAGS=--merge-stderr-to-stdout timeout 60 tools/launch 2 "$lc1" --steps x >/dev/null 2>&1
check "    and launch with it" test $? = 2
root="OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
env $root timeout 60 mpirun --oversubscribe -n 2 "$tmp/rank.sh" >/dev/null 2>"$tmp/err"
check "bad input under plain mpirun: each rank exits 2" test "$(grep -cx 'rank exit 2' "$tmp/err")" = 2
env $root timeout 60 mpirun --oversubscribe -n 2 "$lc1" --steps x >/dev/null 2>&1
check "  and mpirun with it" test $? = 2

finish "command line"
