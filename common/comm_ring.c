// comm_ring: the collectives written out over MPI point-to-point, as on a
// whiteboard, in two backends.
//   ring:  a reduce-scatter passes partial sums around the ring of ranks, N-1
//          steps of one chunk each; an all-gather passes finished chunks the same
//          way; an all-reduce is the one then the other. Every rank sends
//          (N-1)/N of the buffer per phase: the ring model, exactly.
//   naive: everything goes through rank 0, which receives, reduces and sends
//          back: the teaching baseline, whose rank 0 sends N-1 times the buffer.
// Both count the bytes they really send. 16-bit sums are added in fp32 and
// rounded once per step. Scratch comes from mem (comm_buffers).
#include "comm_backend.h"
#include "base.h"
#include "mem.h"

#include <limits.h>
#include <mpi.h>
#include <string.h>

#define TAG 7001

static uint64_t sent;  // bytes this rank sent in the current collective

static int mod(int k) { return ((k % rt.world) + rt.world) % rt.world; }

// ----------------------------------------------------------------------------
// point-to-point, counted

static int nbytes(size_t bytes) {
    if (bytes > INT_MAX) fatal("comm ring: a message of %zu bytes exceeds the MPI int limit", bytes);
    return (int)bytes;
}

static inline void send_recv(const void *out, size_t out_bytes, int to, void *in, size_t in_bytes, int from) {
    CHECK_MPI(MPI_Sendrecv(out, nbytes(out_bytes), MPI_BYTE, to, TAG, in, nbytes(in_bytes), MPI_BYTE, from,
                           TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    sent += out_bytes;
}

static void send_to(const void *buf, size_t bytes, int to) {
    CHECK_MPI(MPI_Send(buf, nbytes(bytes), MPI_BYTE, to, TAG, MPI_COMM_WORLD));
    sent += bytes;
}

static void recv_from(void *buf, size_t bytes, int from) {
    CHECK_MPI(MPI_Recv(buf, nbytes(bytes), MPI_BYTE, from, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

// ----------------------------------------------------------------------------
// ring

// An all-reduce of n elements splits them into N chunks that differ by at most one.
static inline size_t chunk_first(size_t n, int k) { return n * (size_t)k / (size_t)rt.world; }
static inline size_t chunk_len(size_t n, int k) { return chunk_first(n, k + 1) - chunk_first(n, k); }

// In place on buf: at step s rank r passes chunk r-s-1 to the right and adds
// what the left sends (chunk r-s-2) into its own copy. After N-1 steps chunk r
// holds the sum of every rank's chunk r; the other chunks are partial.
static void ring_reduce_scatter_inplace(char *buf, size_t n, DType dt, RedOp op) {
    // EXERCISE lc1.2: the ring reduce-scatter, in place over N chunks (the all-reduce's first half)
    //| Chunk k of buf is elements [chunk_first(n, k), + chunk_len(n, k)): N chunks
    //| that differ by one element at most. In N-1 steps, rank r sends one chunk to
    //| its right neighbour and receives one from its left (send_recv, which counts
    //| the bytes), adding what it receives into its own copy of that chunk
    //| (comm_reduce_local, with op). Choose the chunks so that after the last step
    //| chunk r holds the sum over every rank: the all-gather (lc1.3) then starts
    //| from there. Scratch from mem_alloc_host (comm_buffers), freed at the end.
    //| README: lc1_distributed_adam/README.md, "Exercise".
    int N = rt.world, r = rt.rank;
    size_t esz = dtype_size(dt);
    char *tmp = mem_alloc_host(MEM_COMM_BUFFERS, (n / N + 1) * esz);
    for (int s = 0; s < N - 1; s++) {
        int out = mod(r - s - 1), in = mod(r - s - 2);
        send_recv(buf + chunk_first(n, out) * esz, chunk_len(n, out) * esz, mod(r + 1), tmp,
                  chunk_len(n, in) * esz, mod(r - 1));
        comm_reduce_local(buf + chunk_first(n, in) * esz, tmp, chunk_len(n, in), dt, op);
    }
    mem_free(tmp);
    // STUB: (void)buf, (void)n, (void)dt, (void)op;
    // END EXERCISE
}

// In place on buf, where chunk r is this rank's: at step s rank r passes chunk
// r-s to the right and receives chunk r-s-1 from the left, straight into place.
static void ring_all_gather_inplace(char *buf, size_t n, DType dt) {
    // EXERCISE lc1.3: the ring all-gather, in place over N chunks
    //| Rank r starts with chunk r complete (the reduce-scatter's result, or its own
    //| slice of an all-gather). In N-1 steps it passes one complete chunk to the
    //| right and receives the next from the left, straight into place (send_recv).
    //| After the last step every rank holds every chunk. N = 1: nothing to do.
    //| README: lc1_distributed_adam/README.md, "Exercise".
    int N = rt.world, r = rt.rank;
    size_t esz = dtype_size(dt);
    for (int s = 0; s < N - 1; s++) {
        int out = mod(r - s), in = mod(r - s - 1);
        send_recv(buf + chunk_first(n, out) * esz, chunk_len(n, out) * esz, mod(r + 1),
                  buf + chunk_first(n, in) * esz, chunk_len(n, in) * esz, mod(r - 1));
    }
    // STUB: (void)buf, (void)n, (void)dt;
    // END EXERCISE
}

// The reduce-scatter of the API: send is read only (unless recv is its own slot),
// so partial sums go to a scratch chunk; the last one is this rank's result.
static void ring_reduce_scatter(const char *send, char *recv, size_t count, DType dt) {
    // EXERCISE lc1.4: the ring reduce-scatter of the API: N equal slices of count elements
    //| send holds N slices; rank r's result, the sum over ranks of slice r, goes to
    //| recv. send is read only, except that recv may be rank r's own slot in it.
    //| The ring of lc1.2 with equal slices and a running sum in scratch: at each of
    //| N-1 steps pass the partial sum to the right, take the left's, add your own
    //| share of that slice to it. Count every byte through send_recv. N = 1: recv
    //| is your own slice.
    //| README: lc1_distributed_adam/README.md, "Exercise".
    int N = rt.world, r = rt.rank;
    size_t bytes = count * dtype_size(dt);
    char *acc = mem_alloc_host(MEM_COMM_BUFFERS, bytes), *tmp = mem_alloc_host(MEM_COMM_BUFFERS, bytes);
    memcpy(acc, send + (size_t)r * bytes, bytes);  // N = 1: the answer already
    for (int s = 0; s < N - 1; s++) {
        int out = mod(r - s - 1), in = mod(r - s - 2);
        send_recv(s == 0 ? send + (size_t)out * bytes : acc, bytes, mod(r + 1), tmp, bytes, mod(r - 1));
        memcpy(acc, send + (size_t)in * bytes, bytes);
        comm_reduce_local(acc, tmp, count, dt, OP_SUM);
    }
    memcpy(recv, acc, bytes);
    mem_free(acc);
    mem_free(tmp);
    // STUB: (void)send, (void)recv, (void)count, (void)dt;
    // END EXERCISE
}

// A chain from root around the ring: each rank passes the buffer on.
static void ring_broadcast(char *buf, size_t bytes, int root) {
    int p = mod(rt.rank - root);
    if (p > 0) recv_from(buf, bytes, mod(rt.rank - 1));
    if (p < rt.world - 1) send_to(buf, bytes, mod(rt.rank + 1));
}

// A chain that ends at root: each rank adds its contribution and passes it on.
static void ring_reduce(const CommOp *o) {
    size_t bytes = o->count * dtype_size(o->dt);
    int p = mod(rt.rank - o->root - 1);  // root is last
    char *acc = mem_alloc_host(MEM_COMM_BUFFERS, bytes), *tmp = mem_alloc_host(MEM_COMM_BUFFERS, bytes);
    memcpy(acc, o->send, bytes);
    if (p > 0) {
        recv_from(tmp, bytes, mod(rt.rank - 1));
        comm_reduce_local(acc, tmp, o->count, o->dt, o->op);
    }
    if (p < rt.world - 1) send_to(acc, bytes, mod(rt.rank + 1));
    else memcpy(o->recv, acc, bytes);
    mem_free(acc);
    mem_free(tmp);
}

// Root sends each rank its slice.
static void direct_scatter(const CommOp *o) {
    size_t bytes = o->count * dtype_size(o->dt);
    if (rt.rank != o->root) {
        recv_from(o->recv, bytes, o->root);
        return;
    }
    for (int k = 0; k < rt.world; k++)
        if (k != o->root) send_to((const char *)o->send + (size_t)k * bytes, bytes, k);
    memmove(o->recv, (const char *)o->send + (size_t)o->root * bytes, bytes);
}

// A token twice around the ring: the first lap sees everyone arrive, the
// second lets everyone go.
static void ring_barrier(void) {
    char token = 0;
    for (int lap = 0; lap < 2 && rt.world > 1; lap++) {
        if (rt.rank == 0) {
            send_to(&token, 0, 1);
            recv_from(&token, 0, rt.world - 1);
        } else {
            recv_from(&token, 0, rt.rank - 1);
            send_to(&token, 0, mod(rt.rank + 1));
        }
    }
}

static uint64_t ring_run(const CommOp *o) {
    size_t esz = dtype_size(o->dt);
    char *slot = (char *)o->recv + (size_t)rt.rank * o->count * esz;
    sent = 0;
    switch (o->kind) {
    case COLL_ALL_REDUCE:
        ring_reduce_scatter_inplace(o->recv, o->count, o->dt, o->op);
        ring_all_gather_inplace(o->recv, o->count, o->dt);
        break;
    case COLL_REDUCE_SCATTER:
        ring_reduce_scatter(o->send, o->recv, o->count, o->dt);
        break;
    case COLL_ALL_GATHER:
        if (o->send != slot) memcpy(slot, o->send, o->count * esz);
        ring_all_gather_inplace(o->recv, o->count * (size_t)rt.world, o->dt);
        break;
    case COLL_BROADCAST: ring_broadcast(o->recv, o->count * esz, o->root); break;
    case COLL_REDUCE: ring_reduce(o); break;
    case COLL_SCATTER: direct_scatter(o); break;
    case COLL_BARRIER: ring_barrier(); break;
    default: fatal("comm ring: unknown collective %d", (int)o->kind);
    }
    return sent;
}

// ----------------------------------------------------------------------------
// naive: through rank 0

// Rank 0 receives every other rank's n elements and reduces them into acc.
static void gather_reduce_at_0(char *acc, size_t n, DType dt, RedOp op, const void *mine) {
    size_t bytes = n * dtype_size(dt);
    if (rt.rank != 0) {
        send_to(mine, bytes, 0);
        return;
    }
    if (acc != mine) memcpy(acc, mine, bytes);
    char *tmp = mem_alloc_host(MEM_COMM_BUFFERS, bytes);
    for (int k = 1; k < rt.world; k++) {
        recv_from(tmp, bytes, k);
        comm_reduce_local(acc, tmp, n, dt, op);
    }
    mem_free(tmp);
}

// Rank 0 sends `bytes` at buf + k*stride to every rank k; rank k receives into mine.
static void send_from_0(const char *buf, size_t stride, size_t bytes, char *mine) {
    if (rt.rank != 0) {
        recv_from(mine, bytes, 0);
        return;
    }
    for (int k = 1; k < rt.world; k++) send_to(buf + (size_t)k * stride, bytes, k);
    if (mine != buf) memmove(mine, buf, bytes);
}

static uint64_t naive_run(const CommOp *o) {
    size_t esz = dtype_size(o->dt), bytes = o->count * esz, N = (size_t)rt.world;
    sent = 0;
    switch (o->kind) {
    case COLL_ALL_REDUCE:
        gather_reduce_at_0(o->recv, o->count, o->dt, o->op, o->recv);
        send_from_0(o->recv, 0, bytes, o->recv);
        break;
    case COLL_REDUCE_SCATTER: {
        char *acc = rt.rank == 0 ? mem_alloc_host(MEM_COMM_BUFFERS, N * bytes) : NULL;
        gather_reduce_at_0(acc, N * o->count, o->dt, OP_SUM, o->send);
        send_from_0(acc, bytes, bytes, o->recv);
        mem_free(acc);
        break;
    }
    case COLL_ALL_GATHER: {
        char *slot = (char *)o->recv + (size_t)rt.rank * bytes;
        if (o->send != slot) memcpy(slot, o->send, bytes);
        if (rt.rank != 0) send_to(slot, bytes, 0);
        else
            for (int k = 1; k < rt.world; k++) recv_from((char *)o->recv + (size_t)k * bytes, bytes, k);
        send_from_0(o->recv, 0, N * bytes, o->recv);
        break;
    }
    case COLL_BROADCAST:  // the root's data goes to rank 0 first (and comes back)
        if (o->root != 0 && rt.rank == o->root) send_to(o->recv, bytes, 0);
        if (o->root != 0 && rt.rank == 0) recv_from(o->recv, bytes, o->root);
        send_from_0(o->recv, 0, bytes, o->recv);
        break;
    case COLL_REDUCE: {
        char *acc = rt.rank == 0 ? mem_alloc_host(MEM_COMM_BUFFERS, bytes) : NULL;
        gather_reduce_at_0(acc, o->count, o->dt, o->op, o->send);
        if (o->root == 0 && rt.rank == 0) memcpy(o->recv, acc, bytes);
        else if (rt.rank == 0) send_to(acc, bytes, o->root);
        else if (rt.rank == o->root) recv_from(o->recv, bytes, 0);
        mem_free(acc);
        break;
    }
    case COLL_SCATTER: {
        char *all = NULL;
        if (o->root != 0 && rt.rank == o->root) send_to(o->send, N * bytes, 0);
        if (rt.rank == 0) {
            all = o->root == 0 ? (char *)o->send : mem_alloc_host(MEM_COMM_BUFFERS, N * bytes);
            if (o->root != 0) recv_from(all, N * bytes, o->root);
        }
        send_from_0(all, bytes, bytes, o->recv);
        if (all != o->send) mem_free(all);
        break;
    }
    case COLL_BARRIER: {
        char token = 0;
        gather_reduce_at_0(&token, 0, DT_I32, OP_SUM, &token);
        send_from_0(&token, 0, 0, &token);
        break;
    }
    default: fatal("comm naive: unknown collective %d", (int)o->kind);
    }
    return sent;
}

const CommBackend comm_backend_ring = { .name = "ring", .run = ring_run, .counts_sent = 1 };
const CommBackend comm_backend_naive = { .name = "naive", .run = naive_run, .counts_sent = 1 };
