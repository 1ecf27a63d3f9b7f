// base: the ground floor of common/. Who this process is (rank, world, device)
// and how a failure ends it. Nothing here knows about MPI: rt registers how to
// abort every rank.
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

#endif
