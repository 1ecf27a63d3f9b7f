// base: the ground floor of common/. Who this process is (rank, world, device),
// how a failure ends it, printing on rank 0, the clock and the step times.
// Nothing here knows about MPI: rt registers how to abort every rank.
#ifndef BASE_H
#define BASE_H

#include <stddef.h>

typedef enum { DEV_CPU = 0, DEV_CUDA = 1 } Device;

typedef struct {
    int rank, world;        // this process and the number of processes
    int local_rank;         // rank among the processes on this node
    Device device;
    const char *prog;       // the program's name, for messages
} Runtime;

extern Runtime rt;

// A runtime failure on this rank: prints "rank R: what: why", then ends every
// rank through the abort hook (exit 1 when none is set).
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
// Bad input that this rank alone meets where the others cannot be asked (an
// allocation the machine cannot give): as fatal, but exit status 2.
void fatal_input(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
// How fatal ends every rank with a status (rt_init sets MPI_Abort); NULL: this
// process only.
void base_set_abort(void (*abort_all)(int status));
// What fatal does first, on this rank (file removes its half-written files).
void base_on_fatal(void (*cleanup)(void));

// bytes as people read them: "512 B", "3.2 MiB", "60.07 GiB". Valid until four
// more calls.
const char *human_bytes(double bytes);
// printf on rank 0 only.
void print0(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Seconds on a monotonic clock.
double now_s(void);
// A second clock that counts compute instead of time: the kernels mark each
// matrix product they launch. comm reads it at a request's launch and at its
// wait, so whether compute ran under a collective is a fact of order, the same
// on a loaded machine as on an idle one.
void compute_mark(void);
unsigned long compute_marks(void);

// A learner's exercise stub (make exercise) calls this: rank 0 prints
// "exercise ID not done yet" on stderr, once per ID.
void exercise_todo(const char *id);

// Median of the recorded step times (milliseconds); keeps the last 65536.
void steptime_record(double ms);
double steptime_median(void);
void steptime_reset(void);

// For the modules that call MPI (they include mpi.h): a failed call is fatal,
// named with MPI's reason.
#define CHECK_MPI(call) do { int e_ = (call); if (e_ != MPI_SUCCESS) { \
    char s_[MPI_MAX_ERROR_STRING]; int n_ = 0; MPI_Error_string(e_, s_, &n_); \
    fatal("%s: %s", #call, s_); } } while (0)

#endif
