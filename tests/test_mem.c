// test_mem: the tracked allocator's arithmetic: current and peak per category
// and in total, zeroed and aligned blocks, the live count; grading's poisoned
// frees and their bounded quarantine.
#include "check_unit.h"

#include <math.h>
#include <stdint.h>

#include "../common/mem.h"

// Grading's poisoned frees: a freed block reads NaN, is named as freed, and is
// kept out of use while less than the quarantine (here its least, 64 MiB: this
// process never held more than a few MiB) has been freed after it; older blocks
// go back to the allocator, so a long graded run's memory stays flat. First in
// the suite, so that the most this process held at once is this test's.
START_TEST(test_poison_quarantine) {
    enum { MIB = 1 << 20, BLOCKS = 96 };
    mem_set_poison(1);
    float *f = mem_alloc(MEM_WORKSPACE, MIB);
    mem_free(f);
    ck_assert(isnan(f[0]) && isnan(f[MIB / 4 - 1]));  // kept: still ours to read
    ck_assert_int_eq(mem_was_freed(f, MIB), 1);
    size_t block = mem_stats().kept;
    ck_assert_uint_ge(block, MIB);
    ck_assert_uint_lt(block, MIB + 4096);
    for (int i = 1; i < BLOCKS; i++) {
        f = mem_alloc(MEM_WORKSPACE, MIB);
        mem_free(f);
        size_t kept = mem_stats().kept;
        // Everything until 64 MiB, then never more than 64 MiB: the oldest go.
        if ((size_t)(i + 1) * block <= (size_t)64 * MIB) ck_assert_uint_eq(kept, (size_t)(i + 1) * block);
        else ck_assert(kept <= (size_t)64 * MIB && kept > (size_t)64 * MIB - block);
    }
    ck_assert_int_eq(mem_was_freed(f, MIB), 1);  // the newest is kept
    ck_assert(isnan(f[MIB / 8]));
    mem_set_poison(0);
}
END_TEST

START_TEST(test_current_and_peak) {
    size_t live = mem_live_count();
    mem_reset_peaks();
    MemStats s0 = mem_stats();
    float *a = mem_alloc(MEM_PARAMS, 1000);
    float *b = mem_alloc(MEM_GRADS, 300);
    float *c = mem_alloc(MEM_PARAMS, 24);
    MemStats s = mem_stats();
    ck_assert_uint_eq(s.cur[MEM_PARAMS] - s0.cur[MEM_PARAMS], 1024);
    ck_assert_uint_eq(s.cur[MEM_GRADS] - s0.cur[MEM_GRADS], 300);
    ck_assert_uint_eq(s.cur_total - s0.cur_total, 1324);
    ck_assert_uint_eq(mem_live_count(), live + 3);
    ck_assert_uint_eq(mem_size(b), 300);
    mem_free(a);
    s = mem_stats();
    ck_assert_uint_eq(s.cur[MEM_PARAMS] - s0.cur[MEM_PARAMS], 24);
    ck_assert_uint_eq(s.peak[MEM_PARAMS] - s0.cur[MEM_PARAMS], 1024);  // the peak stays
    ck_assert_uint_eq(s.peak_total - s0.cur_total, 1324);
    float *d = mem_alloc(MEM_ACTIVATIONS, 500);  // total 824 now: below the old peak
    s = mem_stats();
    ck_assert_uint_eq(s.peak_total - s0.cur_total, 1324);
    mem_reset_peaks();
    s = mem_stats();
    ck_assert_uint_eq(s.peak[MEM_PARAMS], s.cur[MEM_PARAMS]);
    ck_assert_uint_eq(s.peak_total, s.cur_total);
    mem_free(b); mem_free(c); mem_free(d);
    mem_free(NULL);
    s = mem_stats();
    ck_assert_uint_eq(s.cur_total, s0.cur_total);
    ck_assert_uint_eq(mem_live_count(), live);
}
END_TEST

START_TEST(test_model_state_sum) {
    MemStats s0 = mem_stats();
    void *p[MEM_NCAT];
    for (int c = 0; c < MEM_NCAT; c++) p[c] = mem_alloc((MemCat)c, 100 + (size_t)c);
    MemStats s = mem_stats();
    // params, grads, master_params, adam_m, adam_v: 100+101+102+103+104
    ck_assert_uint_eq(mem_model_state_bytes(&s) - mem_model_state_bytes(&s0), 510);
    for (int c = 0; c < MEM_NCAT; c++) mem_free(p[c]);
    ck_assert_str_eq(mem_cat_name(MEM_ADAM_V), "adam_v");
    ck_assert_str_eq(mem_cat_name(MEM_COMM_BUFFERS), "comm_buffers");
}
END_TEST

START_TEST(test_zeroed_aligned) {
    for (size_t n = 1; n < 5000; n = n * 3 + 1) {
        unsigned char *p = mem_alloc(MEM_DATA, n);
        ck_assert_uint_eq((uintptr_t)p % 64, 0);
        for (size_t i = 0; i < n; i++) ck_assert_uint_eq(p[i], 0);
        mem_free(p);
    }
    void *z = mem_alloc(MEM_DATA, 0);  // a valid, freeable pointer
    ck_assert_ptr_nonnull(z);
    mem_free(z);
}
END_TEST

// On the CPU every kind of allocation is host memory, counted like the others;
// nothing lands on the GPU, and mem_copy is a plain copy.
START_TEST(test_host_kinds_on_cpu) {
    MemStats s0 = mem_stats();
    char *h = mem_alloc_host(MEM_COMM_BUFFERS, 100), *p = mem_alloc_pinned(MEM_COMM_BUFFERS, 28);
    MemStats s = mem_stats();
    ck_assert_uint_eq(s.cur[MEM_COMM_BUFFERS] - s0.cur[MEM_COMM_BUFFERS], 128);
    ck_assert_uint_eq(s.gpu_cur, 0);
    ck_assert_uint_eq(s.gpu_peak, 0);
    ck_assert_int_eq(mem_is_gpu(h), 0);
    for (int i = 0; i < 28; i++) p[i] = (char)i;
    mem_copy(h + 3, p, 28);
    for (int i = 0; i < 28; i++) ck_assert_int_eq(h[3 + i], i);
    mem_free(h);
    mem_free(p);
    ck_assert_uint_eq(mem_stats().cur_total, s0.cur_total);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("mem");
    TCase *tc = tcase_create("accounting");
    tcase_add_test(tc, test_poison_quarantine);
    tcase_add_test(tc, test_current_and_peak);
    tcase_add_test(tc, test_model_state_sum);
    tcase_add_test(tc, test_zeroed_aligned);
    tcase_add_test(tc, test_host_kinds_on_cpu);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN("test_mem", suite)
