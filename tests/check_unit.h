// check_unit: main() of a single-process suite. No MPI and no comm thread: these
// suites link without Open MPI, which also proves that the modules they test
// (and everything those call) sit below rt and comm in common/.
#ifndef CHECK_UNIT_H
#define CHECK_UNIT_H

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/base.h"

// ck_assert_msg and ck_assert_uint_eq for loops of many checks. Check records
// every assertion that passes (a write to its log each, for the line a crash
// would name: test_dtype made four million, most of its 9 s); these reach
// Check only when one fails, with the same line and message.
#define CK_EXPECT(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)
#define CK_EXPECT_UINT_EQ(x, y) do {                                                              \
        uintmax_t x_ = (x), y_ = (y);                                                             \
        if (x_ != y_) ck_abort_msg("Assertion '%s' failed: %s == %ju, %s == %ju", #x " == " #y, #x, x_, #y, y_); \
    } while (0)

// A fresh folder for the suite's files: TEMPLATE ("/tmp/zc_name_XXXXXX") is
// made unique in place, and the folder is removed with all it holds when the
// program exits, passed or failed (a crash leaves it, to be looked at).
static const char *unit_dir_made;
static int unit_remove_entry(const char *path, const struct stat *st, int type, struct FTW *at) {
    (void)st, (void)type, (void)at;
    if (remove(path) != 0) perror(path);
    return 0;
}
static void unit_remove_dir(void) { nftw(unit_dir_made, unit_remove_entry, 16, FTW_DEPTH | FTW_PHYS); }
static inline void unit_temp_dir(char *template) {
    if (!mkdtemp(template)) fatal("mkdtemp %s failed", template);
    unit_dir_made = template;
    atexit(unit_remove_dir);
}

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
