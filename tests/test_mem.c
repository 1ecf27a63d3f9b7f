// test_mem: the tracked allocator's arithmetic: current and peak per category
// and in total, zeroed and aligned blocks, the live count; grading's poisoned
// frees and their bounded quarantine, its fences and the faults they name.
#include "check_unit.h"

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/mem.h"

// Grading's poisoned frees: a freed block is named as freed, and is kept out
// of use (its pages out of reach: test_fault_after_free) while less than the
// quarantine (here its least, 64 MiB: this process never held more than a few
// MiB) has been freed after it; older blocks go back, so a long graded run's
// memory stays flat. First in the suite, so that the most this process held at
// once is this test's.
START_TEST(test_poison_quarantine) {
    enum { MIB = 1 << 20, BLOCKS = 96 };
    mem_set_poison(1);
    float *f = mem_alloc(MEM_ACTIVATIONS, MIB);
    mem_free(f);
    ck_assert_int_eq(mem_was_freed(f, MIB), 1);
    size_t block = mem_stats().kept;
    ck_assert_uint_eq(block, MIB + (size_t)sysconf(_SC_PAGESIZE));  // its pages and its fence
    for (int i = 1; i < BLOCKS; i++) {
        f = mem_alloc(MEM_ACTIVATIONS, MIB);
        mem_free(f);
        size_t kept = mem_stats().kept;
        // Everything until 64 MiB, then never more than 64 MiB: the oldest go.
        if ((size_t)(i + 1) * block <= (size_t)64 * MIB) ck_assert_uint_eq(kept, (size_t)(i + 1) * block);
        else ck_assert(kept <= (size_t)64 * MIB && kept > (size_t)64 * MIB - block);
    }
    ck_assert_int_eq(mem_was_freed(f, MIB), 1);  // the newest is kept
    mem_set_poison(0);
}
END_TEST

// ----------------------------------------------------------------------------
// fences (grading mode)

// A fenced block whose size divides by 4 ends on a page's last byte and
// starts aligned to the largest power of two up to 64 dividing its size;
// another ends at most 3 bytes before the page's end, its start aligned to 4
// (a buffer of n floats and a byte must hold floats where they belong).
// Either is zeroed.
START_TEST(test_fenced_block_ends_on_its_page) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    mem_set_poison(1);
    for (size_t n = 1; n < 3 * page; n = n * 3 + 2) {
        for (size_t k = n; k <= n + 3; k += 3) {  // n, then n + 3: sizes of each residue mod 4 come by
            unsigned char *p = mem_alloc(MEM_DATA, k);
            size_t len = k % 4 == 0 || k < 4 ? k : (k + 3) / 4 * 4, align = len & -len;
            ck_assert_uint_eq(((uintptr_t)p + len) % page, 0);
            ck_assert_uint_eq((uintptr_t)p % (align < 64 ? align : 64), 0);
            for (size_t i = 0; i < k; i++) ck_assert_uint_eq(p[i], 0);
            p[k - 1] = 1;  // the last byte is the block's
            mem_free(p);
        }
    }
    mem_set_poison(0);
}
END_TEST

// Workspace (the kernels' panels) skips the quarantine: a block of the same
// size reuses its mapping at once.
START_TEST(test_workspace_reused_at_once) {
    mem_set_poison(1);
    size_t kept = mem_stats().kept;
    float *w = mem_alloc_scratch(MEM_WORKSPACE, 5000 * sizeof(float));
    mem_free(w);
    ck_assert_uint_eq(mem_stats().kept, kept);
    float *again = mem_alloc_scratch(MEM_WORKSPACE, 5000 * sizeof(float));
    ck_assert_ptr_eq(again, w);
    mem_free(again);
    mem_set_poison(0);
}
END_TEST

// What a child that runs fn with grading's fences prints on stderr, into out;
// the signal that ended it (0 if it exited).
static int child_fault(void (*fn)(void), char *out, size_t len) {
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        mem_set_poison(1);
        fn();
        _exit(0);
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < len && (r = read(fd[0], out + n, len - 1 - n)) > 0) n += (size_t)r;
    out[n] = '\0';
    close(fd[0]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

static volatile float sink;
// 301 floats of gradients (an odd count: the block starts 4-aligned), and a loop one element too far.
static void read_one_past(void) {
    float *g = mem_alloc(MEM_GRADS, 301 * sizeof(float));
    for (int i = 0; i <= 301; i++) sink += g[i];
}
// A layer's params freed, then written through the pointer kept.
static void write_after_free(void) {
    float *p = mem_alloc(MEM_PARAMS, 1000 * sizeof(float));
    mem_free(p);
    p[10] = 1.0f;
}
// A read of an address no buffer holds.
static volatile uintptr_t nowhere = 8;
static void untracked_fault(void) { sink = *(volatile float *)nowhere; }

START_TEST(test_fault_past_the_end) {
    char out[2048];
    ck_assert_int_eq(child_fault(read_one_past, out, sizeof out), SIGSEGV);
    ck_assert_msg(strstr(out, "rank 0: mem: a read past the end of a buffer of grads (1204 bytes, 301 floats): byte 1 "
                              "after its last one"), "got: %s", out);
}
END_TEST

START_TEST(test_fault_after_free) {
    char out[2048];
    ck_assert_int_eq(child_fault(write_after_free, out, sizeof out), SIGSEGV);
    ck_assert_msg(strstr(out, "rank 0: mem: a write of a buffer of params (4000 bytes) after its mem_free, at byte 40"),
                  "got: %s", out);
    // The function it happened in, static as it is, and who called it.
    ck_assert_msg(strstr(out, "a pointer to it kept), in write_after_free, from child_fault, from test_fault_after_free_fn"),
                  "got: %s", out);
}
END_TEST

// A fault that is none of mem's is left as it was: no line, the same signal.
START_TEST(test_fault_not_mem_s) {
    char out[2048];
    ck_assert_int_eq(child_fault(untracked_fault, out, sizeof out), SIGSEGV);
    ck_assert_str_eq(out, "");
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
    tcase_add_test(tc, test_fenced_block_ends_on_its_page);
    tcase_add_test(tc, test_workspace_reused_at_once);
    tcase_add_test(tc, test_fault_past_the_end);
    tcase_add_test(tc, test_fault_after_free);
    tcase_add_test(tc, test_fault_not_mem_s);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN("test_mem", suite)
