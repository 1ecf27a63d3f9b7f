// check_mpi: running Check suites on every rank. Tests run without fork (MPI and
// fork do not mix); every assertion in a multi-rank test is agreed by all ranks
// (CK_ALL), so all ranks leave a failing test together and none is left waiting
// in a collective. Rank 0 prints Check's output; the verdict is the same everywhere.
#ifndef CHECK_MPI_H
#define CHECK_MPI_H

#include <check.h>
#include <stdlib.h>

#include "../common/comm.h"
#include "../common/rt.h"

// Fails the test on every rank if cond is false on any rank.
#define CK_ALL(cond, ...) do {                                   \
        int ok_ = (cond) ? 1 : 0;                                \
        comm_agree_min(&ok_);                                    \
        ck_assert_msg(ok_, __VA_ARGS__);                         \
    } while (0)

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

// main() of a test program: init MPI, run the suite, exit 0 only if all passed.
#define TEST_MAIN(name, make_suite)                              \
    int main(int argc, char **argv) {                            \
        rt_init(&argc, &argv, name);                             \
        int failed = run_suite(make_suite());                    \
        rt_finalize();                                           \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;             \
    }

#endif
