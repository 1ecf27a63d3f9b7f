// comm_rd: recursive doubling and halving, in two backends.
//   rd:            all-reduce by recursive doubling: lg N steps, at step k each
//                  rank swaps its whole buffer with the rank whose number
//                  differs in bit k, and adds. Few messages, but each the whole
//                  buffer: Open MPI's choice for small messages.
//   rabenseifner:  all-reduce as a reduce-scatter by recursive halving (at step
//                  k swap half of what is left, keep the half that holds your
//                  slice) followed by an all-gather by recursive doubling: the
//                  ring's bytes, 2(N-1)/N of the buffer, in 2 lg N messages.
//                  Open MPI's choice for large messages on few ranks.
// Both reduce-scatter by halving and all-gather by doubling.
//
// N not a power of two (MPICH's and Open MPI's way): with p the largest power
// of two below N and rem = N - p, the first 2 rem ranks pair up. The even one
// of each pair hands its data to the odd one and sits out; the odd ones and
// the ranks from 2 rem on are p "virtual" ranks that run the power-of-two
// algorithm; at the end each odd rank hands the result back. Virtual rank v
// stands for real ranks 2v and 2v+1 (v < rem) or v + rem: always consecutive,
// so the blocks it holds are one contiguous range of the buffer.
#include "base.h"
#include "comm_ring.h"
#include "exercise.h"

#include <string.h>

// ----------------------------------------------------------------------------
// virtual ranks

typedef struct { int p, rem; } Fold;

static Fold fold_of(int N) {
    int p = 1;
    while (2 * p <= N) p *= 2;
    return (Fold){ p, N - p };
}

// The real rank that runs virtual rank v, and the first real rank v stands for
// (first_real(p) = N, so [first_real(v), first_real(v + 1)) are v's ranks).
static int real_of(Fold f, int v) { return v < f.rem ? 2 * v + 1 : v + f.rem; }
static int first_real(Fold f, int v) { return v < f.rem ? 2 * v : v + f.rem; }
// Member r's virtual rank, or -1 if it sits out.
static int virtual_of(Fold f, int r) { return r < 2 * f.rem ? (r % 2 ? r / 2 : -1) : r - f.rem; }

// A buffer of N blocks of elements: block k starts at element off(k).
typedef struct {
    size_t n, count;  // count > 0: blocks of count each; 0: n cut like the ring's chunks
    int N;
} Blocks;

static size_t off(const Blocks *b, int k) {
    return b->count ? (size_t)k * b->count : b->n * (size_t)k / (size_t)b->N;
}

// The element where virtual rank v's blocks start (vstart(p) is the end).
static size_t vstart(const Blocks *b, Fold f, int v) { return off(b, first_real(f, v)); }

// ----------------------------------------------------------------------------
// the power-of-two cores, on virtual rank v (every real rank that takes part)

// In place on buf: afterwards v's blocks hold the sum over all ranks. tmp holds
// half the buffer.
static void halving(const Group *g, Fold f, int v, char *buf, char *tmp, const Blocks *b, DType dt, RedOp op) {
    size_t esz = dtype_size(dt);
    int lo = 0, hi = f.p;
    for (int mask = f.p / 2; mask > 0; mask >>= 1) {
        int mid = lo + mask, partner = real_of(f, v ^ mask);
        int keep_lo = v < mid ? lo : mid, keep_hi = v < mid ? mid : hi;
        int give_lo = v < mid ? mid : lo, give_hi = v < mid ? hi : mid;
        size_t k0 = vstart(b, f, keep_lo), k1 = vstart(b, f, keep_hi);
        size_t g0 = vstart(b, f, give_lo), g1 = vstart(b, f, give_hi);
        send_recv(g, buf + g0 * esz, (g1 - g0) * esz, partner, tmp, (k1 - k0) * esz, partner);
        comm_reduce_local(buf + k0 * esz, tmp, k1 - k0, dt, op);
        lo = keep_lo, hi = keep_hi;
    }
}

// In place on buf, where v's blocks are complete: afterwards every block is.
static void doubling(const Group *g, Fold f, int v, char *buf, const Blocks *b, DType dt) {
    size_t esz = dtype_size(dt);
    int lo = v, hi = v + 1;
    for (int mask = 1; mask < f.p; mask <<= 1) {
        int plo = lo ^ mask, phi = plo + (hi - lo), partner = real_of(f, v ^ mask);
        size_t m0 = vstart(b, f, lo), m1 = vstart(b, f, hi), p0 = vstart(b, f, plo), p1 = vstart(b, f, phi);
        send_recv(g, buf + m0 * esz, (m1 - m0) * esz, partner, buf + p0 * esz, (p1 - p0) * esz, partner);
        if (plo < lo) lo = plo;
        hi = lo + 2 * mask;
    }
}

// The first 2 rem ranks fold: the even one sends its n elements of buf to the
// odd one, which adds them in (tmp: scratch for n).
static void fold_in(const Group *g, Fold f, char *buf, char *tmp, size_t n, DType dt, RedOp op) {
    int r = g->me;
    size_t bytes = n * dtype_size(dt);
    if (r >= 2 * f.rem) return;
    if (r % 2 == 0) {
        send_to(g, buf, bytes, r + 1);
    } else {
        recv_from(g, tmp, bytes, r - 1);
        comm_reduce_local(buf, tmp, n, dt, op);
    }
}

// The fold undone: the odd one of each pair hands the bytes of buf it holds
// for both back to the even one.
static void fold_out(const Group *g, Fold f, char *buf, size_t bytes) {
    int r = g->me;
    if (r >= 2 * f.rem) return;
    if (r % 2) send_to(g, buf, bytes, r - 1);
    else recv_from(g, buf, bytes, r + 1);
}

// ----------------------------------------------------------------------------
// recursive doubling

// In place: every member ends with the sum (op) of every member's n elements.
void rd_all_reduce(const Group *g, char *buf, size_t n, DType dt, RedOp op) {
    // EXERCISE lc1.6: the all-reduce by recursive doubling, for any N
    //| With p the largest power of two <= N and rem = N - p: the first 2 rem
    //| members pair up, the even one sends its whole buffer to the odd one
    //| (send_to, recv_from), which adds it in (comm_reduce_local) and takes part
    //| as virtual rank r / 2; members from 2 rem on are virtual rank r - rem.
    //| Then lg p steps among the p virtual ranks: at step k, virtual rank v swaps
    //| its whole buffer with virtual rank v ^ 2^k (send_recv) and adds what it
    //| receives. Last, each odd member of the first 2 rem sends the result to its
    //| even partner. Every byte goes through send_to or send_recv (counted).
    //| Scratch from p2p_scratch(SCRATCH_TMP, bytes), kept between calls.
    Fold f = fold_of(g->size);
    int r = g->me, v = virtual_of(f, r);
    size_t bytes = n * dtype_size(dt);
    char *tmp = p2p_scratch(SCRATCH_TMP, bytes);
    fold_in(g, f, buf, tmp, n, dt, op);
    for (int mask = 1; v >= 0 && mask < f.p; mask <<= 1) {
        int partner = real_of(f, v ^ mask);
        send_recv(g, buf, bytes, partner, tmp, bytes, partner);
        comm_reduce_local(buf, tmp, n, dt, op);
    }
    if (r < 2 * f.rem) {  // the odd one of each pair hands the result back
        if (r % 2) send_to(g, buf, bytes, r - 1);
        else recv_from(g, buf, bytes, r + 1);
    }
    // STUB: (void)g, (void)buf, (void)n, (void)dt, (void)op;
    // END EXERCISE
}

// In place, Rabenseifner's: halving, then doubling, over the ring's chunks.
static void rabenseifner_all_reduce(const Group *g, char *buf, size_t n, DType dt, RedOp op) {
    Fold f = fold_of(g->size);
    int r = g->me, v = virtual_of(f, r);
    Blocks b = { n, 0, g->size };
    char *tmp = p2p_scratch(SCRATCH_TMP, n * dtype_size(dt));
    fold_in(g, f, buf, tmp, n, dt, op);
    if (v >= 0) {
        halving(g, f, v, buf, tmp, &b, dt, op);
        doubling(g, f, v, buf, &b, dt);
    }
    fold_out(g, f, buf, n * dtype_size(dt));
}

// send: N slices of count; recv gets the sum of slice g->me.
static void halving_reduce_scatter(const Group *g, const char *send, char *recv, size_t count, DType dt) {
    Fold f = fold_of(g->size);
    int r = g->me, v = virtual_of(f, r);
    size_t esz = dtype_size(dt), n = (size_t)g->size * count;
    Blocks b = { n, count, g->size };
    char *work = p2p_scratch(SCRATCH_ACC, n * esz), *tmp = p2p_scratch(SCRATCH_TMP, n * esz);
    memcpy(work, send, n * esz);  // send is read only
    fold_in(g, f, work, tmp, n, dt, OP_SUM);
    if (v >= 0) halving(g, f, v, work, tmp, &b, dt, OP_SUM);
    if (r < 2 * f.rem && r % 2) send_to(g, work + (size_t)(r - 1) * count * esz, count * esz, r - 1);
    if (r < 2 * f.rem && r % 2 == 0) recv_from(g, recv, count * esz, r + 1);
    else memcpy(recv, work + (size_t)r * count * esz, count * esz);
}

// recv gets every member's count elements of send, in member order.
static void doubling_all_gather(const Group *g, const char *send, char *recv, size_t count, DType dt) {
    Fold f = fold_of(g->size);
    int r = g->me, v = virtual_of(f, r);
    size_t esz = dtype_size(dt), n = (size_t)g->size * count, bytes = count * esz;
    Blocks b = { n, count, g->size };
    char *slot = recv + (size_t)r * bytes;
    if (send != slot) memcpy(slot, send, bytes);
    if (r < 2 * f.rem) {  // the even one's slice goes to the odd one first
        if (r % 2 == 0) send_to(g, slot, bytes, r + 1);
        else recv_from(g, slot - bytes, bytes, r - 1);
    }
    if (v >= 0) doubling(g, f, v, recv, &b, dt);
    fold_out(g, f, recv, n * esz);
}

// ----------------------------------------------------------------------------
// the backends

static CommRun run_with(const CommOp *o, Algo algo) {
    Group w = p2p_world();
    p2p_reset();
    switch (o->kind) {
    case COLL_ALL_REDUCE:
        if (algo == ALGO_RD) rd_all_reduce(&w, o->recv, o->count, o->dt, o->op);
        else rabenseifner_all_reduce(&w, o->recv, o->count, o->dt, o->op);
        break;
    case COLL_REDUCE_SCATTER: halving_reduce_scatter(&w, o->send, o->recv, o->count, o->dt); break;
    case COLL_ALL_GATHER: doubling_all_gather(&w, o->send, o->recv, o->count, o->dt); break;
    default: return hand_written_rooted(o, algo);
    }
    return counted_run(algo);
}

static CommRun rd_run(const CommOp *o) { return run_with(o, ALGO_RD); }
static CommRun rabenseifner_run(const CommOp *o) { return run_with(o, ALGO_RABENSEIFNER); }

const CommBackend comm_backend_rd = { .name = "rd", .run = rd_run, .counts_sent = 1, .release = p2p_release };
const CommBackend comm_backend_rabenseifner = { .name = "rabenseifner", .run = rabenseifner_run, .counts_sent = 1,
                                                .release = p2p_release };
