// comm_backend: what a collective backend implements, and the few things every
// backend needs (the kinds of collective, one request's description, its
// payload, a local reduction). comm.h is what the stages call; this is what
// comm.c calls, one collective at a time, on its comm thread. Nothing here
// reaches the stages: comm.h includes comm_kinds.h, the words both share.
#ifndef COMM_BACKEND_H
#define COMM_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "comm_kinds.h"

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

// What one collective did on this rank.
typedef struct {
    uint64_t sent;    // bytes sent, or COMM_SENT_MODEL
    uint64_t inter;   // of them, to ranks on other nodes (0 where not known)
    Algo algo;        // the algorithm that ran
} CommRun;

typedef struct {
    const char *name;
    // Runs on the comm thread and blocks until done.
    CommRun (*run)(const CommOp *op);
    int counts_sent;          // 1: run returns what it really sent (hand-written)
    int gpu_buffers;          // 1: reads and writes GPU memory (nccl); 0: host memory
    void (*open)(void);       // optional: on selection, on the main thread, nothing in flight
    void (*release)(void);    // optional: on switching to another, likewise: what it keeps between calls goes
    void (*close)(void);      // optional: at comm_finalize
} CommBackend;

// 1 while the comm thread is inside one of MPI's collectives that no rank
// leaves before every rank has entered it (an all-reduce, reduce-scatter or
// all-gather of some elements, a barrier): for a watchdog that proves a deadlock.
int comm_mpi_waits_for_all(void);

extern const CommBackend comm_backend_mpi, comm_backend_ring, comm_backend_naive, comm_backend_tree, comm_backend_rd,
    comm_backend_rabenseifner, comm_backend_hier, comm_backend_auto;
#ifdef ZC_CUDA
extern const CommBackend comm_backend_nccl;

// comm_staging.c (CUDA runs): waits for ready (an event on the compute stream,
// recorded when the request was made), copies each buffer the backend cannot
// read (GPU memory for a host backend, host memory for nccl) through a staging
// buffer, runs the collective, and copies the result back.
CommRun comm_run_staged(const CommBackend *b, const CommOp *op, void *ready);
void comm_staging_free(void);
// Bytes the staging buffers hold now (part of comm_buffers): page-locked host, GPU.
void comm_staging_bytes(size_t *host, size_t *gpu);
#endif

// The size of the whole buffer a collective is about: the vector of an
// all-reduce, broadcast or reduce, all N slices of the others (0 for a barrier).
uint64_t comm_payload_bytes(const CommOp *o);
// acc = acc op x, elementwise; 16-bit types are combined in fp32 and rounded once.
void comm_reduce_local(void *acc, const void *x, size_t n, DType dt, RedOp op);

#endif
