// test_data: words to examples, and batches that are deterministic, cover every
// example once per epoch, and split across ranks into contiguous slices.
#include "check_unit.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/data.h"
#include "../common/mem.h"

static char dir[] = "/tmp/zc_data_XXXXXX";

static const char *write_file(const char *name, const char *text) {
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

START_TEST(test_examples) {
    // "Bad" (capital), "x-y", "" and "42" are skipped; CRLF endings are fine.
    const char *p = write_file("w.txt", "ab\nBad\nc\n\nx-y\r\nxyz\r\n42\nd");
    Data d;
    ck_assert_ptr_null(data_load(&d, p, 2, 1));
    ck_assert_uint_eq(d.nwords, 4);              // ab c xyz d
    ck_assert_uint_eq(d.n, 3 + 2 + 4 + 2);
    // "ab": (..->a) (.a->b) (ab->.)
    const uint8_t want_ctx[] = { 0, 0, 0, 1, 1, 2 }, want_t[] = { 1, 2, 0 };
    ck_assert_mem_eq(d.ctx, want_ctx, 6);
    ck_assert_mem_eq(d.target, want_t, 3);
    // "xyz" starts at example 5: (..->x) (.x->y) (xy->z) (yz->.)
    ck_assert_uint_eq(d.ctx[(5 + 3) * 2], 25);
    ck_assert_uint_eq(d.ctx[(5 + 3) * 2 + 1], 26);
    ck_assert_uint_eq(d.target[5 + 3], 0);
    ck_assert_uint_eq(d.target[5 + 2], 26);
    ck_assert_int_eq(data_symbol('.'), 0);
    ck_assert_int_eq(data_symbol('z'), 26);
    ck_assert_int_eq(data_char(1), 'a');
    data_free(&d);
}
END_TEST

START_TEST(test_batches) {
    const char *p = write_file("v.txt", "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\n");
    Data d, e;
    ck_assert_ptr_null(data_load(&d, p, 3, 7));
    ck_assert_ptr_null(data_load(&e, p, 3, 7));
    size_t n = d.n;
    int B = 12;
    uint8_t ctx[12 * 3], ctx2[12 * 3];
    int tg[12], tg2[12];
    // One epoch of batches visits every example exactly once.
    ck_assert_uint_eq(n, 46);
    int seen[64] = { 0 }, half = 23, t23[23];
    uint8_t c23[23 * 3];
    for (long s = 0; s < 2; s++) {
        data_batch(&d, s, half, 0, half, c23, t23);
        for (int k = 0; k < half; k++) seen[d.perm[s * half + k]]++;
    }
    for (size_t i = 0; i < n; i++) ck_assert_int_eq(seen[i], 1);
    // Same seed, same batches; ranks' slices are contiguous parts of the global batch.
    for (long s = 0; s < 9; s++) {  // crosses epoch boundaries
        data_batch(&d, s, B, 0, B, ctx, tg);
        for (int r = 0; r < 3; r++) {
            data_batch(&e, s, B, r * 4, 4, ctx2 + r * 12, tg2 + r * 4);
        }
        ck_assert_mem_eq(ctx, ctx2, sizeof ctx);
        ck_assert_mem_eq(tg, tg2, sizeof tg);
    }
    // Epochs are shuffled differently, and other seeds give other orders.
    uint32_t first[46];
    data_batch(&d, 0, B, 0, 1, ctx, tg);
    memcpy(first, d.perm, sizeof first);
    data_batch(&d, 4, B, 0, 1, ctx, tg);  // epoch 1
    ck_assert(memcmp(first, d.perm, sizeof first) != 0);
    data_free(&e);
    ck_assert_ptr_null(data_load(&e, p, 3, 8));
    data_batch(&e, 0, B, 0, 1, ctx, tg);
    ck_assert(memcmp(first, e.perm, sizeof first) != 0);
    data_free(&d);
    data_free(&e);
}
END_TEST

START_TEST(test_bad_files) {
    Data d;
    const char *err = data_load(&d, "/nonexistent/words", 3, 1);
    ck_assert_ptr_nonnull(strstr(err, "cannot read data file '/nonexistent/words'"));
    err = data_load(&d, write_file("empty.txt", ""), 3, 1);
    ck_assert_ptr_nonnull(strstr(err, "is empty"));
    err = data_load(&d, write_file("junk.txt", "ABC\n123\nhello world\n"), 3, 1);
    ck_assert_ptr_nonnull(strstr(err, "has no usable words"));
    err = data_load(&d, dir, 3, 1);  // a directory
    ck_assert_ptr_nonnull(strstr(err, "cannot read data file"));
    ck_assert_uint_eq(mem_live_count(), 0);  // nothing left behind on failure
}
END_TEST

static Suite *suite(void) {
    if (!mkdtemp(dir)) fatal("mkdtemp %s failed", dir);
    Suite *s = suite_create("data");
    TCase *tc = tcase_create("words");
    tcase_add_test(tc, test_examples);
    tcase_add_test(tc, test_batches);
    tcase_add_test(tc, test_bad_files);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN("test_data", suite)
