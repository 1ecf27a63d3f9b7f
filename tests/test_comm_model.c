// test_comm_model: the cost model of common/comm_model against what the
// algorithms do and what a fit must be. The ring's path, counted by hand from
// comm_ring.c (N - 1 steps of n/N per phase, never the whole buffer); the
// sharing of cores; the fit, which recovers exact constants and minimises the
// relative error (a fit that weighs every row alike would let the large sizes
// decide, and the small ones be off by a factor).
#include "check_unit.h"

#include <math.h>

#include "../common/comm_model.h"

// ----------------------------------------------------------------------------
// the ring's path

// a equals b but for the rounding of a sum of N terms.
static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b); }

START_TEST(test_ring_path) {
    const double n = 1 << 20;
    for (int N = 2; N <= 8; N++) {
        double per = n / N;
        CommCost ar = comm_cost(ALGO_RING, COLL_ALL_REDUCE, n, N, N, N);
        ck_assert_msg(near(ar.msgs, 2.0 * (N - 1)) && near(ar.bytes, 2.0 * (N - 1) * per) && near(ar.reduced, (N - 1) * per),
                      "ring all-reduce at N=%d: %g messages, %g bytes, %g reduced; the ring sends 2(N-1) of n/N "
                      "and reduces N-1 of them", N, ar.msgs, ar.bytes, ar.reduced);
        CommCost rs = comm_cost(ALGO_RING, COLL_REDUCE_SCATTER, n, N, N, N);
        ck_assert_msg(near(rs.msgs, N - 1) && near(rs.bytes, (N - 1) * per) && near(rs.reduced, (N - 1) * per),
                      "ring reduce-scatter at N=%d: %g messages, %g bytes, %g reduced", N, rs.msgs, rs.bytes, rs.reduced);
        CommCost ag = comm_cost(ALGO_RING, COLL_ALL_GATHER, n, N, N, N);
        ck_assert_msg(near(ag.msgs, N - 1) && near(ag.bytes, (N - 1) * per) && near(ag.reduced, 0),
                      "ring all-gather at N=%d: %g messages, %g bytes, %g reduced", N, ag.msgs, ag.bytes, ag.reduced);
        ck_assert_msg(near(ar.inter_msgs, 0) && near(ar.inter_bytes, 0), "one node: nothing crosses a node");
        if (N % 2 == 0) {  // two nodes: every step of the ring crosses (its slowest link sets the pace)
            CommCost two = comm_cost(ALGO_RING, COLL_ALL_REDUCE, n, N, N / 2, N);
            ck_assert_msg(near(two.inter_msgs, 2.0 * (N - 1)) && near(two.inter_bytes, 2.0 * (N - 1) * per),
                          "ring on 2 nodes at N=%d: %g messages, %g bytes across", N, two.inter_msgs, two.inter_bytes);
        }
        // Twice as many ranks as cores: every step takes twice as long.
        if (N % 2 == 0) {
            CommCost half = comm_cost(ALGO_RING, COLL_ALL_REDUCE, n, N, N, N / 2);
            ck_assert_msg(near(half.msgs, 2 * ar.msgs) && near(half.bytes, 2 * ar.bytes),
                          "N=%d on %d cores: each step counted twice", N, N / 2);
        }
    }
    CommCost one = comm_cost(ALGO_RING, COLL_ALL_REDUCE, n, 1, 1, 1);
    ck_assert_msg(near(one.msgs, 0) && near(one.bytes, 0), "one rank sends nothing");
}
END_TEST

// ----------------------------------------------------------------------------
// the fit

// Rows of every algorithm and collective at N = 4 over sizes 1 KiB to 64 MiB.
static int rows(CommCost *c, int cap) {
    static const Algo algos[] = { ALGO_RING, ALGO_TREE, ALGO_RD, ALGO_RABENSEIFNER, ALGO_NAIVE };
    int n = 0;
    for (int a = 0; a < 5; a++)
        for (int k = 0; k < 3; k++)
            for (double b = 1024; b <= 64.0 * 1048576 && n < cap; b *= 4)
                c[n++] = comm_cost(algos[a], (CollKind)k, b, 4, 4, 2);
    return n;
}

static double rms_relative(const CommCost *c, const double *t, int n, const CommFit *f) {
    double s = 0;
    for (int i = 0; i < n; i++) {
        double e = (comm_time(&c[i], f, 0, 0) - t[i]) / t[i];
        s += e * e;
    }
    return sqrt(s / n);
}

START_TEST(test_fit_exact) {
    CommCost c[128];
    double t[128], err;
    int n = rows(c, 128);
    CommFit truth = { 8e-6, 7e-7, 9e-11, 7e-11, 6e-11 }, zero = { 0, 0, 0, 0, 0 };
    for (int i = 0; i < n; i++) t[i] = comm_time(&c[i], &truth, 0, 0);
    CommFit f = comm_fit(c, t, n, FIT_ALL, &zero, &err);
    const double got[] = { f.call, f.alpha, f.beta, f.gamma, f.delta }, want[] = { 8e-6, 7e-7, 9e-11, 7e-11, 6e-11 };
    for (int j = 0; j < 5; j++)
        ck_assert_msg(fabs(got[j] - want[j]) <= 1e-9 * want[j], "constant %d: %.6e, the times were made with %.6e",
                      j, got[j], want[j]);
    ck_assert_msg(err < 1e-12, "an exact model fits with error %.3e", err);
}
END_TEST

// Times off the model by +-20% in turn: the fit is the one with the least
// relative error, so moving any constant by 2% either way makes that error no
// smaller, and the error it reports is that error.
START_TEST(test_fit_relative) {
    CommCost c[128];
    double t[128], err;
    int n = rows(c, 128);
    CommFit truth = { 8e-6, 7e-7, 9e-11, 7e-11, 6e-11 }, zero = { 0, 0, 0, 0, 0 };
    for (int i = 0; i < n; i++) t[i] = comm_time(&c[i], &truth, 0, 0) * (i % 2 ? 1.2 : 0.8);
    CommFit f = comm_fit(c, t, n, FIT_ALL, &zero, &err);
    double best = rms_relative(c, t, n, &f);
    ck_assert_msg(fabs(err - best) <= 1e-9 * best, "the fit says error %.6e; its relative error is %.6e", err, best);
    for (int j = 0; j < 5; j++)
        for (int s = -1; s <= 1; s += 2) {
            CommFit g = f;
            double *x[] = { &g.call, &g.alpha, &g.beta, &g.gamma, &g.delta };
            *x[j] *= 1 + 0.02 * s;
            double moved = rms_relative(c, t, n, &g);
            ck_assert_msg(moved >= best * (1 - 1e-9), "constant %d moved by %+d%%: relative error %.6e, below the "
                          "fit's %.6e: the fit does not minimise the relative error", j, 2 * s, moved, best);
        }
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("comm_model");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, test_ring_path);
    tcase_add_test(tc, test_fit_exact);
    tcase_add_test(tc, test_fit_relative);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN("test_comm_model", suite)
