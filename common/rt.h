// rt: bring-up and tear-down of a run on every rank. MPI (threaded, for the comm
// thread), the memory tuning, the BLAS, the comm thread and the device; the
// command line; and input that every rank must agree on, so that bad input
// stops all ranks together with one line and exit status 2, never a hang.
#ifndef RT_H
#define RT_H

#include "args.h"
#include "base.h"

// Initializes MPI (threaded: the comm thread calls MPI while compute runs), the
// abort of every rank on a fatal error, mem, the kernels and the comm thread.
void rt_init(int *argc, char ***argv, const char *prog);
// Shuts down the comm thread, the GPU and MPI.
void rt_finalize(void);
// Every rank at once: rt_finalize, then exit with status (under tools/launch a
// non-zero status goes to launch in rank 0's line "launch-status S", each rank
// exiting 0: rt.c says why). Must be called by every rank.
void rt_exit(int status) __attribute__((noreturn));

// Parses the stage's options (accepted: their names, space separated). --help
// prints them and exits 0; bad input is one line and exit 2 on every rank. Then
// moves every rank to --device.
void rt_args(Args *a, int argc, char **argv, const char *accepted);
// Moves every rank to the device named "cpu" or "cuda": with cuda, this rank's
// GPU (local rank mod visible GPUs); if any rank has none, every rank exits 2.
void rt_use_device(const char *name);
// At a stage's set-up, before any training: selects --comm's backend and checks
// on rank 0 that every output a names (--save-model, --loss-log, --trace) can be
// written and is neither an input (--data, --init) nor another output; else
// every rank exits 2 with one line. Leaves nothing on disk.
void rt_setup(const Args *a);
// Where the ranks are: nodes of k consecutive ranks (k > 0, emulated; it must
// divide N, else every rank exits 2), or one node per host (k = 0, the layout
// rt_init starts with). rt_setup calls it with --ranks-per-node. Collective.
void rt_nodes(int k);

// After a stage's set-up has allocated and before it writes its buffers (mem
// leaves large blocks untouched until then): the host memory mem holds on each
// node's ranks together, against what the node had available when the run
// began; if it is more, every rank exits 2 with the numbers. GPU memory needs no
// check: an allocation the GPU cannot give fails at once (exit 2, with reason).
void rt_check_memory(void);
// The same check before a tool allocates `bytes` of host memory on each rank
// (what: "the buffers of -e 2G", the refusal's subject). Collective.
void rt_check_host_bytes(double bytes, const char *what);

// Every rank here, through MPI's own barrier on this thread, whatever the comm
// backend: a benchmark's start line, the same for every backend it times (a
// backend's barrier leaves the ranks more or less apart, which the next call's
// time would include). Collective; nothing in flight on the comm thread.
void rt_barrier(void);

// Bad input seen identically by every rank: rank 0 prints one line, all exit 2.
// Must be called by every rank.
// A tool's command line (not parsed by args) the same on every rank, else every
// rank exits 2 with one line. Collective.
void rt_agree_argv(int argc, char **argv);

void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
// Bad input that only some ranks may see (a file missing on one node): every rank
// calls it with NULL or its one-line reason; if any rank has one, the lowest such
// rank prints it and all exit 2.
void agree_input(const char *err);
// The same for a failure every rank meets at one point of the run (the loss is
// not finite): the lowest rank with a reason prints it, all exit with status.
void agree_exit(const char *err, int status);

#endif
