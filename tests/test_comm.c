// test_comm: the collectives of every backend (mpi, ring, naive) at any N (the
// runner uses 1-4), counts not divisible by N, fp32, fp64, int and 16-bit types,
// sync and async, and the byte counters exactly: the ring model for mpi, and
// what the hand-written backends really send (the ring model again for ring,
// rank 0's load for naive). Every rank knows every rank's input (a formula of rank and
// index), so each can check its result against a double-precision reference.
#include "check_mpi.h"

#include <math.h>
#include <string.h>

#include "../common/clock.h"
#include "../common/comm_model.h"
#include "../common/comm_p2p.h"
#include "../common/comm_ring.h"
#include "../common/kernels.h"
#include "../common/mem.h"
#include "comm_bytes.h"

// Rank r's input element i: small integers and halves, so float sums are exact
// and results can be compared bit for bit with the reference.
static float input(int r, size_t i) { return (float)((int)((i * 7 + (size_t)r * 13) % 31) - 15) * 0.5f; }

static float *inputs(size_t n) {
    float *x = mem_alloc(MEM_COMM_BUFFERS, n * sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = input(rt.rank, i);
    return x;
}

static double sum_over_ranks(size_t i) {
    double s = 0;
    for (int r = 0; r < rt.world; r++) s += input(r, i);
    return s;
}

static const size_t counts[] = { 1, 2, 7, 1000, 1001, 65537 };
#define NCOUNTS (sizeof counts / sizeof counts[0])

static const char *backend = "mpi";  // the one in use
static const char *algo_ran = "mpi";  // the algorithm that ran the last collective (auto's choice)

// Notes which algorithm ran the collective of kind k between two snapshots.
static void note_algo(const CommStats *before, const CommStats *after, CollKind k) {
    algo_ran = backend;
    for (int a = 0; a < ALGO_N; a++)
        if (after->algo[k][a] > before->algo[k][a]) algo_ran = algo_name(a);
}

// What this rank sends, times N, for one collective about n elements of esz
// bytes (an all-reduce's vector; all N slices of a reduce-scatter or all-gather):
// the ring model for the library, each hand-written algorithm's own bytes
// (tests/comm_bytes.h) for the others, on one node.
static uint64_t expected_sent_xn(CollKind k, size_t n, size_t esz) {
    uint64_t N = (uint64_t)rt.world, P = n * esz;
    if (strcmp(algo_ran, "mpi") == 0) return k == COLL_ALL_REDUCE ? 2 * (N - 1) * P : (N - 1) * P;
    int kind = k == COLL_ALL_REDUCE ? 0 : k == COLL_REDUCE_SCATTER ? 1 : 2;
    uint64_t elems = kind ? n / N : n;
    return N * esz * cb_sent(algo_ran, kind, elems, rt.world, rt.rank, rt.world);
}

// ----------------------------------------------------------------------------
// each collective

static void check_all_reduce(void) {
    for (size_t c = 0; c < NCOUNTS; c++) {
        size_t n = counts[c];
        float *x = inputs(n);
        CommStats before = comm_stats();
        comm_all_reduce(x, n, DT_F32, OP_SUM);
        CommStats after = comm_stats();
        note_algo(&before, &after, COLL_ALL_REDUCE);
        int ok = 1;
        for (size_t i = 0; i < n; i++) ok &= x[i] == (float)sum_over_ranks(i);
        CK_ALL(ok, "%s: all_reduce of %zu floats wrong", backend, n);
        const CommCount *a = &after.kind[COLL_ALL_REDUCE], *b = &before.kind[COLL_ALL_REDUCE];
        CK_ALL(a->calls - b->calls == 1 && a->payload - b->payload == 4 * n &&
                   a->sent_xn - b->sent_xn == expected_sent_xn(COLL_ALL_REDUCE, n, 4),
               "%s: all_reduce accounting wrong for %zu floats", backend, n);
        // MAX as well
        for (size_t i = 0; i < n; i++) x[i] = input(rt.rank, i);
        comm_all_reduce(x, n, DT_F32, OP_MAX);
        for (size_t i = 0; i < n; i++) {
            float m = input(0, i);
            for (int r = 1; r < rt.world; r++) m = fmaxf(m, input(r, i));
            ok &= x[i] == m;
        }
        CK_ALL(ok, "%s: all_reduce max of %zu floats wrong", backend, n);
        mem_free(x);
    }
}

static void check_reduce_scatter(void) {
    for (size_t c = 0; c < NCOUNTS; c++) {
        size_t per = counts[c], n = per * rt.world;
        float *x = inputs(n), *y = mem_alloc(MEM_COMM_BUFFERS, per * sizeof(float));
        CommStats before = comm_stats();
        comm_reduce_scatter(x, y, per, DT_F32);
        CommStats after = comm_stats();
        note_algo(&before, &after, COLL_REDUCE_SCATTER);
        int ok = 1;
        for (size_t i = 0; i < per; i++) ok &= y[i] == (float)sum_over_ranks(rt.rank * per + i);
        // In place: the reduced slice lands in this rank's own slot of the input.
        float *own = x + rt.rank * per;
        comm_reduce_scatter(x, own, per, DT_F32);
        for (size_t i = 0; i < per; i++) ok &= own[i] == y[i];
        CK_ALL(ok, "%s: reduce_scatter of %zu per rank wrong", backend, per);
        const CommCount *a = &after.kind[COLL_REDUCE_SCATTER], *b = &before.kind[COLL_REDUCE_SCATTER];
        CK_ALL(a->calls - b->calls == 1 && a->payload - b->payload == 4 * n &&
                   a->sent_xn - b->sent_xn == expected_sent_xn(COLL_REDUCE_SCATTER, n, 4),
               "%s: reduce_scatter accounting wrong", backend);
        mem_free(x);
        mem_free(y);
    }
}

static void check_all_gather(void) {
    for (size_t c = 0; c < NCOUNTS; c++) {
        size_t per = counts[c], n = per * rt.world;
        float *mine = mem_alloc(MEM_COMM_BUFFERS, per * sizeof(float));
        float *all = mem_alloc(MEM_COMM_BUFFERS, n * sizeof(float));
        for (size_t i = 0; i < per; i++) mine[i] = input(rt.rank, i);
        comm_all_gather(mine, all, per, DT_F32);
        int ok = 1;
        for (int r = 0; r < rt.world; r++)
            for (size_t i = 0; i < per; i++) ok &= all[r * per + i] == input(r, i);
        // In place: this rank's part already sits at its offset of the full buffer.
        fill(all, -99.0f, n);
        for (size_t i = 0; i < per; i++) all[rt.rank * per + i] = input(rt.rank, i);
        CommStats before = comm_stats();
        comm_all_gather(all + rt.rank * per, all, per, DT_F32);
        CommStats after = comm_stats();
        note_algo(&before, &after, COLL_ALL_GATHER);
        for (int r = 0; r < rt.world; r++)
            for (size_t i = 0; i < per; i++) ok &= all[r * per + i] == input(r, i);
        CK_ALL(ok, "%s: all_gather of %zu per rank wrong", backend, per);
        const CommCount *a = &after.kind[COLL_ALL_GATHER], *b = &before.kind[COLL_ALL_GATHER];
        CK_ALL(a->calls - b->calls == 1 && a->payload - b->payload == 4 * n &&
                   a->sent_xn - b->sent_xn == expected_sent_xn(COLL_ALL_GATHER, n, 4),
               "%s: all_gather accounting wrong", backend);
        mem_free(mine);
        mem_free(all);
    }
}

static void check_rooted(void) {
    int root = rt.world - 1;
    for (size_t c = 0; c < NCOUNTS; c++) {
        size_t n = counts[c];
        float *x = inputs(n), *y = mem_alloc(MEM_COMM_BUFFERS, n * sizeof(float));
        comm_broadcast(x, n, DT_F32, root);
        int ok = 1;
        for (size_t i = 0; i < n; i++) ok &= x[i] == input(root, i);
        CK_ALL(ok, "%s: broadcast of %zu wrong", backend, n);
        for (size_t i = 0; i < n; i++) x[i] = input(rt.rank, i);
        comm_reduce(x, y, n, DT_F32, OP_SUM, root);
        for (size_t i = 0; i < n && rt.rank == root; i++) ok &= y[i] == (float)sum_over_ranks(i);
        comm_reduce(x, x, n, DT_F32, OP_SUM, root);  // in place on the root
        for (size_t i = 0; i < n && rt.rank == root; i++) ok &= x[i] == (float)sum_over_ranks(i);
        CK_ALL(ok, "%s: reduce of %zu wrong", backend, n);
        float *all = inputs(n * rt.world);
        comm_scatter(all, y, n, DT_F32, root);
        for (size_t i = 0; i < n; i++) ok &= y[i] == input(root, rt.rank * n + i);
        CK_ALL(ok, "%s: scatter of %zu per rank wrong", backend, n);
        mem_free(all);
        mem_free(x);
        mem_free(y);
    }
    comm_barrier();
    CommStats s = comm_stats();
    CK_ALL(s.kind[COLL_BARRIER].calls >= 1 && s.kind[COLL_BARRIER].payload == 0, "barrier not counted");
}

static void check_other_types(void) {
    double d[3] = { rt.rank, 1.5, -rt.rank };
    comm_metric_sum(d, 3);
    double n = rt.world;
    CK_ALL(d[0] == n * (n - 1) / 2 && d[1] == 1.5 * n && d[2] == -n * (n - 1) / 2, "%s: f64 sum wrong", backend);
    int v = 10 + rt.rank;
    comm_agree_min(&v);
    CK_ALL(v == 10, "%s: i32 min wrong", backend);
}

static void check_16bit(void) {
    // bf16 and fp16 travel as 2 bytes; sums are done in fp32 per pair. The
    // inputs are halves in [-7.5, 7.5], whose sums over a few ranks every type
    // holds exactly, so results are compared bit for bit.
    const DType types[] = { DT_BF16, DT_F16 };
    for (int q = 0; q < 2; q++) {
        DType dt = types[q];
        size_t per = 1001, n = per * rt.world;
        uint16_t *x = mem_alloc(MEM_COMM_BUFFERS, n * 2), *y = mem_alloc(MEM_COMM_BUFFERS, n * 2);
        float *f = mem_alloc(MEM_COMM_BUFFERS, n * 4);
        for (size_t i = 0; i < n; i++) f[i] = input(rt.rank, i);
        cast_from_f32(x, f, dt, n);
        CommStats before = comm_stats();
        comm_reduce_scatter(x, y, per, dt);
        CommStats after = comm_stats();
        note_algo(&before, &after, COLL_REDUCE_SCATTER);
        cast_to_f32(f, y, dt, per);
        int ok = 1;
        for (size_t i = 0; i < per; i++) ok &= f[i] == (float)sum_over_ranks(rt.rank * per + i);
        CK_ALL(ok, "%s: %s reduce_scatter wrong", backend, dtype_name(dt));
        const CommCount *a = &after.kind[COLL_REDUCE_SCATTER], *b = &before.kind[COLL_REDUCE_SCATTER];
        CK_ALL(a->payload - b->payload == 2 * n && a->sent_xn - b->sent_xn == expected_sent_xn(COLL_REDUCE_SCATTER, n, 2),
               "%s reduce_scatter accounting is not 2 bytes per element", dtype_name(dt));
        for (size_t i = 0; i < per; i++) f[i] = input(rt.rank, i);
        cast_from_f32(x, f, dt, per);
        comm_all_gather(x, y, per, dt);
        cast_to_f32(f, y, dt, n);
        for (int r = 0; r < rt.world; r++)
            for (size_t i = 0; i < per; i++) ok &= f[r * per + i] == input(r, i);
        CK_ALL(ok, "%s: %s all_gather wrong", backend, dtype_name(dt));
        for (size_t i = 0; i < per; i++) f[i] = input(rt.rank, i);
        cast_from_f32(x, f, dt, per);
        comm_all_reduce(x, per, dt, OP_SUM);
        cast_to_f32(f, x, dt, per);
        for (size_t i = 0; i < per; i++) ok &= f[i] == (float)sum_over_ranks(i);
        CK_ALL(ok, "%s: %s all_reduce wrong", backend, dtype_name(dt));
        mem_free(x); mem_free(y); mem_free(f);
    }
}

// ----------------------------------------------------------------------------
// async

static void check_async_in_order(void) {
    // Several requests in flight at once; each completes, in order, correctly.
    enum { K = 6 };
    size_t n = 4099;
    float *x[K];
    CommReq req[K];
    for (int k = 0; k < K; k++) {
        x[k] = inputs(n);
        req[k] = comm_all_reduce_async(x[k], n, DT_F32, OP_SUM);
    }
    comm_wait(req[K - 1]);
    int ok = 1;
    for (int k = 0; k < K; k++) {
        ok &= comm_test(req[k]);
        for (size_t i = 0; i < n; i++) ok &= x[k][i] == (float)sum_over_ranks(i);
        mem_free(x[k]);
    }
    CK_ALL(ok, "async all_reduces wrong or not complete");
}

// ----------------------------------------------------------------------------
// grading mode: what a collective leaves undefined holds poison, whatever the
// backend, and a request runs at its wait

static int is_poison_f32(float x) { return isnan(x); }

// 1 if n floats at x are all poison (the range [lo, hi) of them, the rest skipped).
static int all_poison(const float *x, size_t lo, size_t hi) {
    int ok = 1;
    for (size_t i = lo; i < hi; i++) ok &= is_poison_f32(x[i]);
    return ok;
}

static void check_poison(void) {
    CK_ALL(comm_strict(), "%s: the graded programs run in strict mode", backend);
    int N = rt.world, r = rt.rank, root = N - 1;
    for (size_t c = 0; c < NCOUNTS; c++) {
        size_t per = counts[c], n = per * (size_t)N;
        float *x = inputs(n), *y = mem_alloc(MEM_COMM_BUFFERS, n * sizeof(float)), *own = x + (size_t)r * per;
        // An in-place reduce-scatter: the slot holds the sum, the rest is poison.
        comm_reduce_scatter(x, own, per, DT_F32);
        int ok = all_poison(x, 0, (size_t)r * per) && all_poison(x, (size_t)(r + 1) * per, n);
        for (size_t i = 0; i < per; i++) ok &= own[i] == (float)sum_over_ranks((size_t)r * per + i);
        CK_ALL(ok, "%s: in-place reduce_scatter of %zu per rank: the rest of the buffer is not poison", backend, per);
        // Out of place: recv is poison from the launch to the wait; send unchanged.
        for (size_t i = 0; i < n; i++) x[i] = input(r, i);
        CommReq q = comm_reduce_scatter_async(x, y, per, DT_F32);
        ok = all_poison(y, 0, per) && !comm_test(q);
        comm_wait(q);
        for (size_t i = 0; i < per; i++) ok &= y[i] == (float)sum_over_ranks((size_t)r * per + i);
        for (size_t i = 0; i < n; i++) ok &= x[i] == input(r, i);
        CK_ALL(ok, "%s: reduce_scatter of %zu per rank: recv not poison until the wait, or send changed", backend, per);
        // In-place all-gather: the other slots are poison until the wait, this rank's is kept.
        for (size_t i = 0; i < n; i++) y[i] = i / per == (size_t)r ? input(r, i % per) : -7.0f;
        q = comm_all_gather_async(y + (size_t)r * per, y, per, DT_F32);
        ok = all_poison(y, 0, (size_t)r * per) && all_poison(y, (size_t)(r + 1) * per, n);
        for (size_t i = 0; i < per; i++) ok &= y[(size_t)r * per + i] == input(r, i);
        comm_wait(q);
        for (size_t i = 0; i < n; i++) ok &= y[i] == input((int)(i / per), i % per);
        CK_ALL(ok, "%s: in-place all_gather of %zu per rank: not poison until the wait, or wrong after", backend, per);
        // Out of place: all of recv is poison until the wait.
        fill(y, -7.0f, n);
        q = comm_all_gather_async(x, y, per, DT_F32);
        ok = all_poison(y, 0, n);
        comm_wait(q);
        for (size_t i = 0; i < n; i++) ok &= y[i] == input((int)(i / per), i % per);
        CK_ALL(ok, "%s: all_gather of %zu per rank: recv not poison until the wait", backend, per);
        // An all-reduce is in place: until its wait the buffer is this rank's own input.
        q = comm_all_reduce_async(x, per, DT_F32, OP_SUM);
        ok = 1;
        for (size_t i = 0; i < per; i++) ok &= x[i] == input(r, i);
        comm_wait(q);
        for (size_t i = 0; i < per; i++) ok &= x[i] == (float)sum_over_ranks(i);
        CK_ALL(ok, "%s: all_reduce of %zu: the buffer changed before the wait, or wrong after", backend, per);
        // Rooted: what a rank receives is poison until the wait.
        for (size_t i = 0; i < n; i++) x[i] = input(r, i);
        q = comm_broadcast_async(x, per, DT_F32, root);
        ok = r == root ? x[0] == input(r, 0) : all_poison(x, 0, per);
        comm_wait(q);
        CommReq q2 = comm_reduce_async(x, y, per, DT_F32, OP_SUM, root);
        ok &= r != root || all_poison(y, 0, per);
        comm_wait(q2);
        CommReq q3 = comm_scatter_async(x, y, per, DT_F32, root);
        ok &= all_poison(y, 0, per);
        comm_wait(q3);
        for (size_t i = 0; i < per; i++) ok &= y[i] == input(root, (size_t)r * per + i);
        CK_ALL(ok, "%s: broadcast, reduce or scatter of %zu: not poison until the wait, or wrong after", backend, per);
        mem_free(x);
        mem_free(y);
    }
    // The other types: a NaN of their own, and a pattern for integers.
    int32_t iv[8];
    for (int i = 0; i < 8; i++) iv[i] = r;
    comm_reduce_scatter(iv, iv + r, 1, DT_I32);  // N <= 8 here
    int ok = iv[r] == N * (N - 1) / 2;
    for (int i = 0; i < N; i++) ok &= i == r || iv[i] == 0x5a5a5a5a;
    uint16_t h[8];
    for (int i = 0; i < 8; i++) h[i] = 0x3c00;  // 1.0 in fp16
    comm_reduce_scatter(h, h + r, 1, DT_F16);
    ok &= f16_to_f32(h[r]) == (float)N;
    for (int i = 0; i < N; i++) ok &= i == r || isnan(f16_to_f32(h[i]));
    CK_ALL(ok, "%s: int and fp16 leftovers are not the poison of their type", backend);
}

// Each check, once per backend; every backend must give the same answers.
#define FOR_EACH_BACKEND(check)                                          \
    START_TEST(test_##check) {                                          \
        const char *names[] = { "mpi", "ring", "naive", "tree", "rd",   \
                                "rabenseifner", "hier", "auto" };       \
        for (int b = 0; b < 8; b++) {                                   \
            CK_ALL(comm_use(names[b]), "no backend %s", names[b]);      \
            backend = algo_ran = names[b];                              \
            check_##check();                                            \
        }                                                               \
        comm_use("mpi");                                                \
        backend = algo_ran = "mpi";                                     \
    }                                                                   \
    END_TEST
FOR_EACH_BACKEND(all_reduce)
FOR_EACH_BACKEND(reduce_scatter)
FOR_EACH_BACKEND(all_gather)
FOR_EACH_BACKEND(rooted)
FOR_EACH_BACKEND(other_types)
FOR_EACH_BACKEND(16bit)
FOR_EACH_BACKEND(async_in_order)
FOR_EACH_BACKEND(poison)

START_TEST(test_async_overlaps_compute) {
    // The collective runs on the comm thread while this thread multiplies
    // matrices: it starts before the compute ends. That is overlap as a measured
    // fact. The compute takes long enough (~0.2 s) that the comm thread, woken
    // at enqueue, is scheduled even with more ranks than cores.
    comm_set_strict(0);  // the one test of real concurrency: grading mode runs a request at its wait
    size_t n = 1 << 20;
    float *x = inputs(n);
    int d = 256;
    float *A = inputs((size_t)d * d), *B = inputs((size_t)d * d), *C = inputs((size_t)d * d);
    comm_barrier();
    double t0 = now_s();
    CommReq r = comm_all_reduce_async(x, n, DT_F32, OP_SUM);
    double t_work_end;
    do {
        matmul(C, A, B, d, d, d, 0, 0, 0.0f);
        t_work_end = now_s();
    } while (t_work_end - t0 < 0.2);
    comm_wait(r);
    double start, end;
    comm_req_times(r, &start, &end);
    int ok = 1;
    for (size_t i = 0; i < n; i++) ok &= x[i] == (float)sum_over_ranks(i);
    CK_ALL(ok, "async all_reduce result wrong");
    CK_ALL(start >= t0 && start < t_work_end,
           "async all_reduce did not start during the compute (started %.3f s after enqueue, "
           "compute ended at %.3f s)", start - t0, t_work_end - t0);
    mem_free(x); mem_free(A); mem_free(B); mem_free(C);
    comm_set_strict(1);
}
END_TEST

// Runs one collective on backend `name`, returning its kind: kind 0 an
// all-reduce of x (n elements), 1 a reduce-scatter of x into y (per a rank), 2
// an all-gather of x (per) into y; *b and *e: the stats before and after.
static CollKind run_on(const char *name, int kind, float *x, float *y, size_t per, size_t n, CommStats *b,
                       CommStats *e) {
    CK_ALL(comm_use(name), "no backend %s", name);
    *b = comm_stats();
    if (kind == 0) comm_all_reduce(x, n, DT_F32, OP_SUM);
    else if (kind == 1) comm_reduce_scatter(x, y, per, DT_F32);
    else comm_all_gather(x, y, per, DT_F32);
    *e = comm_stats();
    comm_use("mpi");
    return kind == 0 ? COLL_ALL_REDUCE : kind == 1 ? COLL_REDUCE_SCATTER : COLL_ALL_GATHER;
}

// ----------------------------------------------------------------------------
// the emulated link delays the messages between nodes, and only those: a ring
// all-reduce on one node pays for none, on N nodes of one rank for all 2(N-1).

START_TEST(test_link_between_nodes_only) {
    CK_ALL(p2p_set_link("inter:1us,100GB/s") == NULL, "the link is refused");
    for (int K = 1; K <= rt.world; K++) {
        if (rt.world % K) continue;
        rt_nodes(K);
        float *x = inputs(1001);
        CK_ALL(comm_use("ring"), "no backend ring");
        comm_all_reduce(x, 1001, DT_F32, OP_SUM);
        P2PCount c = p2p_count();
        comm_use("mpi");
        mem_free(x);
        // Rank r sends to r + 1, on another node when there are several and r + 1 starts one.
        uint64_t want = K < rt.world && (rt.rank + 1) % K == 0 ? 2 * (uint64_t)(rt.world - 1) : 0;
        CK_ALL(c.delayed == want, "nodes of %d at N=%d: rank %d's link delayed %llu messages, want %llu", K, rt.world,
               rt.rank, (unsigned long long)c.delayed, (unsigned long long)want);
    }
    rt_nodes(0);
    CK_ALL(p2p_set_link(NULL) == NULL, "the link is not removed");
}
END_TEST

// ----------------------------------------------------------------------------
// auto: for every collective and size, the algorithm the cost model predicts
// fastest here (the fit and link in use, one node, this machine's cores),
// derived again from comm_model, or the measured rule where the fit in use
// has one for this N: a choice that always takes the ring, or takes the
// slowest, fails at the sizes where another algorithm wins.

static const char *model_pick(CollKind k, double bytes) {
    static const Algo candidates[] = { ALGO_RING, ALGO_TREE, ALGO_RD, ALGO_RABENSEIFNER, ALGO_NAIVE };
    static CommRules r;
    CommFit f;
    const char *from;
    if (comm_fit_load(&f, &r, &from)) return "(no fit)";
    Algo ruled = comm_rule_pick(&r, k, bytes, rt.world);
    if (ruled != ALGO_N) return algo_name(ruled);
    double la, lb, best = 0;
    comm_link(&la, &lb);
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    Algo pick = ALGO_RING;
    for (int i = 0; i < 5; i++) {
        CommCost c = comm_cost(candidates[i], k, bytes, rt.world, rt.world, cores);
        double t = comm_time(&c, &f, la, lb);
        if (i == 0 || t < best) best = t, pick = candidates[i];
    }
    return algo_name(pick);
}

START_TEST(test_auto_chooses) {
    const size_t pers[] = { 1, 64, 4096, 262144 };  // elements per rank: 4 B to 1 MiB each
    int differ = 0;
    for (int kind = 0; kind < 3; kind++)
        for (size_t s = 0; s < 4; s++) {
            size_t per = pers[s], n = per * (size_t)rt.world;
            float *x = inputs(n), *y = mem_alloc(MEM_COMM_BUFFERS, n * sizeof(float));
            CommStats b, e;
            CollKind k = run_on("auto", kind, x, y, per, n, &b, &e);
            note_algo(&b, &e, k);
            const char *want = model_pick(k, (double)n * sizeof(float));
            differ += strcmp(want, "ring") != 0;
            CK_ALL(strcmp(algo_ran, want) == 0, "auto, %s of %zu bytes at N=%d: ran %s, the model's fastest is %s",
                   coll_name(k), n * sizeof(float), rt.world, algo_ran, want);
            mem_free(x);
            mem_free(y);
        }
    // Where the model prefers another algorithm somewhere, the check above is
    // one a ring-only rule fails. With the built-in fit it does at N = 4 on any
    // number of cores (every rank shares them alike in each algorithm); a fit
    // measured here (make comm-fit) may find the ring fastest everywhere.
    const char *from = comm_fit_loaded_from();
    if (rt.world == 4 && from && strncmp(from, "built in", 8) == 0)
        CK_ALL(differ > 0, "at N=4 the built-in fit prefers the ring everywhere: this check shows nothing");
}
END_TEST

// ----------------------------------------------------------------------------
// nodes: every layout of N ranks into nodes of K, every hand-written backend
// right, and the bytes to other nodes counted apart: exactly as the algorithm
// says for the ring and hier, all of them with one rank per node, none with
// one node.

START_TEST(test_nodes) {
    const char *algos[] = { "ring", "naive", "tree", "rd", "rabenseifner", "hier", "auto" };
    const size_t sizes[] = { 1, 7, 1001 };
    for (int K = 1; K <= rt.world; K++) {
        if (rt.world % K) continue;
        rt_nodes(K);
        CK_ALL(comm_nodes() == rt.world / K, "nodes of %d: %d nodes, want %d", K, comm_nodes(), rt.world / K);
        for (int a = 0; a < 7; a++)
            for (size_t s = 0; s < 3; s++)
                for (int kind = 0; kind < 3; kind++) {
                    size_t per = sizes[s], n = kind ? per * (size_t)rt.world : per;
                    float *x = inputs(n), *y = mem_alloc(MEM_COMM_BUFFERS, n * sizeof(float));
                    CommStats b, e;
                    CollKind k = run_on(algos[a], kind, x, y, per, n, &b, &e);
                    int ok = 1;
                    for (size_t i = 0; i < (kind == 1 ? per : n); i++)
                        ok &= kind == 0 ? x[i] == (float)sum_over_ranks(i) :
                              kind == 1 ? y[i] == (float)sum_over_ranks((size_t)rt.rank * per + i) :
                                          y[i] == input((int)(i / per), i % per);
                    const char *ran = algos[a];
                    for (int q = 0; q < ALGO_N; q++)
                        if (e.algo[k][q] > b.algo[k][q]) ran = algo_name(q);
                    uint64_t sent = (e.kind[k].sent_xn - b.kind[k].sent_xn) / (uint64_t)rt.world;
                    uint64_t inter = (e.kind[k].inter_xn - b.kind[k].inter_xn) / (uint64_t)rt.world;
                    uint64_t want = 4 * cb_sent(ran, kind, per, rt.world, rt.rank, K);
                    int exact = strcmp(ran, "ring") == 0 || strcmp(ran, "hier") == 0;
                    uint64_t want_inter = K == rt.world ? 0 : K == 1 ? want : 4 * cb_inter(ran, kind, per, rt.world,
                                                                                            rt.rank, K);
                    ck_all_msg(ok, "%s (ran %s) kind %d of %zu at N=%d in nodes of %d: wrong result on rank %d",
                               algos[a], ran, kind, per, rt.world, K, rt.rank);
                    ck_all_msg(sent == want, "%s (ran %s) kind %d of %zu at N=%d in nodes of %d: rank %d sent %llu "
                               "bytes, want %llu", algos[a], ran, kind, per, rt.world, K, rt.rank,
                               (unsigned long long)sent, (unsigned long long)want);
                    ck_all_msg(!(exact || K == 1 || K == rt.world) || inter == want_inter, "%s (ran %s) kind %d of "
                               "%zu at N=%d in nodes of %d: rank %d sent %llu bytes to other nodes, want %llu",
                               algos[a], ran, kind, per, rt.world, K, rt.rank, (unsigned long long)inter,
                               (unsigned long long)want_inter);
                    mem_free(x);
                    mem_free(y);
                }
    }
    rt_nodes(0);
}
END_TEST

// ----------------------------------------------------------------------------
// the ring written by hand (lecture 1's exercises lc1.2 to lc1.4): each result
// and each rank's bytes, judged with the library's collectives, since the ring
// under test may be broken

// Runs one collective on a backend; what it sent is *sent, *inter of it to
// other nodes (bytes, this rank).
#define ON_BACKEND(name, call, sent, inter) do {                                 \
        comm_use(name);                                                          \
        CommStats b_ = comm_stats();                                             \
        call;                                                                    \
        CommStats a_ = comm_stats();                                             \
        comm_use("mpi");                                                         \
        *(sent) = *(inter) = 0;                                                  \
        for (int k_ = 0; k_ < COLL_NKIND; k_++) {                                \
            *(sent) += (a_.kind[k_].sent_xn - b_.kind[k_].sent_xn) / (uint64_t)rt.world;   \
            *(inter) += (a_.kind[k_].inter_xn - b_.kind[k_].inter_xn) / (uint64_t)rt.world; \
        }                                                                        \
    } while (0)
#define ON_RING(call, sent) do { uint64_t i_; ON_BACKEND("ring", call, sent, &i_); } while (0)

// The bytes the ring sends for a collective of n elements of esz bytes.
static uint64_t ring_bytes(CollKind k, size_t n, size_t esz) {
    int kind = k == COLL_ALL_REDUCE ? 0 : k == COLL_REDUCE_SCATTER ? 1 : 2;
    return esz * cb_sent("ring", kind, kind ? n / (size_t)rt.world : n, rt.world, rt.rank, rt.world);
}

static void check_ring_bytes(const char *what, size_t n, uint64_t sent, uint64_t want, const char *how) {
    ck_all_msg(sent == want, "ring %s of %zu elements at N=%d: rank %d sent %llu bytes, the ring sends %llu (%s)",
               what, n, rt.world, rt.rank, (unsigned long long)sent, (unsigned long long)want, how);
}

// An all-reduce of a hand-written backend in other types and reductions than
// fp32 sums, on whole numbers that every type holds exactly (so any order of
// the sums gives the same bits): a type or an operation not handed on to the
// reduction (comm_reduce_local) fails here. `layout` says where it ran.
static void check_types_and_ops(const char *backend, const char *what, const char *layout) {
    static const struct { DType dt; RedOp op; const char *name; } cases[] = {
        { DT_BF16, OP_SUM, "bf16 sums" }, { DT_F64, OP_MAX, "f64 maxima" }, { DT_I32, OP_MIN, "int32 minima" } };
    const size_t n = 7;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        DType dt = cases[c].dt;
        size_t esz = dtype_size(dt), bad = n;
        void *x = mem_alloc(MEM_COMM_BUFFERS, n * esz);
        double got = 0, want = 0;
        for (size_t i = 0; i < n; i++) {
            double v = 2.0 * input(rt.rank, i);
            if (dt == DT_BF16) ((uint16_t *)x)[i] = f32_to_bf16((float)v);
            else if (dt == DT_F64) ((double *)x)[i] = v;
            else ((int32_t *)x)[i] = (int32_t)v;
        }
        uint64_t sent, inter;
        ON_BACKEND(backend, comm_all_reduce(x, n, dt, cases[c].op), &sent, &inter);
        for (size_t i = 0; i < n && bad == n; i++) {
            double w = 2.0 * input(0, i);
            for (int r = 1; r < rt.world; r++) {
                double v = 2.0 * input(r, i);
                w = cases[c].op == OP_SUM ? w + v : cases[c].op == OP_MAX ? fmax(w, v) : fmin(w, v);
            }
            double g = dt == DT_BF16 ? bf16_to_f32(((uint16_t *)x)[i]) : dt == DT_F64 ? ((double *)x)[i] :
                                                                                        ((int32_t *)x)[i];
            if (g != w) bad = i, got = g, want = w;
        }
        ck_all_msg(bad == n, "%s all_reduce of %zu %s at N=%d%s: rank %d holds %g at element %zu, want %g: pass "
                   "the type and the operation on to the reduction (comm_reduce_local(..., dt, op))", what, n,
                   cases[c].name, rt.world, layout, rt.rank, got, bad, want);
        mem_free(x);
    }
}

// The all-reduce's two halves, each called alone on the world from this thread
// (the comm thread idle, strict about every message's length), so that a
// failure names the half at fault. After ring_reduce_scatter_inplace (lc1.2)
// this rank's chunk holds the sum over ranks:
static void check_reduce_scatter_half(size_t n) {
    Group w = p2p_world();
    float *x = inputs(n);
    size_t first = chunk_first(&w, n, rt.rank), len = chunk_len(&w, n, rt.rank), bad = len;
    comm_barrier();
    p2p_release();  // what the call keeps is then what it asked for
    size_t held = mem_stats().cur[MEM_COMM_BUFFERS], most = 2 * ((n + (size_t)rt.world - 1) / (size_t)rt.world) + 1;
    p2p_begin(p2p_text, "ring_reduce_scatter_inplace (lc1.2)", 1);
    ring_reduce_scatter_inplace(&w, (char *)x, n, DT_F32, OP_SUM);
    p2p_begin(NULL, NULL, 0);
    size_t scratch = mem_stats().cur[MEM_COMM_BUFFERS] - held;
    ck_all_msg(scratch <= most * sizeof(float), "ring_reduce_scatter_inplace (lc1.2) of %zu floats at N=%d: rank %d "
               "keeps %zu bytes of scratch; the ring needs room for one chunk as it arrives (at most %zu floats "
               "here, two chunks' worth), not the buffer", n, rt.world, rt.rank, scratch, most);
    for (size_t i = 0; i < len && bad == len; i++)
        if (x[first + i] != (float)sum_over_ranks(first + i)) bad = i;
    size_t at = first + (bad < len ? bad : 0);
    ck_all_msg(bad == len, "ring_reduce_scatter_inplace (lc1.2, the all-reduce's first half) of %zu floats at N=%d: "
               "rank %d's own chunk %d (elements %zu to %zu) holds %g at element %zu, the sum over ranks is %g%s", n,
               rt.world, rt.rank, rt.rank, first, first + len - 1, bad < len ? x[at] : 0.0f, at,
               bad < len ? sum_over_ranks(at) : 0, bad < len && x[at] == input(rt.rank, at) ?
               ": its own value, nothing was added there" : "");
    mem_free(x);
}

// ... and after ring_all_gather_inplace (lc1.3) from this rank's chunk alone
// complete (chunks that differ in length by one), every chunk is complete everywhere.
static void check_all_gather_half(size_t n, const char *after) {
    Group w = p2p_world();
    float *x = mem_alloc(MEM_COMM_BUFFERS, (n + 1) * sizeof(float));
    size_t first = chunk_first(&w, n, rt.rank), len = chunk_len(&w, n, rt.rank), bad = n;
    for (size_t i = 0; i < n; i++) x[i] = i >= first && i < first + len ? (float)sum_over_ranks(i) : -99.0f;
    comm_barrier();
    uint64_t before = p2p_count().sent;
    p2p_begin(p2p_text, "ring_all_gather_inplace (lc1.3)", 1);
    ring_all_gather_inplace(&w, (char *)x, n, DT_F32);
    p2p_begin(NULL, NULL, 0);
    uint64_t sent = p2p_count().sent - before;
    for (size_t i = 0; i < n && bad == n; i++)
        if (x[i] != (float)sum_over_ranks(i)) bad = i;
    int from = 0;
    while (bad < n && chunk_first(&w, n, from + 1) <= bad) from++;
    ck_all_msg(bad == n, "ring_all_gather_inplace (lc1.3%s) of %zu floats at N=%d in chunks of %zu or %zu, each rank's "
               "own chunk complete: rank %d holds %g at element %zu (chunk %d), which is %g%s", after, n, rt.world,
               n / (size_t)rt.world, (n + (size_t)rt.world - 1) / (size_t)rt.world, rt.rank, bad < n ? x[bad] : 0.0f,
               bad, from, bad < n ? sum_over_ranks(bad) : 0, bad < n && x[bad] == -99.0f ?
               ": nothing arrived there" : "");
    // Passing to the right, a rank sends every chunk but its right neighbour's,
    // which reaches it last (cb_ring_ag). With chunks of two lengths that fixes
    // each rank's bytes, and a ring turned the other way (every value right)
    // leaves out its left neighbour's chunk instead: say so, or lc1.2's byte
    // count fails later with no word of the direction. Only where every rank
    // sent that: one rank's count can match it by chance (one step too many,
    // at a chunk of 0 elements).
    int right = p2p_mod(&w, rt.rank + 1);
    uint64_t want = cb_ring_ag(n, rt.world, rt.rank) * sizeof(float),
             turned = (n - cb_chunk(n, rt.world, p2p_mod(&w, rt.rank - 1))) * sizeof(float);
    int every_turned = sent == turned;
    comm_agree_min(&every_turned);
    ck_all_msg(sent == want, "ring_all_gather_inplace (lc1.3%s) of %zu floats at N=%d: rank %d sent "
               "%llu bytes; passing each chunk to the right it sends every chunk but rank %d's (its right neighbour's, "
               "the last to arrive): %llu%s", after, n, rt.world, rt.rank, (unsigned long long)sent, right,
               (unsigned long long)want, every_turned ? ": those are the bytes of a ring turned the other way, "
               "sending to rank r - 1 and receiving from r + 1; send to the right (r + 1), receive from the left" : "");
    mem_free(x);
}

START_TEST(test_ring_all_reduce) {
    for (size_t c = 0; c < NCOUNTS; c++) {
        size_t n = counts[c];
        check_reduce_scatter_half(n);
        check_all_gather_half(n, ", the all-reduce's second half; the first is right, so look at lc1.3: lc1.3a grades "
                              "it alone");
        float *x = inputs(n);
        uint64_t sent;
        ON_RING(comm_all_reduce(x, n, DT_F32, OP_SUM), &sent);
        size_t bad = n;
        for (size_t i = 0; i < n && bad == n; i++)
            if (x[i] != (float)sum_over_ranks(i)) bad = i;
        ck_all_msg(bad == n, "ring all_reduce of %zu floats at N=%d: rank %d holds %g at element %zu, the sum over "
                   "ranks is %g%s", n, rt.world, rt.rank, bad < n ? x[bad] : 0.0f, bad, bad < n ? sum_over_ranks(bad) : 0,
                   bad < n && x[bad] == input(rt.rank, bad) ? ": its own value, nothing was added there" : "");
        check_ring_bytes("all_reduce", n, sent, ring_bytes(COLL_ALL_REDUCE, n, 4),
                         "in each of 2(N-1) steps, one chunk of about n/N elements");
        mem_free(x);
    }
    check_types_and_ops("ring", "ring", "");
}
END_TEST

START_TEST(test_ring_all_gather) {
    for (size_t c = 0; c < NCOUNTS; c++) check_all_gather_half(counts[c], "");
    for (size_t c = 0; c < NCOUNTS; c++) {
        size_t per = counts[c], n = per * rt.world;
        float *mine = inputs(per), *all = mem_alloc(MEM_COMM_BUFFERS, n * sizeof(float));
        fill(all, -99.0f, n);
        for (int inplace = 0; inplace < 2; inplace++) {
            uint64_t sent;
            if (inplace) copy(all + rt.rank * per, mine, per);
            ON_RING(comm_all_gather(inplace ? all + rt.rank * per : mine, all, per, DT_F32), &sent);
            size_t bad = n;
            for (size_t i = 0; i < n && bad == n; i++)
                if (all[i] != input((int)(i / per), i % per)) bad = i;
            ck_all_msg(bad == n, "ring all_gather (%s) of %zu per rank at N=%d: rank %d holds %g at element %zu of "
                       "rank %zu's slice, which is %g", inplace ? "in place" : "from a separate slice", per, rt.world,
                       rt.rank, bad < n ? all[bad] : 0.0f, bad < n ? bad % per : 0, bad < n ? bad / per : 0,
                       bad < n ? input((int)(bad / per), bad % per) : 0.0f);
            check_ring_bytes("all_gather", n, sent, ring_bytes(COLL_ALL_GATHER, n, 4),
                             "in each of N-1 steps, one slice");
            fill(all, -99.0f, n);
        }
        mem_free(mine);
        mem_free(all);
    }
}
END_TEST

START_TEST(test_ring_reduce_scatter) {
    const DType types[] = { DT_F32, DT_BF16 };
    for (int q = 0; q < 2; q++)
        for (size_t c = 0; c < NCOUNTS; c++) {
            DType dt = types[q];
            size_t per = counts[c], n = per * rt.world, esz = dtype_size(dt);
            float *f = inputs(n), *got = mem_alloc(MEM_COMM_BUFFERS, per * sizeof(float));
            void *x = mem_alloc(MEM_COMM_BUFFERS, n * esz), *y = mem_alloc(MEM_COMM_BUFFERS, per * esz);
            for (int inplace = 0; inplace < 2; inplace++) {
                cast_from_f32(x, f, dt, n);
                void *out = inplace ? (char *)x + rt.rank * per * esz : y;
                uint64_t sent;
                ON_RING(comm_reduce_scatter(x, out, per, dt), &sent);
                cast_to_f32(got, out, dt, per);
                size_t bad = per;
                for (size_t i = 0; i < per && bad == per; i++)
                    if (got[i] != (float)sum_over_ranks(rt.rank * per + i)) bad = i;
                ck_all_msg(bad == per, "ring reduce_scatter (%s, %s) of %zu per rank at N=%d: rank %d's element %zu is "
                           "%g, the sum over ranks of its slice is %g%s", dtype_name(dt), inplace ? "in place" : "into "
                           "a separate buffer", per, rt.world, rt.rank, bad, bad < per ? got[bad] : 0.0f,
                           bad < per ? sum_over_ranks(rt.rank * per + bad) : 0,
                           bad < per && got[bad] == input(rt.rank, rt.rank * per + bad) ?
                               ": its own value, nothing was added" : "");
                check_ring_bytes("reduce_scatter", n, sent, ring_bytes(COLL_REDUCE_SCATTER, n, esz),
                                 "in each of N-1 steps, one slice");
            }
            mem_free(f); mem_free(got); mem_free(x); mem_free(y);
        }
}
END_TEST

// ----------------------------------------------------------------------------
// lecture 1's other all-reduces (lc1.6, lc1.7): exact sums of small integers
// and each rank's bytes against the algorithm's, at every N from 2 to 8

// The first element of x (n floats) that is not the sum over ranks, or n.
static size_t first_wrong_sum(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (x[i] != (float)sum_over_ranks(i)) return i;
    return n;
}

START_TEST(test_rd_all_reduce) {
    CbFold f = cb_fold(rt.world);
    for (size_t c = 0; c < NCOUNTS; c++) {
        size_t n = counts[c];
        float *x = inputs(n);
        uint64_t sent, inter;
        ON_BACKEND("rd", comm_all_reduce(x, n, DT_F32, OP_SUM), &sent, &inter);
        size_t bad = first_wrong_sum(x, n);
        int own = bad < n && x[bad] == input(rt.rank, bad);
        // Which ranks kept their own values, seen from every rank: the past-the-pairs ones, the even ones.
        double kept[2] = { own && f.rem && rt.rank >= 2 * f.rem, own && rt.rank < 2 * f.rem && rt.rank % 2 == 0 };
        comm_metric_max(kept, 2);
        ck_all_msg(bad == n, "recursive-doubling all_reduce of %zu floats at N=%d (the largest power of two below "
                   "it %d, so %d pair%s fold): rank %d holds %g at element %zu, the sum over ranks is %g%s", n,
                   rt.world, f.p, f.rem, f.rem == 1 ? "" : "s", rt.rank, bad < n ? x[bad] : 0.0f, bad,
                   bad < n ? sum_over_ranks(bad) : 0,
                   kept[0] ? "; ranks from 2 rem on kept their own values: a rank past the pairs that fold must "
                             "still take part, as virtual rank r - rem, and the even rank of each pair must fold in" :
                   kept[1] ? "; the even rank of a pair kept its own value: it must get the result back from the odd "
                             "one" :
                   own ? ": its own value, nothing was added there" : "");
        uint64_t want = 4 * cb_sent("rd", 0, n, rt.world, rt.rank, rt.world);
        ck_all_msg(sent == want, "recursive-doubling all_reduce of %zu floats at N=%d: rank %d sent %llu bytes; it "
                   "sends %llu (%s)", n, rt.world, rt.rank, (unsigned long long)sent, (unsigned long long)want,
                   rt.rank < 2 * f.rem ? (rt.rank % 2 ? "lg p swaps of the whole buffer, then the result to its "
                                                        "pair" : "the whole buffer once, to its pair") :
                                         "lg p swaps of the whole buffer, p the largest power of two <= N");
        mem_free(x);
    }
    check_types_and_ops("rd", "recursive-doubling", "");
}
END_TEST

START_TEST(test_hier_all_reduce) {
    for (int K = 1; K <= rt.world; K++) {
        if (rt.world % K) continue;
        rt_nodes(K);
        int M = rt.world / K;
        for (size_t c = 0; c < NCOUNTS; c++) {
            size_t n = counts[c];
            float *x = inputs(n);
            uint64_t sent, inter;
            ON_BACKEND("hier", comm_all_reduce(x, n, DT_F32, OP_SUM), &sent, &inter);
            size_t bad = first_wrong_sum(x, n);
            ck_all_msg(bad == n, "hierarchical all_reduce of %zu floats at N=%d as %d node%s of %d: rank %d holds %g "
                       "at element %zu, the sum over ranks is %g", n, rt.world, M, M > 1 ? "s" : "", K, rt.rank,
                       bad < n ? x[bad] : 0.0f, bad, bad < n ? sum_over_ranks(bad) : 0);
            uint64_t want = 4 * cb_sent("hier", 0, n, rt.world, rt.rank, K);
            uint64_t want_inter = 4 * cb_inter("hier", 0, n, rt.world, rt.rank, K);
            ck_all_msg(inter == want_inter, "hierarchical all_reduce of %zu floats at N=%d as %d nodes of %d: rank %d "
                       "sent %llu bytes to other nodes; it sends %llu: across nodes each rank all-reduces only its "
                       "own chunk (1/%d of the buffer), with the ranks of its local index", n, rt.world, M, K,
                       rt.rank, (unsigned long long)inter, (unsigned long long)want_inter, K);
            ck_all_msg(sent == want, "hierarchical all_reduce of %zu floats at N=%d as %d nodes of %d: rank %d sent "
                       "%llu bytes in all; it sends %llu: a ring reduce-scatter and all-gather inside the node, and "
                       "its chunk's ring all-reduce across nodes", n, rt.world, M, K, rt.rank,
                       (unsigned long long)sent, (unsigned long long)want);
            mem_free(x);
        }
        char layout[64];
        snprintf(layout, sizeof layout, " as %d node%s of %d", M, M > 1 ? "s" : "", K);
        check_types_and_ops("hier", "hierarchical", layout);
    }
    rt_nodes(0);
}
END_TEST

START_TEST(test_no_leaks) {
    CK_ALL(mem_live_count() == 0, "%zu allocations still live", mem_live_count());
}
END_TEST

// ----------------------------------------------------------------------------
// the checks (0 points: project tests, which make test runs and make grade does not)

static int checks(Graded *g) {
    int n = 0;
    g[n++] = (Graded){ "lc1.2a", 10, "1 2 3 4 5 6 7 8", "ring all_reduce: sums of uneven chunks, the bytes exact", test_ring_all_reduce };
    g[n++] = (Graded){ "lc1.3a", 10, "1 2 3 4 5 6 7 8", "ring all_gather: every slice everywhere, the bytes exact", test_ring_all_gather };
    g[n++] = (Graded){ "lc1.4a", 10, "1 2 3 4 5 6 7 8", "ring reduce_scatter: each rank its slice's sum, fp32 and bf16", test_ring_reduce_scatter };
    g[n++] = (Graded){ "lc1.6a", 10, "1 2 3 4 5 6 7 8", "recursive doubling all_reduce: any N, the bytes exact", test_rd_all_reduce };
    g[n++] = (Graded){ "lc1.7a", 10, "1 2 3 4 5 6 7 8", "hierarchical all_reduce: every node layout, bytes across nodes exact", test_hier_all_reduce };
    g[n++] = (Graded){ "all-reduce", 0, "", "all-reduce", test_all_reduce };
    g[n++] = (Graded){ "reduce-scatter", 0, "", "reduce-scatter", test_reduce_scatter };
    g[n++] = (Graded){ "all-gather", 0, "", "all-gather", test_all_gather };
    g[n++] = (Graded){ "rooted", 0, "", "rooted", test_rooted };
    g[n++] = (Graded){ "other-types", 0, "", "other-types", test_other_types };
    g[n++] = (Graded){ "16bit", 0, "", "16bit", test_16bit };
    g[n++] = (Graded){ "async-in-order", 0, "", "async-in-order", test_async_in_order };
    g[n++] = (Graded){ "poison", 0, "", "poison", test_poison };
    g[n++] = (Graded){ "nodes", 0, "", "nodes", test_nodes };
    g[n++] = (Graded){ "auto-chooses", 0, "", "auto-chooses", test_auto_chooses };
    g[n++] = (Graded){ "link-between-nodes", 0, "", "link-between-nodes", test_link_between_nodes_only };
    g[n++] = (Graded){ "async-overlaps-compute", 0, "", "async-overlaps-compute", test_async_overlaps_compute };
    g[n++] = (Graded){ "no-leaks", 0, "", "no-leaks", test_no_leaks };
    return n;
}

static void setup(void) {}

GRADED_MAIN("test_comm", checks, setup)
