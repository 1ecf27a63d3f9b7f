// test_data: words to examples, and batches that are deterministic, cover every
// example once per epoch (the keyed permutation is a bijection at every size),
// and split across ranks into contiguous slices.
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
    // The text: each word's symbols, then 0.
    const uint8_t want_text[] = { 1, 2, 0, 3, 0, 24, 25, 26, 0, 4, 0 };
    ck_assert_mem_eq(d.text, want_text, sizeof want_text);
    // "ab": (..->a) (.a->b) (ab->.)
    const uint8_t want_ctx[] = { 0, 0, 0, 1, 1, 2 }, want_t[] = { 1, 2, 0 };
    uint8_t ctx[2];
    for (int e = 0; e < 3; e++) {
        ck_assert_int_eq(data_example(&d, (size_t)e, ctx), want_t[e]);
        ck_assert_mem_eq(ctx, want_ctx + 2 * e, 2);
    }
    // "c" after "ab": its context does not reach back into "ab": (..->c) (.c->.)
    ck_assert_int_eq(data_example(&d, 3, ctx), 3);
    ck_assert(ctx[0] == 0 && ctx[1] == 0);
    ck_assert_int_eq(data_example(&d, 4, ctx), 0);
    ck_assert(ctx[0] == 0 && ctx[1] == 3);
    // "xyz" starts at example 5: (..->x) (.x->y) (xy->z) (yz->.)
    ck_assert_int_eq(data_example(&d, 5 + 3, ctx), 0);
    ck_assert(ctx[0] == 25 && ctx[1] == 26);
    ck_assert_int_eq(data_example(&d, 5 + 2, ctx), 26);
    ck_assert(ctx[0] == 24 && ctx[1] == 25);
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
    // One epoch's order is a bijection of the examples, at every size (the
    // permutation works on a power of 4 and walks values past n back in).
    ck_assert_uint_eq(n, 46);
    for (size_t size = 1; size <= 300; size++) {
        Data z = d;
        z.n = size;
        z.key_epoch = -1;  // the permutation is made again for this n
        int seen[300] = { 0 };
        for (size_t i = 0; i < size; i++) seen[data_order(&z, 2, i)]++;
        for (size_t i = 0; i < size; i++) CK_EXPECT(seen[i] == 1, "n = %zu: example %zu seen %d times", size, i, seen[i]);
    }
    // A batch of the first half and one of the second: every example once.
    int seen[64] = { 0 }, half = 23;
    for (long s = 0; s < 2; s++)
        for (int k = 0; k < half; k++) seen[data_order(&d, 0, (size_t)(s * half + k))]++;
    for (size_t i = 0; i < n; i++) ck_assert_int_eq(seen[i], 1);
    // The batch holds those examples.
    uint8_t c23[23 * 3], one[3];
    int t23[23];
    data_batch(&d, 1, half, 0, half, c23, t23);
    for (int k = 0; k < half; k++) {
        ck_assert_int_eq(t23[k], data_example(&d, data_order(&d, 0, (size_t)(half + k)), one));
        ck_assert_mem_eq(c23 + 3 * k, one, 3);
    }
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
    size_t first[46], moved = 0;
    for (size_t i = 0; i < n; i++) first[i] = data_order(&d, 0, i);
    for (size_t i = 0; i < n; i++) moved += first[i] != data_order(&d, 1, i);
    ck_assert_uint_gt(moved, n / 2);
    data_free(&e);
    ck_assert_ptr_null(data_load(&e, p, 3, 8));
    moved = 0;
    for (size_t i = 0; i < n; i++) moved += first[i] != data_order(&e, 0, i);
    ck_assert_uint_gt(moved, n / 2);
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
    unit_temp_dir(dir);
    Suite *s = suite_create("data");
    TCase *tc = tcase_create("words");
    tcase_add_test(tc, test_examples);
    tcase_add_test(tc, test_batches);
    tcase_add_test(tc, test_bad_files);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN("test_data", suite)
