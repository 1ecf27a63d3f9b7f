// rt: the process runtime every stage starts with. MPI init/finalize, rank and
// world size, the device, error handling that never leaves a rank hanging,
// printing on rank 0, and timers.
#ifndef RT_H
#define RT_H

#include <stddef.h>
#include <stdio.h>

typedef enum { DEV_CPU = 0, DEV_CUDA = 1 } Device;

typedef struct {
    int rank, world;        // this process and the number of processes
    int local_rank;         // rank among the processes on this node
    Device device;
    const char *prog;       // the stage's name, for messages
} Runtime;

extern Runtime rt;

// Initializes MPI (threaded: the comm thread calls MPI while compute runs),
// the kernels and the comm thread.
void rt_init(int *argc, char ***argv, const char *prog);
// Moves every rank to the device named by --device ("cpu" or "cuda"): with
// cuda, this rank's GPU (local rank mod visible GPUs); if any rank has none,
// every rank exits 2 with one line (args_init calls it).
void rt_use_device(const char *name);
// Shuts down the comm thread, the GPU and MPI.
void rt_finalize(void);

// A runtime failure on this rank: prints "rank R: what: why" and aborts every rank.
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
// Bad input seen identically by every rank: rank 0 prints one line, all exit 2.
// Must be called by every rank.
void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
// Bad input that only some ranks may see (a file missing on one node): every rank
// calls it; if any rank has ok == 0, the lowest such rank prints msg and all exit 2.
void agree_input(int ok, const char *msg);

// printf on rank 0 only.
void print0(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Seconds on a monotonic clock.
double now_s(void);

// Median of the recorded step times (milliseconds); keeps the last 65536.
void steptime_record(double ms);
double steptime_median(void);
void steptime_reset(void);

#define CHECK_MPI(call) do { int e_ = (call); if (e_ != MPI_SUCCESS) { \
    char s_[MPI_MAX_ERROR_STRING]; int n_ = 0; MPI_Error_string(e_, s_, &n_); \
    fatal("%s: %s", #call, s_); } } while (0)

#define CHECK_IO(cond, ...) do { if (!(cond)) fatal(__VA_ARGS__); } while (0)

#endif
