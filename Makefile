# zero-course: one entry point. `make run` and `make test` install what is
# missing (Debian packages), build, and run the course or its tests.
#
#   make run        every stage that exists, on the CPU, default data (DEVICE=cuda: on the GPUs)
#   make test       every test suite (Check); non-zero exit on any failure
#   make all        binaries in build/bin/
#   make sanitize   the test suites built with AddressSanitizer + UBSan
#   make bench-comm the collectives' bandwidth for every backend (nccl-tests format)
#   make comm-fit   --comm auto's cost model and rules measured here, kept in build/ for every run
#   make bench-collectives  lecture 1's figures: the cost model, every algorithm, auto, the slow link
#   make bench-gpu  the GPU figures: fused Adam against a copy, lc0 and lc5 on a big model
#   make plan       model state and traffic per stage for any model (the ZeRO paper's figure)
#   make compare    the table and plots of the last make run (build/plots)
#   make diff-lcK   what lecture K changed (unified diff against lecture K-1)
#   make diff A=lc1 B=lc4   any two stages, the same way
#   make stages     the course's stage names, in order (scripts and tools read them here)
#   make exercise LC=K   your copies of lecture K's exercise files, stubbed, in mywork/
#   make grade [LC=K] [CHECK=id] [N=n] [FORMAT=gradescope|junit RESULTS=file]   your files graded, one line per check and N
#   make solution [LC=K] the reference graded the same way
#   make diff-mine LC=K  your files against the reference
#   make mine LC=K [N=n] [ARGS='...']  your build of lecture K's stage, run with its reports
#   make grade-selftest  the grader graded (in make test too)
#   make grade-mutants [LC=K] [SAMPLE=n SEED=s]  the grader graded by mutation of the exercise regions
#   make slips [SLIPS='a b']  the tests graded by a maintainer's slips planted in a copy (tests/slips/)
#   make clean
#   V=1             show every compiler command in full

# A variable given on make's command line is data, as it is in the
# environment: make would expand it (a '$(shell ...)' in LC or ARGS would run)
# wherever it is read, and when it puts it in a recipe's environment. Each one
# is made a simple variable holding its text as typed, before anything reads
# it, and exported as a command line's variables are.
$(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $(v))),$(eval override $(v) := $$(value $(v)))$(eval export $(v))))

BUILD   ?= build
CC      ?= cc
OPT     ?= -O2
SAN     ?=
PKGS     = ompi-c openblas check libxxhash jansson
# Evaluated when a recipe runs, which is after `deps` has installed the packages.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   = $(shell pkg-config --libs $(PKGS)) -ldnnl -lgomp
# The single-process suites link without Open MPI (see UNIT_TESTS).
UNIT_LIBS  = $(shell pkg-config --libs openblas check libxxhash jansson) -ldnnl -lgomp
# The kernels' loops vectorize (gcc's -O2 alone does not), with the same bits as
# scalar code: no reassociation without -ffast-math, and SSE's sqrt and division
# are IEEE's. Without errno, sqrtf is one instruction, which lets Adam vectorize.
VEC     ?= -ftree-vectorize -fno-math-errno
# A call whose header is missing (an include left inside one build's #ifdef)
# stops the compile, in every build, instead of linking to nothing in the other;
# so does a function with a value that can fall off its end (a lost return),
# which C lets through with a warning, its value whatever a register held.
CFLAGS  += -std=c11 $(OPT) $(VEC) -g -Wall -Wextra -Werror=implicit-function-declaration -Werror=return-type -D_GNU_SOURCE -pthread $(SAN) $(PKG_CFLAGS)
# Linked by gold where the compiler has it: a test program in 0.07 s against
# ld.bfd's 0.27 (test_lc2, on the machine of BENCHMARKS.md), and the grader
# links one for every file it grades. Elsewhere the compiler's own linker.
LD_GOLD := $(shell $(CC) -fuse-ld=gold -Wl,--version 2>/dev/null | grep -q '^GNU gold' && echo -fuse-ld=gold)
LDLIBS  += $(PKG_LIBS) -lm -pthread $(SAN) $(LD_GOLD)
UNIT_LDLIBS = $(UNIT_LIBS) -lm -pthread $(SAN) $(LD_GOLD)

# The variables a learner or a course's CI gives (LC, N, CHECK, MINE, ARGS,
# FORMAT, RESULTS, RANKS, DEVICE, A, B, ...) are data: no recipe pastes them
# into a shell line; the scripts read them from the environment (make puts a
# command line's variables there). BUILD names folders in every rule, so it is
# refused unless plain.
ifneq ($(findstring ',$(BUILD)),)
$(error BUILD: a folder name of letters, digits and . _ / + - only)
endif
ifneq ($(shell printf '%s' '$(BUILD)' | tr -d 'A-Za-z0-9._/+-'),)
$(error BUILD=$(BUILD): a folder name of letters, digits and . _ / + - only)
endif

# common/, floor by floor from the ground (README, "Layout"): a module calls
# only modules listed before it (tests/test_layers.sh checks the objects).
COMMON   = base clock print exercise file env args theory dtype rng gemm $(CUDA_LOW) mem comm_backend comm_model comm_p2p comm_mpi comm_ring \
           comm_tree comm_rd comm_hier comm_auto $(CUDA_MID) \
           data safetensors mlp shards manifest comm kernels_cpu rt trace report checkpoint

# CUDA: built whenever the toolkit and NCCL are found (tools/find_cuda.sh: nvcc
# on PATH or in /usr/local/cuda*, NCCL in NCCL_HOME, the toolkit, the system or
# pip), so every machine with them compiles the GPU path. CUDA=1 asks for it
# (a missing piece stops the build with one line naming it), CUDA=0 turns it
# off. CUDA_ARCH covers Ampere (sm_80) and Hopper (sm_90) with code for each,
# plus PTX that newer GPUs compile at load.
CUDA      ?= auto
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_90,code=compute_90
comma     := ,
ifneq ($(CUDA),0)
# Found once: the sub-makes and the scripts' `make stages` asking the same
# take it from here.
ifneq ($(ZC_CUDA_ASKED),$(CUDA))
ZC_CUDA_FOUND := $(shell NVCC='$(NVCC)' CUDA_HOME='$(CUDA_HOME)' NCCL_HOME='$(NCCL_HOME)' \
                         tools/find_cuda.sh $(CUDA) || echo NOT_FOUND)
ZC_CUDA_ASKED := $(CUDA)
export ZC_CUDA_FOUND ZC_CUDA_ASKED
endif
CUDA_FOUND := $(ZC_CUDA_FOUND)
ifneq ($(filter NOT_FOUND,$(CUDA_FOUND)),)
$(error CUDA=1 asked for, and a piece is missing (the line above says which))
endif
$(foreach kv,$(CUDA_FOUND),$(eval override $(kv)))
endif
ifeq ($(CUDA),1)
CUDA_LOW   = gpu
CUDA_MID   = kernels_cuda comm_staging comm_nccl
CUDA_LIBDIRS = $(sort $(wildcard $(CUDA_HOME)/lib64 $(CUDA_HOME)/lib) $(NCCL_LIBDIR))
CFLAGS    += -DZC_CUDA -I$(CUDA_HOME)/include -I$(NCCL_INC)
# cuBLAS is not linked: kernels_cuda opens it when the GPU path starts.
CUDA_LIBS  = $(addprefix -L,$(CUDA_LIBDIRS)) $(addprefix -Wl$(comma)-rpath$(comma),$(CUDA_LIBDIRS)) \
             -lcudart -lstdc++ -ldl
LDLIBS    += $(CUDA_LIBS) $(NCCL_LIB)
UNIT_LDLIBS += $(CUDA_LIBS)
# --fmad=false: no fused multiply-adds, so elementwise kernels give the CPU's bits.
NVCCFLAGS ?= -O2 -std=c++17 $(CUDA_ARCH) --fmad=false -Xcompiler -Wall,-Wextra -DZC_CUDA \
             -I$(NCCL_INC)
endif
# The course: the one list of its stages (directory/source), in order. Scripts
# get the names from `make stages` (or ZC_STAGES), tools at compile time.
STAGES   = lc0_adam/adam lc1_distributed_adam/distributed_adam lc2_zero1/zero1 lc3_zero2/zero2 \
           lc4_zero3/zero3 lc5_mixed_precision/mixed_precision
STAGE_NAMES = $(foreach s,$(STAGES),$(firstword $(subst /, ,$(s))))
STAGE_BINS  = $(addprefix $(BUILD)/bin/,$(STAGE_NAMES))
export ZC_STAGES = $(STAGE_NAMES)
UNIT_TESTS  = test_kernels test_dtype test_mem test_args test_data test_safetensors test_manifest test_theory test_comm_model test_compare
MULTI_TESTS = test_comm test_comm_device test_lc1 test_lc2 test_lc3 test_lc4 test_lc5
STAGE_TESTS = test_lc0
GPU_TESTS   = $(if $(filter 1,$(CUDA)),test_kernels_cuda)
# Single processes, no MPI: linked without it, so a module of theirs that
# reached up into rt or comm would not link.
$(addprefix $(BUILD)/test/,$(UNIT_TESTS) $(GPU_TESTS)): TEST_LDLIBS = $(UNIT_LDLIBS)
TEST_LDLIBS = $(LDLIBS)
TEST_BINS = $(addprefix $(BUILD)/test/,$(UNIT_TESTS) $(MULTI_TESTS) $(STAGE_TESTS) $(GPU_TESTS) abort_one_rank validate_trace sign_manifest model_diff \
                                     test_harness comm_misuse)
# A CUDA build's fault injector for NCCL waits (tests/nccl_fault.c), preloaded by test_gpu.sh.
TEST_BINS += $(if $(filter 1,$(CUDA)),$(BUILD)/test/libnccl_fault.so)
$(BUILD)/test/libnccl_fault.so: tests/nccl_fault.c $(BUILD)/config
	@mkdir -p $(dir $@)
	$(call show,CC,$<)$(CC) -std=c11 -O2 -Wall -Wextra -fPIC -shared -I$(CUDA_HOME)/include -I$(NCCL_INC) $< -ldl -o $@

COMMON_OBJS = $(addprefix $(BUILD)/obj/common/,$(addsuffix .o,$(COMMON)))
# Everything compiled remembers its flags and whether it was built with CUDA:
# changing either rebuilds.
HEADERS = $(wildcard common/*.h) $(BUILD)/config

.PHONY: all build run test sanitize clean deps gemm-choice comm-fit bench-comm bench-collectives bench-checkpoint bench-gpu bench-step bench-grade plan compare stages FORCE \
        exercise grade solution diff diff-mine mine grade-selftest grade-mutants slips
.DEFAULT_GOAL := all

# What every command below builds first: the products' library measured
# alone (bench_gemm times them, and a compile beside it would slow what it
# times), then the rest on every core (a clean build took 42 s on one of the
# 2-core machine's). A -j of the user's is kept instead of ours.
NPROC := $(shell nproc 2>/dev/null || echo 1)
BUILD_FIRST = $(MAKE) --no-print-directory $(BUILD)/gemm_choice.h && \
              $(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC)) build

all: deps
	@$(BUILD_FIRST)

deps:
	@tools/install_deps.sh

TOOL_BINS = $(BUILD)/bin/bench_comm $(BUILD)/bin/bench_adam $(BUILD)/bin/plan $(BUILD)/bin/compare \
            $(BUILD)/bin/consolidate $(BUILD)/bin/bench_checksum $(BUILD)/bin/bench_gemm

build: $(STAGE_BINS) $(TEST_BINS) $(TOOL_BINS)

# ----------------------------------------------------------------------------
# compiling: one short line per file (`  CC  common/rt.c`); V=1 shows the commands

show = $(if $(filter 1,$(V)),,@printf '  %-4s %s\n' '$(1)' '$(2)';)

# The build's settings, and its modules of common/ in floor order (for tests/test_layers.sh).
$(BUILD)/config: FORCE
	@mkdir -p $(dir $@)
	@echo "CUDA=$(CUDA) $(CFLAGS)" | cmp -s - $@ || echo "CUDA=$(CUDA) $(CFLAGS)" > $@
	@echo "$(COMMON)" | cmp -s - $(BUILD)/modules || echo "$(COMMON)" > $(BUILD)/modules
	@# gemm_choice.h from before the small and large products had a library each: measured again
	@[ ! -f $(BUILD)/gemm_choice.h ] || grep -q ZC_GEMM_SPLIT $(BUILD)/gemm_choice.h || rm -f $(BUILD)/gemm_choice.h
FORCE:

$(BUILD)/obj/common/%.o: common/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(call show,CC,$<)$(CC) $(CFLAGS) $(OBJ_FLAGS) -c $< -o $@

# rt reads Open MPI's parameter file (rt.c says why): where this Open MPI keeps
# it, asked when rt.o compiles (private: not passed on to its prerequisites).
$(BUILD)/obj/common/rt.o: private OBJ_FLAGS = \
  -DZC_OMPI_SYSCONFDIR='"$(shell ompi_info --path sysconfdir 2>/dev/null | sed -n 's/^ *Sysconfdir: //p')"'

$(BUILD)/obj/common/%.o: common/%.cu $(HEADERS)
	@mkdir -p $(dir $@)
	$(call show,NVCC,$<)$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(BUILD)/lib/libcommon.a: $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(call show,AR,$@)$(AR) rcs $@ $^

define stage_rule
$(BUILD)/bin/$(firstword $(subst /, ,$(1))): $(1).c $(BUILD)/lib/libcommon.a $(HEADERS)
	@mkdir -p $$(dir $$@)
	$$(call show,CC,$$<)$$(CC) $$(CFLAGS) $$< $(BUILD)/lib/libcommon.a $$(LDLIBS) -o $$@
endef
$(foreach s,$(STAGES),$(eval $(call stage_rule,$(s))))

# The fp32 product's library, measured once per build folder: bench_gemm times
# OpenBLAS and oneDNN on the course's products and writes the faster one, for
# small products and large ones apart, into gemm_choice.h, which only gemm.c
# reads (make gemm-choice measures again).
$(BUILD)/bin/bench_gemm: tools/bench_gemm.c common/dtype.h common/hd.h $(BUILD)/config
	@mkdir -p $(dir $@)
	$(call show,CC,$<)$(CC) $(CFLAGS) $< $(PKG_LIBS) -lm -o $@
$(BUILD)/gemm_choice.h: | $(BUILD)/bin/bench_gemm
	$(call show,GEMM,$@)$(BUILD)/bin/bench_gemm --header $@.tmp && mv $@.tmp $@
$(BUILD)/obj/common/gemm.o: common/gemm.c $(HEADERS) $(BUILD)/gemm_choice.h
	@mkdir -p $(dir $@)
	$(call show,CC,$<)$(CC) $(CFLAGS) -include $(BUILD)/gemm_choice.h -c $< -o $@
gemm-choice: deps
	@rm -f $(BUILD)/gemm_choice.h
	@$(MAKE) --no-print-directory $(BUILD)/gemm_choice.h
	@cat $(BUILD)/gemm_choice.h

$(BUILD)/bin/%: tools/%.c $(BUILD)/lib/libcommon.a $(HEADERS)
	@mkdir -p $(dir $@)
	$(call show,CC,$<)$(CC) $(CFLAGS) $< $(BUILD)/lib/libcommon.a $(LDLIBS) -o $@

# plan and compare are single processes: no MPI, no BLAS. compare reads the
# stage list from here.
STAGES_DEF = -DZC_STAGES='"$(STAGE_NAMES)"'
$(BUILD)/bin/plan: tools/plan.c common/theory.c common/theory.h
	@mkdir -p $(dir $@)
	$(call show,CC,$<)$(CC) $(CFLAGS) tools/plan.c common/theory.c -lm $(SAN) -o $@
$(BUILD)/bin/compare: tools/compare.c Makefile
	@mkdir -p $(dir $@)
	$(call show,CC,$<)$(CC) $(CFLAGS) $(STAGES_DEF) tools/compare.c -lm $(SAN) -o $@

# A stage's test includes the stage's .c (with LECTURE_TEST, so no main).
# TEST_CFLAGS: added for the test programs alone (the grader's builds: -g0).
# Compiled and linked apart: a change in common/ (lecture 0's kernels, lecture
# 1's collectives: half the grader's builds) relinks the test programs without
# compiling them again (1.2-1.4 s each).
# The sources a test includes (the stage's, compare.c, sign_manifest.c) are
# its prerequisites as the compiler found them (-MMD, in a .d beside the
# object), not every stage's: a grade of lecture 1's stage no longer compiles
# test_comm again, nor a grade of lecture 3 test_lc2. The .d names its object
# as $(BUILD)/..., read when make reads it, so it holds where the grader
# builds a copy of the tree in a folder of its own (tests/grader/learner_build.sh
# copies the objects and their .d files). An object without its .d (a build
# from before) is compiled again once. (The .d files are named, not a
# pattern's: a missing file a pattern made would be an intermediate one,
# which rebuilds nothing.)
TEST_DEPS = $(patsubst tests/%.c,$(BUILD)/obj/tests/%.d,$(wildcard tests/*.c))
$(BUILD)/obj/tests/%.o: tests/%.c $(wildcard tests/*.h) $(HEADERS) $(BUILD)/obj/tests/%.d
	@mkdir -p $(dir $@)
	$(call show,CC,$<)$(CC) $(CFLAGS) $(TEST_CFLAGS) $(STAGES_DEF) -DLECTURE_TEST -Itests \
	  -MMD -MP -MT '$$(BUILD)/obj/tests/$*.o' -MF $(BUILD)/obj/tests/$*.d -c $< -o $@
$(TEST_DEPS): ;
.PRECIOUS: $(BUILD)/obj/tests/%.o
-include $(wildcard $(TEST_DEPS))
$(BUILD)/test/%: $(BUILD)/obj/tests/%.o $(BUILD)/lib/libcommon.a
	@mkdir -p $(dir $@)
	$(call show,LD,$@)$(CC) $(CFLAGS) $(TEST_CFLAGS) $< $(BUILD)/lib/libcommon.a $(TEST_LDLIBS) -o $@

# lc0.1d grades adam_update's hand-off to the GPU kernel without a GPU:
# test_lc0 also holds a copy of kernels_cpu.c compiled as a CUDA build's (a
# stand-in for the CUDA runtime's header where there is no toolkit), its
# adam_update renamed and everything else of it private (objcopy), linked
# against a recording stand-in for the GPU kernels (tests/gpu_standin.c). The
# other checks run the build's own kernels_cpu, from the library.
OBJCOPY ?= objcopy
$(BUILD)/obj/tests/kernels_cpu_handoff.o: common/kernels_cpu.c $(HEADERS) $(wildcard tests/standin/*.h)
	@mkdir -p $(dir $@)
	$(call show,CC,$@)$(CC) -Itests/standin $(CFLAGS) $(TEST_CFLAGS) -DZC_CUDA -include tests/standin/one_copy.h \
	  -Dadam_update=gpu_handoff_adam_update \
	  -c $< -o $@.tmp && $(OBJCOPY) --keep-global-symbol=gpu_handoff_adam_update $@.tmp $@ && rm -f $@.tmp
$(BUILD)/test/test_lc0: $(BUILD)/obj/tests/test_lc0.o $(BUILD)/obj/tests/kernels_cpu_handoff.o \
                        $(BUILD)/obj/tests/gpu_standin.o $(BUILD)/lib/libcommon.a
	@mkdir -p $(dir $@)
	$(call show,LD,$@)$(CC) $(CFLAGS) $(TEST_CFLAGS) $(filter %.o,$^) $(BUILD)/lib/libcommon.a $(TEST_LDLIBS) -o $@

# ----------------------------------------------------------------------------
# running

run: deps
	@$(BUILD_FIRST)
	@tools/run_course.sh $(BUILD) "$${RANKS:-4}" "$${DEVICE:-cpu}"

test: deps
	@$(BUILD_FIRST)
	@tests/run.sh $(BUILD)

# The same suites under AddressSanitizer and UndefinedBehaviorSanitizer, in a
# build directory of their own.
sanitize: deps
	@$(MAKE) --no-print-directory build BUILD=build/san OPT=-O1 CUDA=0 \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
	@SANITIZE=1 tests/run.sh build/san

# The collectives' bandwidth, nccl-tests style, for every backend at 2 and 4
# ranks (BENCH_ARGS: bench_comm's options).
bench-comm: deps
	@$(BUILD_FIRST)
	@set -f; for n in 2 4; do \
	  tools/launch $$n $(BUILD)/bin/bench_comm $${BENCH_ARGS:--b 4K -e 16M -f 4 -w 3 -n 10} || exit 1; done

# --comm auto's file measured on this machine (the fit at N = 4; the rules at
# N = 2, 3, 4, 8: the fastest per collective and size), kept as
# BUILD/comm_fit, where every program of the build finds it.
comm-fit: deps
	@$(BUILD_FIRST)
	@tools/bench_collectives.sh $(BUILD) fit

# Lecture 1's figures: the cost model fitted here, every algorithm against
# Open MPI at N = 2, 3, 4, 8 with auto's choices, and the slow link between
# emulated nodes (tools/bench_collectives.sh; minutes).
bench-collectives: deps
	@$(BUILD_FIRST)
	@tools/bench_collectives.sh $(BUILD)

# What a checkpoint of about 1 GB costs: lc0's model of 240M parameters saved
# once (its params, m and v: 916 MiB), the time per save as the stage reports
# it, then the checksum alone in memory and with the file read back.
bench-checkpoint: deps
	@$(BUILD_FIRST)
	@set -f; d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	  $(BUILD)/bin/lc0_adam $${CKPT_MODEL:---hidden 2048 --layers 20 --batch 12 --steps 1 --sample 0 --log-every 0} \
	    --save-dir $$d | grep -E '^checkpoints' && \
	  $(BUILD)/bin/bench_checksum $$d/step-*/rank-00000.safetensors

# The GPU figures of BENCHMARKS.md (needs a GPU): the fused Adam kernel's
# bandwidth against a device-to-device copy on 64M parameters, then lc0 and lc5
# (bf16, and fp32 for the speedup) on a model that keeps the GPU busy.
bench-gpu: deps
	@$(BUILD_FIRST)
	@BUILD=$(BUILD) tools/bench_gpu.sh $(BUILD)

# Each stage's step on a GEMM-bound model beside its products' floor and, where
# PyTorch is installed, PyTorch's step (tools/bench_step.sh: STEP_MODEL, STEP_N).
# The grader's time per lecture: make solution LC=K, BENCH_RUNS times each
# (default 3; tools/bench_grade.sh prints the median and the range).
bench-grade: deps
	@$(BUILD_FIRST)
	@tools/bench_grade.sh $(BUILD) "$${BENCH_RUNS:-3}"

bench-step: deps
	@$(BUILD_FIRST)
	@tools/bench_step.sh $(BUILD)

# The course side by side from the logs of make run: a table, and plots in build/plots.
compare: deps
	@$(BUILD_FIRST)
	@mkdir -p $(BUILD)/plots
	@$(BUILD)/bin/compare $(BUILD)/run $(BUILD)/plots

# The formulas for a real model: the ZeRO paper's example, then the course's.
plan: deps
	@$(BUILD_FIRST)
	@$(BUILD)/bin/plan --params 7.5e9 --ranks 64 --precision mixed
	@echo
	@$(BUILD)/bin/plan --params 2851e6 --largest-layer 32e6 --ranks 8
	@echo
	@$(BUILD)/bin/plan --hidden 128 --layers 6 --context 5 --ranks 4 --precision fp32

# ----------------------------------------------------------------------------
# lectures side by side

# One rule per stage after the first, made from STAGES: diff-lc1 ... diff-lc5.
define diff_rule
.PHONY: diff-$(firstword $(subst _, ,$(2)))
diff-$(firstword $(subst _, ,$(2))):
	@tools/lecture_diff.sh $(1).c $(2).c
endef
STAGE_PAIRS = $(join $(addsuffix :,$(wordlist 2,$(words $(STAGES)),x $(STAGES))),$(wordlist 2,$(words $(STAGES)),$(STAGES)))
$(foreach p,$(STAGE_PAIRS),$(eval $(call diff_rule,$(word 1,$(subst :, ,$(p))),$(word 2,$(subst :, ,$(p))))))

# make diff A=lcI B=lcJ: any two stages, the same way (lcI may be the stage's
# full name too).
diff:
	@tools/lecture_diff.sh --stages "$(STAGES)"

stages:
	@echo $(STAGE_NAMES)

# ----------------------------------------------------------------------------
# exercises: the learner's copies live in MINE (git-ignored)

# The scripts read LC, N, CHECK, MINE (default mywork), ARGS, FORMAT and
# RESULTS from the environment.

exercise:
	@tools/learner/exercise.sh

grade: deps
	@$(BUILD_FIRST)
	@BUILD=$(BUILD) tests/grader/grade.sh

solution: deps
	@$(BUILD_FIRST)
	@BUILD=$(BUILD) SOLUTION=1 tests/grader/grade.sh

diff-mine:
	@tools/learner/diff_mine.sh

mine: deps
	@$(BUILD_FIRST)
	@BUILD=$(BUILD) tools/learner/mine.sh

# The grader graded: the skeleton scores 0, the reference full marks, each
# known mistake (tests/grader/mistakes) loses its check (also part of make test).
grade-selftest: deps
	@$(BUILD_FIRST)
	@tests/grader/selftest.sh $(BUILD)

# The grader graded by mutation: every mutant of the exercise regions
# (universalmutator, installed into BUILD/venv) graded as a learner's file; the
# table, and the survivors. LC, SAMPLE, SEED and JOBS reach it from make's
# command line through the environment (tests/grader/mutants.sh says what each does).
grade-mutants: deps
	@$(BUILD_FIRST)
	@BUILD=$(BUILD) tests/grader/mutants.sh

# The tests held to the slips they must catch: each of tests/slips/ planted in a
# copy of the tree, built, and its suite run (SLIPS: names, default all).
slips: deps
	@$(BUILD_FIRST)
	@set -f; tests/slips.sh $(BUILD) $${SLIPS:-}

clean:
	rm -rf $(BUILD) build
