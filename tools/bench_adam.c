// bench_adam: how close the fused Adam kernel comes to the memory bandwidth it
// is bound by. Adam reads p, g, m, v and writes p, m, v: 28 bytes a parameter.
// A plain copy of one buffer (read 4, write 4 bytes a parameter) measures what
// the memory can do on this device; the figure of merit is their ratio.
//   build/bin/bench_adam -d cuda -p 67108864 -n 50
// (-n counts timed calls, as it counts iterations in bench_comm.)
#include "../common/clock.h"
#include "../common/file.h"
#include "../common/kernels.h"
#include "../common/mem.h"
#include "../common/print.h"
#include "../common/rt.h"
#ifdef ZC_CUDA
#include "../common/gpu.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long parse_long(const char *flag, const char *v, long lo, long hi) {
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi)
        usage_error("%s '%s': expected an integer in [%ld, %ld]", flag, file_shown(v), lo, hi);
    return x;
}

// Seconds per call of what, the median of iters timed calls after 3 warm-ups.
static double time_it(void (*what)(void *), void *arg, int iters) {
    for (int i = 0; i < 3; i++) what(arg);
    kernels_wait();
    double *t = mem_alloc_host(MEM_DATA, (size_t)iters * sizeof(double));
    for (int i = 0; i < iters; i++) {
        double t0 = now_s();
        what(arg);
        kernels_wait();
        t[i] = now_s() - t0;
    }
    for (int i = 1; i < iters; i++)  // insertion sort: iters is small
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { double x = t[j]; t[j] = t[j - 1]; t[j - 1] = x; }
    double median = t[iters / 2];
    mem_free(t);
    return median;
}

typedef struct { float *p, *g, *m, *v, *dst; size_t n; AdamHyper h; long step; } Bufs;

static void run_copy(void *arg) { Bufs *b = arg; copy(b->dst, b->p, b->n); }
static void run_adam(void *arg) { Bufs *b = arg; adam_update(b->p, b->g, b->m, b->v, b->n, &b->h, ++b->step); }

int main(int argc, char **argv) {
    rt_init(&argc, &argv, "bench_adam");
    rt_agree_argv(argc, argv);  // then every rank reads the same options, and refuses them together
    const char *device = "cpu";
    long n = 64L << 20, iters = 20;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            print0("usage: %s [-d cpu|cuda] [-p PARAMS (default %ld)] [-n ITERS (default %ld)]\n", rt.prog, n, iters);
            rt_finalize();
            return 0;
        }
        if (i + 1 >= argc) usage_error("%s: missing value (see -h)", argv[i]);
        const char *f = argv[i], *v = argv[++i];
        if (strcmp(f, "-d") == 0) {
            if (strcmp(v, "cpu") != 0 && strcmp(v, "cuda") != 0)
                usage_error("-d '%s': expected cpu or cuda", file_shown(v));
            device = v;
        } else if (strcmp(f, "-p") == 0) n = parse_long(f, v, 1, 1L << 32);
        else if (strcmp(f, "-n") == 0) iters = parse_long(f, v, 1, 100000);
        else usage_error("unknown flag '%s' (see -h)", file_shown(f));
    }
    rt_use_device(device);
    char what[96];  // five buffers of -p floats, before any is allocated
    snprintf(what, sizeof what, "the five buffers of -p %ld", n);
    rt_check_host_bytes(rt.device == DEV_CUDA ? 0.0 : 20.0 * (double)n, what);
    Bufs b = { .n = (size_t)n, .h = { 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f } };
    b.p = mem_alloc(MEM_PARAMS, b.n * sizeof(float));
    b.g = mem_alloc(MEM_GRADS, b.n * sizeof(float));
    b.m = mem_alloc(MEM_ADAM_M, b.n * sizeof(float));
    b.v = mem_alloc(MEM_ADAM_V, b.n * sizeof(float));
    b.dst = mem_alloc(MEM_ACTIVATIONS, b.n * sizeof(float));
    init_uniform(b.p, b.n, 1.0f, 1, 1, 0);
    init_uniform(b.g, b.n, 1e-2f, 1, 2, 0);

    const char *where = "the CPU (one thread)";
#ifdef ZC_CUDA
    if (rt.device == DEV_CUDA) where = gpu_describe();
#endif
    double tc = time_it(run_copy, &b, (int)iters), ta = time_it(run_adam, &b, (int)iters);
    double copy_bw = 8.0 * (double)n / tc / 1e9, adam_bw = 28.0 * (double)n / ta / 1e9;
    print0("adam bandwidth: %ld fp32 parameters on %s, median of %ld calls\n", n, where, iters);
    print0("  copy  (reads 4, writes 4 bytes a parameter):   %8.3f ms  %8.1f GB/s\n", 1e3 * tc, copy_bw);
    print0("  adam  (reads 16, writes 12 bytes a parameter): %8.3f ms  %8.1f GB/s\n", 1e3 * ta, adam_bw);
    print0("  adam / copy bandwidth: %.2f\n", adam_bw / copy_bw);
    mem_free(b.p);
    mem_free(b.g);
    mem_free(b.m);
    mem_free(b.v);
    mem_free(b.dst);
    rt_finalize();
    return 0;
}
