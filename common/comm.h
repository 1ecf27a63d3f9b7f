// comm: collectives for the stages. Every call goes to one communication thread
// per rank that runs queued collectives in order, like a CUDA stream: an async
// call enqueues and returns a request, a sync call enqueues and waits. Only that
// thread talks to MPI during training. Every call is counted when it completes
// (calls, payload, bytes this rank sent: what a hand-written backend really
// sent, the ring model's figure for a library) so the reports are measured.
#ifndef COMM_H
#define COMM_H

#include <stddef.h>
#include <stdint.h>

#include "comm_backend.h"

typedef long CommReq;  // a ticket: requests complete in the order they were made

// Counts for one kind of collective. payload is the size of the full buffer the
// collective is about (the whole vector of an all-reduce, all N shards of a
// reduce-scatter or all-gather). sent_xn is the bytes this rank sent times N,
// so the theory stays an exact integer. For the mpi backend it is the ring
// model's: all-reduce 2(N-1)P, reduce-scatter / all-gather (N-1)P; broadcast and
// reduce (N-1)P and scatter (N-1)P/N, which for these rooted collectives is the
// total over ranks spread evenly.
typedef struct { uint64_t calls, payload, sent_xn; } CommCount;

typedef struct {
    CommCount kind[COLL_NKIND];  // training traffic
    CommCount metrics;           // scalar reductions for logging and reports
    long steps;                  // the training steps counted (progress_end sets it)
} CommStats;

// Seconds a kind of request ran on the comm thread, and the part of that which
// ran while the caller computed (before it began to wait).
typedef struct { double time, hidden; } CommOverlap;

// Told of every finished collective (the trace registers one): its kind, when
// it was launched, started and ended (now_s clock), and its payload in bytes.
// Called on the comm thread.
typedef void (*CommObserver)(CollKind kind, double launch, double start, double end,
                             uint64_t payload);

// Starts the comm thread with the mpi backend (rt_init calls it). With
// ZC_COMM_DELAY_US set, every collective starts that many microseconds after
// its turn comes (the grader sets it, so that a buffer freed or reused too
// early is always freed before the collective reads it).
void comm_init(void);
// Stops the comm thread (rt_finalize calls it); safe to call twice.
void comm_finalize(void);
// Selects the backend by name ("mpi"); returns 0 if this build has no such backend.
int comm_use(const char *name);
// Names of the backends this build has, space separated.
const char *comm_backends(void);
// The backend in use.
const CommBackend *comm_backend(void);
// Registers the one observer of finished collectives (NULL: none).
void comm_observe(CommObserver fn);

// In place: buf holds count elements on every rank.
void comm_all_reduce(void *buf, size_t count, DType dt, RedOp op);
// send holds N*recvcount elements; recv gets this rank's reduced slice (sum).
// In place when recv == send + rank*recvcount (the slice lands in its own slot,
// the rest of send is left undefined); otherwise send and recv must not overlap.
void comm_reduce_scatter(const void *send, void *recv, size_t recvcount, DType dt);
// recv gets N*sendcount elements; in place when send == recv + rank*sendcount.
void comm_all_gather(const void *send, void *recv, size_t sendcount, DType dt);
void comm_broadcast(void *buf, size_t count, DType dt, int root);
// recv (count elements) is written on root only.
void comm_reduce(const void *send, void *recv, size_t count, DType dt, RedOp op, int root);
// send (N*recvcount elements) is read on root only.
void comm_scatter(const void *send, void *recv, size_t recvcount, DType dt, int root);
void comm_barrier(void);

// The same collectives, returning at once; the buffers belong to the comm
// thread until comm_wait says the request is done.
CommReq comm_all_reduce_async(void *buf, size_t count, DType dt, RedOp op);
CommReq comm_reduce_scatter_async(const void *send, void *recv, size_t recvcount, DType dt);
CommReq comm_all_gather_async(const void *send, void *recv, size_t sendcount, DType dt);
CommReq comm_broadcast_async(void *buf, size_t count, DType dt, int root);
CommReq comm_reduce_async(const void *send, void *recv, size_t count, DType dt, RedOp op, int root);
CommReq comm_scatter_async(const void *send, void *recv, size_t recvcount, DType dt, int root);
// Blocks until the request (and every one before it) is done.
void comm_wait(CommReq req);
// comm_wait, adding to o the time the request ran and the part of it under compute.
void comm_wait_timed(CommReq req, CommOverlap *o);
// 1 if the request is done, without blocking.
int comm_test(CommReq req);
// Start and end (now_s clock) of a finished request's run on the comm thread;
// valid until 1024 further requests have been made.
void comm_req_times(CommReq req, double *start, double *end);

// Scalar reductions outside the training traffic (counted under metrics).
void comm_metric_sum(double *v, int n);
void comm_metric_max(double *v, int n);
void comm_agree_min(int *v);

CommStats comm_stats(void);
void comm_reset_stats(void);
// Bytes sent per rank under the ring model, from a count.
double comm_sent_bytes(const CommCount *c);
// Sum over training kinds of the bytes sent per rank.
double comm_total_sent_bytes(const CommStats *s);

#endif
