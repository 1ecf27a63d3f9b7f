// comm_tree: the binomial tree, the latency-bound algorithm. A reduce to rank 0
// takes ceil(lg N) steps: at step k every rank whose bit k is set sends what
// it holds to the rank 2^k below it and drops out; a broadcast from rank 0 is
// the same tree run downward. So an all-reduce is 2 ceil(lg N) messages of the
// whole buffer on the critical path, against the ring's 2(N-1) messages of 1/N
// of it: fewer, larger messages, which wins for small buffers. Reduce-scatter
// is the reduce, then a binomial scatter of the slices from rank 0; all-gather
// a binomial gather to rank 0, then the broadcast. Any N: a rank with no
// partner at some step (r + 2^k >= N) just skips it.
#include "base.h"
#include "comm_ring.h"

#include <string.h>

// ----------------------------------------------------------------------------
// the four trees (rooted at member 0)

// acc (n elements) ends on member 0 holding the sum over the group; tmp is
// scratch for n elements.
static void reduce_to_0(const Group *g, char *acc, char *tmp, size_t n, DType dt, RedOp op) {
    int N = g->size, r = g->me;
    size_t bytes = n * dtype_size(dt);
    for (int mask = 1; mask < N; mask <<= 1) {
        if (r & mask) {
            send_to(g, acc, bytes, r - mask);
            return;
        }
        if (r + mask < N) {
            recv_from(g, tmp, bytes, r + mask);
            comm_reduce_local(acc, tmp, n, dt, op);
        }
    }
}

// buf (bytes) on member 0 reaches every member.
static void broadcast_from_0(const Group *g, char *buf, size_t bytes) {
    int N = g->size, r = g->me, mask = 1;
    while (mask < N && !(r & mask)) mask <<= 1;  // r's lowest set bit: its parent is r - mask
    if (mask < N) recv_from(g, buf, bytes, r - mask);
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (r + mask < N) send_to(g, buf, bytes, r + mask);
}

// all holds N blocks of block bytes, member order. Member 0 has them all; each
// member ends with its own block (and those it passed on) in place.
static void scatter_from_0(const Group *g, char *all, size_t block) {
    int N = g->size, r = g->me, mask = 1;
    while (mask < N && !(r & mask)) mask <<= 1;
    if (mask < N) {  // r's subtree: blocks r .. r + mask - 1, those that exist
        int have = mask < N - r ? mask : N - r;
        recv_from(g, all + (size_t)r * block, (size_t)have * block, r - mask);
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (r + mask < N) {
            int give = mask < N - r - mask ? mask : N - r - mask;
            send_to(g, all + (size_t)(r + mask) * block, (size_t)give * block, r + mask);
        }
}

// The reverse: each member starts with its own block in place; member 0 ends
// with all N.
static void gather_to_0(const Group *g, char *all, size_t block) {
    int N = g->size, r = g->me;
    for (int mask = 1; mask < N; mask <<= 1) {
        if (r & mask) {
            int have = mask < N - r ? mask : N - r;
            send_to(g, all + (size_t)r * block, (size_t)have * block, r - mask);
            return;
        }
        if (r + mask < N) {
            int take = mask < N - r - mask ? mask : N - r - mask;
            recv_from(g, all + (size_t)(r + mask) * block, (size_t)take * block, r + mask);
        }
    }
}

// ----------------------------------------------------------------------------
// the backend

static CommRun tree_run(const CommOp *o) {
    Group w = p2p_world();
    size_t esz = dtype_size(o->dt), N = (size_t)rt.world, bytes = o->count * esz;
    p2p_reset();
    switch (o->kind) {
    case COLL_ALL_REDUCE: {
        char *tmp = p2p_scratch(SCRATCH_TMP, bytes);
        reduce_to_0(&w, o->recv, tmp, o->count, o->dt, o->op);
        broadcast_from_0(&w, o->recv, bytes);
        break;
    }
    case COLL_REDUCE_SCATTER: {  // send is read only: the sums build in scratch
        char *acc = p2p_scratch(SCRATCH_ACC, N * bytes), *tmp = p2p_scratch(SCRATCH_TMP, N * bytes);
        memcpy(acc, o->send, N * bytes);
        reduce_to_0(&w, acc, tmp, N * o->count, o->dt, OP_SUM);
        scatter_from_0(&w, acc, bytes);
        memcpy(o->recv, acc + (size_t)rt.rank * bytes, bytes);
        break;
    }
    case COLL_ALL_GATHER: {
        char *slot = (char *)o->recv + (size_t)rt.rank * bytes;
        if (o->send != slot) memcpy(slot, o->send, bytes);
        gather_to_0(&w, o->recv, bytes);
        broadcast_from_0(&w, o->recv, N * bytes);
        break;
    }
    default: return hand_written_rooted(o, ALGO_TREE);
    }
    return counted_run(ALGO_TREE);
}

const CommBackend comm_backend_tree = { .name = "tree", .run = tree_run, .counts_sent = 1, .release = p2p_release };
