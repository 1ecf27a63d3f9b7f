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

#include "dtype.h"

typedef enum { OP_SUM, OP_MAX, OP_MIN } RedOp;
typedef enum {
    COLL_ALL_REDUCE, COLL_REDUCE_SCATTER, COLL_ALL_GATHER, COLL_BROADCAST,
    COLL_REDUCE, COLL_SCATTER, COLL_BARRIER, COLL_NKIND
} CollKind;

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
} CommStats;

// Starts the comm thread with the mpi backend (rt_init calls it).
void comm_init(void);
// Stops the comm thread (rt_finalize calls it); safe to call twice.
void comm_finalize(void);
// Selects the backend by name ("mpi"); returns 0 if this build has no such backend.
int comm_use(const char *name);
// Names of the backends this build has, space separated.
const char *comm_backends(void);
const char *coll_name(CollKind k);

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
// Rank 0 prints one row per collective kind in s (a snapshot taken right after
// training), divided by steps: calls, payload bytes and bytes sent per rank;
// then the stage's theory beside the measured total.
void comm_report(const CommStats *s, int steps, const char *theory, double theory_sent_bytes);
// Bytes sent per rank under the ring model, from a count.
double comm_sent_bytes(const CommCount *c);
// Sum over training kinds of the bytes sent per rank.
double comm_total_sent_bytes(const CommStats *s);

// ----------------------------------------------------------------------------
// backends (for comm_*.c only)

typedef struct {
    CollKind kind;
    const void *send;
    void *recv;
    size_t count;   // all-reduce, broadcast, reduce: the vector; else the per-rank slice
    DType dt;
    RedOp op;
    int root;
} CommOp;

// A backend's run returns this when it cannot know what it sent (a library).
#define COMM_SENT_MODEL UINT64_MAX

typedef struct {
    const char *name;
    // Runs on the comm thread and blocks until done; returns the bytes this rank
    // sent, or COMM_SENT_MODEL.
    uint64_t (*run)(const CommOp *op);
    int gpu_buffers;          // 1: reads and writes GPU memory (nccl); 0: host memory
    void (*open)(void);       // optional: on selection, on the main thread, nothing in flight
    void (*close)(void);      // optional: at comm_finalize
} CommBackend;

extern const CommBackend comm_backend_mpi, comm_backend_ring, comm_backend_naive;
#ifdef ZC_CUDA
extern const CommBackend comm_backend_nccl;

// comm_staging.c (CUDA runs): waits for ready (an event on the compute stream,
// recorded when the request was made), copies each buffer the backend cannot
// read (GPU memory for a host backend, host memory for nccl) through a staging
// buffer, runs the collective, and copies the result back.
uint64_t comm_run_staged(const CommBackend *b, const CommOp *op, void *ready);
void comm_staging_free(void);
#endif

// The size of the whole buffer a collective is about: the vector of an
// all-reduce, broadcast or reduce, all N slices of the others (0 for a barrier).
uint64_t comm_payload_bytes(const CommOp *o);
// acc = acc op x, elementwise; 16-bit types are combined in fp32 and rounded once.
void comm_reduce_local(void *acc, const void *x, size_t n, DType dt, RedOp op);

#endif
