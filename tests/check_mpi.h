// check_mpi: running Check suites on every rank. Tests run without fork (MPI and
// fork do not mix); every assertion in a multi-rank test is agreed by all ranks
// (CK_ALL), so all ranks leave a failing test together and none is left waiting
// in a collective. Rank 0 prints Check's output; the verdict is the same everywhere.
#ifndef CHECK_MPI_H
#define CHECK_MPI_H

#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/comm.h"
#include "../common/rt.h"

// Fails the test on every rank if cond is false on any rank.
#define CK_ALL(cond, ...) do {                                   \
        int ok_ = (cond) ? 1 : 0;                                \
        comm_agree_min(&ok_);                                    \
        ck_assert_msg(ok_, __VA_ARGS__);                         \
    } while (0)

// Fails the test on every rank if ok is 0 on any rank, with the message that
// the lowest such rank formats: rank 0 prints what rank 2 saw. Collective,
// through the backend in use (a test of a hand-written backend switches back
// to the library's first).
static inline void ck_all_msg(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void ck_all_msg(int ok, const char *fmt, ...) {
    int first = ok ? rt.world : rt.rank;
    comm_agree_min(&first);
    if (first == rt.world) return;
    int32_t msg[128] = { 0 };  // 512 bytes of text, moved as ints
    if (rt.rank == first) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf((char *)msg, sizeof msg, fmt, ap);
        va_end(ap);
    }
    comm_broadcast(msg, 128, DT_I32, first);
    ck_abort_msg("%s", (const char *)msg);
}

// Runs the suite on every rank; returns the number of failed tests (same on all).
static inline int run_suite(Suite *s) {
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, rt.rank == 0 ? CK_NORMAL : CK_SILENT);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    double worst = failed;  // a rank-local failure still fails the whole run
    comm_metric_max(&worst, 1);
    return (int)worst;
}

// ----------------------------------------------------------------------------
// graded checks (make grade): each is one Check test in a test case of its own,
// named by its id, so the grader runs it alone (CK_RUN_CASE=id) at each N.

typedef struct {
    const char *id;       // "lc2.1a": exercise lc2.1's check a
    int points;           // per N; 0: a project test, run by make test only
    const char *ns;       // the ranks it is graded at ("1 2 3 4"; lc0's "1")
    const char *title;    // what it checks, as the grader prints it
    const TTest *test;
} Graded;

#define GRADED_MAX 64

// 1 if the list of ranks ns ("2 3 4") holds n; an empty list holds every n.
static inline int graded_at(const char *ns, int n) {
    if (!ns[0]) return 1;
    for (const char *p = ns; *p;) {
        char *end;
        long k = strtol(p, &end, 10);
        if (end == p) break;
        if (k == n) return 1;
        p = end;
    }
    return 0;
}

// The checks graded at this N (make test runs them where the grader does: a
// check of overlap means nothing at N = 1, where a collective is a no-op).
static inline Suite *graded_suite(const char *name, const Graded *g, int n) {
    Suite *s = suite_create(name);
    for (int i = 0; i < n; i++) {
        if (!graded_at(g[i].ns, rt.world)) continue;
        TCase *tc = tcase_create(g[i].id);
        tcase_set_timeout(tc, 0);
        tcase_add_test(tc, g[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}

// The graded checks, one line each: id|points|ranks|title.
static inline int graded_list(const Graded *g, int n) {
    for (int i = 0; i < n; i++)
        if (g[i].points > 0) printf("%s|%d|%s|%s\n", g[i].id, g[i].points, g[i].ns, g[i].title);
    return EXIT_SUCCESS;
}

// main() of a graded test program: checks(g) fills the table, setup() runs
// after MPI is up (loading references, say). `prog --list` prints the graded
// checks and exits without MPI.
#define GRADED_MAIN(name, checks, setup)                                          \
    int main(int argc, char **argv) {                                             \
        Graded g_[GRADED_MAX];                                                    \
        int n_ = checks(g_);                                                      \
        if (argc == 2 && strcmp(argv[1], "--list") == 0) return graded_list(g_, n_); \
        rt_init(&argc, &argv, name);                                              \
        setup();                                                                  \
        int failed = run_suite(graded_suite(name, g_, n_));                       \
        rt_finalize();                                                            \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;                              \
    }

// main() of a test program: init MPI, run the suite, exit 0 only if all passed.
#define TEST_MAIN(name, make_suite)                              \
    int main(int argc, char **argv) {                            \
        rt_init(&argc, &argv, name);                             \
        int failed = run_suite(make_suite());                    \
        rt_finalize();                                           \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;             \
    }

#endif
