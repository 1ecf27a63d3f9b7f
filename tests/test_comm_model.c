// test_comm_model: the cost model of common/comm_model against what the
// algorithms do and what a fit must be. The ring's path, counted by hand from
// comm_ring.c (N - 1 steps of n/N per phase, never the whole buffer); the
// sharing of cores; the fit, which recovers exact constants and minimises the
// relative error (a fit that weighs every row alike would let the large sizes
// decide, and the small ones be off by a factor); the measured rules, their
// nearest-size lookup and their lines in the fit's file.
#include "check_unit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

// ----------------------------------------------------------------------------
// the measured rules

static CommRules four_sizes(void) {
    CommRules r = { 0 };
    const CommRule add[] = { { COLL_ALL_REDUCE, 4, 16, ALGO_NAIVE }, { COLL_ALL_REDUCE, 4, 1024, ALGO_MPI },
                             { COLL_ALL_REDUCE, 4, 65536, ALGO_TREE }, { COLL_ALL_REDUCE, 4, 64 << 20, ALGO_RING } };
    ck_assert_ptr_null(comm_rules_set(&r, COLL_ALL_REDUCE, 4, add, 4));
    const CommRule other = { COLL_ALL_GATHER, 4, 1024, ALGO_RD };
    ck_assert_ptr_null(comm_rules_set(&r, COLL_ALL_GATHER, 4, &other, 1));
    return r;
}

// The nearest size in ratio: 128 B is 8x from 16 and 8x from 1 KiB (a tie:
// the smaller), 129 B nearer 1 KiB; beyond the ends, the end's. No rule for
// another N or kind: ALGO_N, so the model decides there.
START_TEST(test_rule_pick) {
    CommRules r = four_sizes();
    const struct { double bytes; Algo want; } cases[] = {
        { 1, ALGO_NAIVE }, { 16, ALGO_NAIVE }, { 100, ALGO_NAIVE }, { 128, ALGO_NAIVE }, { 129, ALGO_MPI },
        { 1024, ALGO_MPI }, { 8191, ALGO_MPI }, { 8193, ALGO_TREE }, { 65536, ALGO_TREE }, { 2 << 20, ALGO_TREE },
        { 2.1 * (1 << 20), ALGO_RING }, { 1e12, ALGO_RING } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Algo got = comm_rule_pick(&r, COLL_ALL_REDUCE, cases[i].bytes, 4);
        ck_assert_msg(got == cases[i].want, "all_reduce of %.0f B at N=4: rule %s, the nearest size's is %s",
                      cases[i].bytes, algo_name(got), algo_name(cases[i].want));
    }
    ck_assert_msg(comm_rule_pick(&r, COLL_ALL_REDUCE, 1024, 2) == ALGO_N, "a rule of N=4 taken at N=2");
    ck_assert_msg(comm_rule_pick(&r, COLL_REDUCE_SCATTER, 1024, 4) == ALGO_N, "an all_reduce rule taken for reduce_scatter");
    ck_assert_msg(comm_rule_pick(&r, COLL_ALL_GATHER, 5, 4) == ALGO_RD, "the all_gather rule not taken");
    ck_assert_msg(comm_rule_pick(NULL, COLL_ALL_GATHER, 5, 4) == ALGO_N, "no rules: no pick");
    // Setting a kind and N again replaces its rules and keeps the others.
    const CommRule one = { COLL_ALL_REDUCE, 4, 4096, ALGO_RABENSEIFNER };
    ck_assert_ptr_null(comm_rules_set(&r, COLL_ALL_REDUCE, 4, &one, 1));
    ck_assert_int_eq(r.n, 2);
    ck_assert_msg(comm_rule_pick(&r, COLL_ALL_REDUCE, 16, 4) == ALGO_RABENSEIFNER, "the old all_reduce rules kept");
    ck_assert_msg(comm_rule_pick(&r, COLL_ALL_GATHER, 5, 4) == ALGO_RD, "all_gather's rule lost");
    CommRule many[COMM_MAX_RULES];
    for (int i = 0; i < COMM_MAX_RULES; i++) many[i] = (CommRule){ COLL_REDUCE_SCATTER, 2, 1.0 + i, ALGO_RING };
    ck_assert_ptr_nonnull(strstr(comm_rules_set(&r, COLL_REDUCE_SCATTER, 2, many, COMM_MAX_RULES), "more than"));
}
END_TEST

// Which measurement becomes the rule: the fastest where it leads Open MPI's
// own by 10% or more, else Open MPI's; the fastest where Open MPI's was not
// measured; of equal times, the first.
START_TEST(test_rule_choose) {
    const Algo algo[] = { ALGO_MPI, ALGO_RING, ALGO_RD, ALGO_TREE };
    const struct { double secs[4]; int want; const char *what; } cases[] = {
        { { 10, 8.9, 9.5, 12 }, 1, "ring 11% ahead of mpi" },
        { { 10, 9.1, 9.5, 12 }, 0, "ring 9% ahead: mpi's own kept" },
        { { 10, 9.0001, 9.5, 12 }, 0, "ring just under 10% ahead: mpi's own kept" },
        { { 10, 9.0, 8.5, 12 }, 2, "rd the fastest, 15% ahead" },
        { { 9, 10, 11, 12 }, 0, "mpi the fastest" },
        { { 12, 5, 5, 5 }, 1, "three equal, far ahead: the first of them" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = comm_rule_choose(cases[i].secs, algo, 4);
        ck_assert_msg(got == cases[i].want, "%s: chose %s, want %s", cases[i].what, algo_name(algo[got]),
                      algo_name(algo[cases[i].want]));
    }
    const double secs[] = { 3, 2.9, 4 };  // mpi not among them: the fastest, however small its lead
    ck_assert_int_eq(comm_rule_choose(secs, algo + 1, 3), 1);
    const Algo late[] = { ALGO_RING, ALGO_RD, ALGO_MPI };  // mpi last: still the one to beat by 10%
    const double close[] = { 9.5, 9.8, 10 };
    ck_assert_msg(comm_rule_choose(close, late, 3) == 2, "mpi listed last lost to a lead of 5%%");
}
END_TEST

static char dir[] = "/tmp/zc_comm_model_XXXXXX";

static const char *read_text(const char *text, CommFit *f, CommRules *r) {
    char path[64];
    snprintf(path, sizeof path, "%s/fit", dir);
    FILE *out = fopen(path, "w");
    ck_assert_ptr_nonnull(out);
    fputs(text, out);
    ck_assert_int_eq(fclose(out), 0);
    return comm_fit_read(path, f, r);
}

// What comm_fit_write writes reads back the same; a rule line that is not one
// (an algorithm auto does not choose on one node, a kind it does not choose
// for, N or BYTES out of range or not whole, a word more, a size twice) is
// refused with its line number.
START_TEST(test_rule_file) {
    char path[64];
    snprintf(path, sizeof path, "%s/written", dir);
    CommRules r = four_sizes(), back;
    CommFit f = { 1e-5, 2e-6, 3e-10, 4e-10, 5e-10 }, g;
    ck_assert_ptr_null(comm_fit_write(path, &f, &r, "test"));
    ck_assert_ptr_null(comm_fit_read(path, &g, &back));
    ck_assert_int_eq(back.n, r.n);
    for (int i = 0; i < r.n; i++)
        ck_assert_msg(back.rule[i].kind == r.rule[i].kind && back.rule[i].N == r.rule[i].N &&
                      back.rule[i].bytes == r.rule[i].bytes && back.rule[i].algo == r.rule[i].algo,
                      "rule %d read back differs", i);
    ck_assert_msg(g.alpha == 2e-6 && g.delta == 5e-10, "the constants read back differ");
    const char *consts = "call 1e-5\nalpha 1e-6\nbeta 1e-10\ngamma 1e-10\ndelta 1e-10\n";
    char text[512];
    snprintf(text, sizeof text, "%srule all_reduce 8 64 mpi\nrule reduce_scatter 3 12 naive\n", consts);
    ck_assert_ptr_null(read_text(text, &g, &back));
    ck_assert_int_eq(back.n, 2);
    ck_assert_msg(comm_rule_pick(&back, COLL_REDUCE_SCATTER, 1e6, 3) == ALGO_NAIVE, "a rule read is not followed");
    ck_assert_ptr_null(read_text(consts, &g, &back));
    ck_assert_int_eq(back.n, 0);  // a fit without rules: the model everywhere
    const char *bad[] = { "rule all_reduce 4 16 hier", "rule all_reduce 4 16 auto", "rule broadcast 4 16 ring",
                          "rule all_reduce 0 16 ring", "rule all_reduce 4 0 ring", "rule all_reduce 4 1.5 ring",
                          "rule all_reduce 4 16 ring extra", "rule all_reduce 4 16", "rule all_reduce 4 nan ring",
                          "rule all_reduce 4 16 ring\nrule all_reduce 4 16 rd", "rules all_reduce 4 16 ring" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s\n", consts, bad[i]);
        const char *why = read_text(text, &g, &back);
        ck_assert_msg(why && strstr(why, "line ") && strstr(why, "rule KIND N BYTES ALGO"),
                      "'%s' read as a rule (%s)", bad[i], why ? why : "accepted");
    }
}
END_TEST

static Suite *suite(void) {
    unit_temp_dir(dir);
    Suite *s = suite_create("comm_model");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, test_ring_path);
    tcase_add_test(tc, test_fit_exact);
    tcase_add_test(tc, test_fit_relative);
    tcase_add_test(tc, test_rule_pick);
    tcase_add_test(tc, test_rule_choose);
    tcase_add_test(tc, test_rule_file);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN("test_comm_model", suite)
