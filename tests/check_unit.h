// check_unit: main() of a single-process suite. No MPI and no comm thread: these
// suites link without Open MPI, which also proves that the modules they test
// (and everything those call) sit below rt and comm in common/.
#ifndef CHECK_UNIT_H
#define CHECK_UNIT_H

#include <check.h>
#include <stdlib.h>

#include "../common/base.h"

// main() of a test program: run the suite, exit 0 only if all passed.
#define UNIT_MAIN(name, make_suite)                              \
    int main(void) {                                             \
        rt.prog = name;                                          \
        SRunner *sr = srunner_create(make_suite());              \
        srunner_set_fork_status(sr, CK_NOFORK);                  \
        srunner_run_all(sr, CK_NORMAL);                          \
        int failed = srunner_ntests_failed(sr);                  \
        srunner_free(sr);                                        \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;             \
    }

#endif
