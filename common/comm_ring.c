// comm_ring: the collectives written out over point-to-point (comm_p2p), as
// on a whiteboard, in two backends.
//   ring:  a reduce-scatter passes partial sums around the ring of ranks, N-1
//          steps of one chunk each; an all-gather passes finished chunks the same
//          way; an all-reduce is the one then the other. Every rank sends
//          (N-1)/N of the buffer per phase: the ring model, exactly.
//   naive: everything goes through rank 0, which receives, reduces and sends
//          back: the teaching baseline, whose rank 0 sends N-1 times the buffer.
// The ring runs over any group of ranks (comm_ring.h), so the hierarchical
// backend uses it inside a node and across nodes. Both count the bytes they
// really send. 16-bit sums are added in fp32 and rounded once per step.
// Scratch comes from p2p_scratch (comm_buffers), kept between calls.
#include "comm_ring.h"
#include "base.h"
#include "exercise.h"

#include <string.h>

// The rooted collectives and the barrier, which every hand-written backend
// runs the same way (below), over the world.
static void ring_broadcast(const Group *g, char *buf, size_t bytes, int root);
static void ring_reduce(const Group *g, const CommOp *o);
static void direct_scatter(const Group *g, const CommOp *o);
static void ring_barrier(const Group *g);

// ----------------------------------------------------------------------------
// ring

// In place on buf: at step s rank r passes chunk r-s-1 to the right and adds
// what the left sends (chunk r-s-2) into its own copy. After N-1 steps chunk r
// holds the sum of every rank's chunk r; the other chunks are partial.
void ring_reduce_scatter_inplace(const Group *g, char *buf, size_t n, DType dt, RedOp op) {
    // EXERCISE lc1.2: the ring reduce-scatter, in place over N chunks (the all-reduce's first half)
    //| Chunk k of buf is elements [chunk_first(g, n, k), + chunk_len(g, n, k)): N =
    //| g->size chunks that differ by one element at most. In N-1 steps, member r =
    //| g->me sends one chunk to its right neighbour and receives one from its left
    //| (send_recv(g, ...), which counts the bytes; p2p_mod(g, k) wraps around),
    //| adding what it receives into its own copy of that chunk (comm_reduce_local,
    //| with op). Choose the chunks so that after the last step chunk r holds the
    //| sum over every member: the all-gather (lc1.3) then starts from there.
    //| Scratch from p2p_scratch(SCRATCH_TMP, bytes), which the backend keeps
    //| between calls.
    int N = g->size, r = g->me;
    size_t esz = dtype_size(dt);
    char *tmp = p2p_scratch(SCRATCH_TMP, (n / N + 1) * esz);
    for (int s = 0; s < N - 1; s++) {
        int out = p2p_mod(g, r - s - 1), in = p2p_mod(g, r - s - 2);
        send_recv(g, buf + chunk_first(g, n, out) * esz, chunk_len(g, n, out) * esz, p2p_mod(g, r + 1), tmp,
                  chunk_len(g, n, in) * esz, p2p_mod(g, r - 1));
        comm_reduce_local(buf + chunk_first(g, n, in) * esz, tmp, chunk_len(g, n, in), dt, op);
    }
    // STUB: (void)g, (void)buf, (void)n, (void)dt, (void)op;
    // END EXERCISE
}

// In place on buf, where chunk r is this member's: at step s member r passes
// chunk r-s to the right and receives chunk r-s-1 from the left, into place.
void ring_all_gather_inplace(const Group *g, char *buf, size_t n, DType dt) {
    // EXERCISE lc1.3: the ring all-gather, in place over N chunks
    //| Member r starts with chunk r complete (the reduce-scatter's result, or its
    //| own slice of an all-gather). In N-1 steps it passes one complete chunk to
    //| the right and receives the next from the left, straight into place
    //| (send_recv). After the last step every member holds every chunk. N = 1:
    //| nothing to do.
    int N = g->size, r = g->me;
    size_t esz = dtype_size(dt);
    for (int s = 0; s < N - 1; s++) {
        int out = p2p_mod(g, r - s), in = p2p_mod(g, r - s - 1);
        send_recv(g, buf + chunk_first(g, n, out) * esz, chunk_len(g, n, out) * esz, p2p_mod(g, r + 1),
                  buf + chunk_first(g, n, in) * esz, chunk_len(g, n, in) * esz, p2p_mod(g, r - 1));
    }
    // STUB: (void)g, (void)buf, (void)n, (void)dt;
    // END EXERCISE
}

void ring_all_reduce(const Group *g, char *buf, size_t n, DType dt, RedOp op) {
    ring_reduce_scatter_inplace(g, buf, n, dt, op);
    ring_all_gather_inplace(g, buf, n, dt);
}

// The reduce-scatter of the API: send is read only (unless recv is its own slot),
// so partial sums go to a scratch chunk; the last one is this member's result.
void ring_reduce_scatter(const Group *g, const char *send, char *recv, size_t count, DType dt) {
    // EXERCISE lc1.4: the ring reduce-scatter of the API: N equal slices of count elements
    //| send holds N slices; member r's result, the sum over members of slice r,
    //| goes to recv. send is read only, except that recv may be member r's own
    //| slot in it. The ring of lc1.2 with equal slices and a running sum in
    //| scratch: at each of N-1 steps pass the partial sum to the right, take the
    //| left's, add your own share of that slice to it. Count every byte through
    //| send_recv. N = 1: recv is your own slice. Scratch from p2p_scratch
    //| (SCRATCH_ACC and SCRATCH_TMP).
    int N = g->size, r = g->me;
    size_t bytes = count * dtype_size(dt);
    char *acc = p2p_scratch(SCRATCH_ACC, bytes), *tmp = p2p_scratch(SCRATCH_TMP, bytes);
    memcpy(acc, send + (size_t)r * bytes, bytes);  // N = 1: the answer already
    for (int s = 0; s < N - 1; s++) {
        int out = p2p_mod(g, r - s - 1), in = p2p_mod(g, r - s - 2);
        send_recv(g, s == 0 ? send + (size_t)out * bytes : acc, bytes, p2p_mod(g, r + 1), tmp, bytes,
                  p2p_mod(g, r - 1));
        memcpy(acc, send + (size_t)in * bytes, bytes);
        comm_reduce_local(acc, tmp, count, dt, OP_SUM);
    }
    memcpy(recv, acc, bytes);
    // STUB: (void)g, (void)send, (void)recv, (void)count, (void)dt;
    // END EXERCISE
}

void ring_all_gather(const Group *g, const char *send, char *recv, size_t count, DType dt) {
    size_t bytes = count * dtype_size(dt);
    char *slot = recv + (size_t)g->me * bytes;
    if (send != slot) memcpy(slot, send, bytes);
    ring_all_gather_inplace(g, recv, count * (size_t)g->size, dt);
}

CommRun hand_written_rooted(const CommOp *o, Algo algo) {
    Group w = p2p_world();
    switch (o->kind) {
    case COLL_BROADCAST: ring_broadcast(&w, o->recv, o->count * dtype_size(o->dt), o->root); break;
    case COLL_REDUCE: ring_reduce(&w, o); break;
    case COLL_SCATTER: direct_scatter(&w, o); break;
    case COLL_BARRIER: ring_barrier(&w); break;
    default: fatal("comm %s: unknown collective %d", algo_name(algo), (int)o->kind);
    }
    return counted_run(algo);
}

// A chain from root around the ring: each rank passes the buffer on.
static void ring_broadcast(const Group *g, char *buf, size_t bytes, int root) {
    int p = p2p_mod(g, g->me - root);
    if (p > 0) recv_from(g, buf, bytes, p2p_mod(g, g->me - 1));
    if (p < g->size - 1) send_to(g, buf, bytes, p2p_mod(g, g->me + 1));
}

// A chain that ends at root: each rank adds its contribution and passes it on.
static void ring_reduce(const Group *g, const CommOp *o) {
    size_t bytes = o->count * dtype_size(o->dt);
    int p = p2p_mod(g, g->me - o->root - 1);  // root is last
    char *acc = p2p_scratch(SCRATCH_ACC, bytes), *tmp = p2p_scratch(SCRATCH_TMP, bytes);
    memcpy(acc, o->send, bytes);
    if (p > 0) {
        recv_from(g, tmp, bytes, p2p_mod(g, g->me - 1));
        comm_reduce_local(acc, tmp, o->count, o->dt, o->op);
    }
    if (p < g->size - 1) send_to(g, acc, bytes, p2p_mod(g, g->me + 1));
    else memcpy(o->recv, acc, bytes);
}

// Root sends each rank its slice.
static void direct_scatter(const Group *g, const CommOp *o) {
    size_t bytes = o->count * dtype_size(o->dt);
    if (g->me != o->root) {
        recv_from(g, o->recv, bytes, o->root);
        return;
    }
    for (int k = 0; k < g->size; k++)
        if (k != o->root) send_to(g, (const char *)o->send + (size_t)k * bytes, bytes, k);
    memmove(o->recv, (const char *)o->send + (size_t)o->root * bytes, bytes);
}

// A token twice around the ring: the first lap sees everyone arrive, the
// second lets everyone go.
static void ring_barrier(const Group *g) {
    char token = 0;
    for (int lap = 0; lap < 2 && g->size > 1; lap++) {
        if (g->me == 0) {
            send_to(g, &token, 0, 1);
            recv_from(g, &token, 0, g->size - 1);
        } else {
            recv_from(g, &token, 0, g->me - 1);
            send_to(g, &token, 0, p2p_mod(g, g->me + 1));
        }
    }
}

static CommRun ring_run(const CommOp *o) {
    Group w = p2p_world();
    p2p_reset();
    switch (o->kind) {
    case COLL_ALL_REDUCE: ring_all_reduce(&w, o->recv, o->count, o->dt, o->op); break;
    case COLL_REDUCE_SCATTER: ring_reduce_scatter(&w, o->send, o->recv, o->count, o->dt); break;
    case COLL_ALL_GATHER: ring_all_gather(&w, o->send, o->recv, o->count, o->dt); break;
    default: return hand_written_rooted(o, ALGO_RING);
    }
    return counted_run(ALGO_RING);
}

// ----------------------------------------------------------------------------
// naive: through rank 0

// Rank 0 receives every other rank's n elements and reduces them into acc.
static void gather_reduce_at_0(const Group *g, char *acc, size_t n, DType dt, RedOp op, const void *mine) {
    size_t bytes = n * dtype_size(dt);
    if (rt.rank != 0) {
        send_to(g, mine, bytes, 0);
        return;
    }
    if (acc != mine) memcpy(acc, mine, bytes);
    char *tmp = p2p_scratch(SCRATCH_TMP, bytes);
    for (int k = 1; k < rt.world; k++) {
        recv_from(g, tmp, bytes, k);
        comm_reduce_local(acc, tmp, n, dt, op);
    }
}

// Rank 0 sends `bytes` at buf + k*stride to every rank k; rank k receives into mine.
static void send_from_0(const Group *g, const char *buf, size_t stride, size_t bytes, char *mine) {
    if (rt.rank != 0) {
        recv_from(g, mine, bytes, 0);
        return;
    }
    for (int k = 1; k < rt.world; k++) send_to(g, buf + (size_t)k * stride, bytes, k);
    if (mine != buf) memmove(mine, buf, bytes);
}

static CommRun naive_run(const CommOp *o) {
    size_t esz = dtype_size(o->dt), bytes = o->count * esz, N = (size_t)rt.world;
    Group w = p2p_world(), *g = &w;
    p2p_reset();
    switch (o->kind) {
    case COLL_ALL_REDUCE:
        gather_reduce_at_0(g, o->recv, o->count, o->dt, o->op, o->recv);
        send_from_0(g, o->recv, 0, bytes, o->recv);
        break;
    case COLL_REDUCE_SCATTER: {
        char *acc = rt.rank == 0 ? p2p_scratch(SCRATCH_ACC, N * bytes) : NULL;
        gather_reduce_at_0(g, acc, N * o->count, o->dt, OP_SUM, o->send);
        send_from_0(g, acc, bytes, bytes, o->recv);
        break;
    }
    case COLL_ALL_GATHER: {
        char *slot = (char *)o->recv + (size_t)rt.rank * bytes;
        if (o->send != slot) memcpy(slot, o->send, bytes);
        if (rt.rank != 0) send_to(g, slot, bytes, 0);
        else
            for (int k = 1; k < rt.world; k++) recv_from(g, (char *)o->recv + (size_t)k * bytes, bytes, k);
        send_from_0(g, o->recv, 0, N * bytes, o->recv);
        break;
    }
    case COLL_BROADCAST:  // the root's data goes to rank 0 first (and comes back)
        if (o->root != 0 && rt.rank == o->root) send_to(g, o->recv, bytes, 0);
        if (o->root != 0 && rt.rank == 0) recv_from(g, o->recv, bytes, o->root);
        send_from_0(g, o->recv, 0, bytes, o->recv);
        break;
    case COLL_REDUCE: {
        char *acc = rt.rank == 0 ? p2p_scratch(SCRATCH_ACC, bytes) : NULL;
        gather_reduce_at_0(g, acc, o->count, o->dt, o->op, o->send);
        if (o->root == 0 && rt.rank == 0) memcpy(o->recv, acc, bytes);
        else if (rt.rank == 0) send_to(g, acc, bytes, o->root);
        else if (rt.rank == o->root) recv_from(g, o->recv, bytes, 0);
        break;
    }
    case COLL_SCATTER: {
        char *all = NULL;
        if (o->root != 0 && rt.rank == o->root) send_to(g, o->send, N * bytes, 0);
        if (rt.rank == 0) {
            all = o->root == 0 ? (char *)o->send : p2p_scratch(SCRATCH_ACC, N * bytes);
            if (o->root != 0) recv_from(g, all, N * bytes, o->root);
        }
        send_from_0(g, all, bytes, bytes, o->recv);
        break;
    }
    case COLL_BARRIER: {
        char token = 0;
        gather_reduce_at_0(g, &token, 0, DT_I32, OP_SUM, &token);
        send_from_0(g, &token, 0, 0, &token);
        break;
    }
    default: fatal("comm naive: unknown collective %d", (int)o->kind);
    }
    return counted_run(ALGO_NAIVE);
}

const CommBackend comm_backend_ring = { .name = "ring", .run = ring_run, .counts_sent = 1, .release = p2p_release };
const CommBackend comm_backend_naive = { .name = "naive", .run = naive_run, .counts_sent = 1,
                                         .release = p2p_release };
