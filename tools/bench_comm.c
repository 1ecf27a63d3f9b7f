// bench_comm: collective bandwidth in the format of nccl-tests, for every
// backend of common/comm (the MPI library's, the hand-written ring, the naive
// one through rank 0). Under mpirun:
//   tools/launch 4 build/bin/bench_comm -b 1K -e 64M -f 4 -o all_reduce
// For each size: time per call (max over ranks), algbw = size / time, busbw =
// algbw x 2(N-1)/N for all-reduce and (N-1)/N for reduce-scatter and
// all-gather (the bytes each link carries in a ring), and #wrong, the elements
// that differ from the exact answer (inputs are small integers, so float sums
// are exact whatever the order). -d cuda puts the buffers on the GPU, which adds
// the nccl backend (the others stage through host memory).
#include "../common/args.h"
#include "../common/comm.h"
#include "../common/mem.h"
#include "../common/rt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t min_bytes, max_bytes;
    double factor;
    int warmup, iters, check;
    const char *ops, *backends, *device;
} Opts;

// ----------------------------------------------------------------------------
// options

static size_t parse_size(const char *flag, const char *v) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    double unit = *end == 'K' ? 1024.0 : *end == 'M' ? 1048576.0 : *end == 'G' ? 1073741824.0 : 1.0;
    if (unit > 1.0) end++;
    if (end == v || *end || errno || x < 1 || x * unit > 4.0 * 1073741824.0)
        usage_error("%s %s: expected a size in bytes (suffix K, M or G allowed), 1 to 4G", flag, v);
    return (size_t)(x * unit);
}

static int parse_int(const char *flag, const char *v, int lo, int hi) {
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi)
        usage_error("%s %s: expected an integer in [%d, %d]", flag, v, lo, hi);
    return (int)x;
}

// Every word of list must be one of allowed; else one line naming it, exit 2.
static void check_words(const char *flag, const char *list, const char *allowed) {
    char copy[128];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *w = strtok(copy, " "); w; w = strtok(NULL, " "))
        if (!args_has_word(allowed, w)) usage_error("%s %s: expected one of: %s", flag, w, allowed);
}

static Opts parse(int argc, char **argv) {
    Opts o = { 1024, 64u << 20, 4.0, 5, 20, 1, "all_reduce reduce_scatter all_gather", NULL, "cpu" };
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        if (strcmp(f, "-h") == 0 || strcmp(f, "--help") == 0) {
            print0("usage: %s [-b MIN] [-e MAX] [-f FACTOR] [-w WARMUP] [-n ITERS] [-c 0|1] "
                   "[-o 'all_reduce reduce_scatter all_gather'] [-B '%s'] [-d cpu|cuda]\n", rt.prog,
                   comm_backends());
            rt_finalize();
            exit(0);
        }
        if (i + 1 >= argc) usage_error("%s: missing value (see -h)", f);
        const char *v = argv[++i];
        if (strcmp(f, "-b") == 0) o.min_bytes = parse_size(f, v);
        else if (strcmp(f, "-e") == 0) o.max_bytes = parse_size(f, v);
        else if (strcmp(f, "-f") == 0) o.factor = parse_int(f, v, 2, 1024);
        else if (strcmp(f, "-w") == 0) o.warmup = parse_int(f, v, 0, 100000);
        else if (strcmp(f, "-n") == 0) o.iters = parse_int(f, v, 1, 1000000);
        else if (strcmp(f, "-c") == 0) o.check = parse_int(f, v, 0, 1);
        else if (strcmp(f, "-o") == 0) o.ops = v;
        else if (strcmp(f, "-B") == 0) o.backends = v;
        else if (strcmp(f, "-d") == 0) o.device = v;
        else usage_error("unknown flag '%s' (see -h)", f);
    }
    if (o.min_bytes > o.max_bytes) usage_error("-b %zu is larger than -e %zu", o.min_bytes, o.max_bytes);
    check_words("-o", o.ops, "all_reduce reduce_scatter all_gather");
    check_words("-d", o.device, "cpu cuda");
    rt_use_device(o.device);
    // nccl moves GPU memory only; the others run on either device.
    static char usable[128];
    snprintf(usable, sizeof usable, "%s", rt.device == DEV_CUDA ? comm_backends() : "mpi ring naive");
    if (!o.backends) o.backends = usable;
    check_words("-B", o.backends, usable);
    return o;
}

// ----------------------------------------------------------------------------
// one size

static float input(int rank, size_t i) { return (float)((int)((i * 7 + (size_t)rank * 13) % 31) - 15); }

static double sum_over_ranks(size_t i) {
    double s = 0;
    for (int r = 0; r < rt.world; r++) s += input(r, i);
    return s;
}

static void fill_inputs(float *x, size_t n, size_t offset) {
    for (size_t i = 0; i < n; i++) x[i] = input(rt.rank, offset + i);
}

static void run_once(CollKind k, float *a, float *b, size_t count) {
    if (k == COLL_ALL_REDUCE) comm_all_reduce(a, count, DT_F32, OP_SUM);
    else if (k == COLL_REDUCE_SCATTER) comm_reduce_scatter(a, b, count / rt.world, DT_F32);
    else comm_all_gather(a, b, count / rt.world, DT_F32);
}

// Elements of the result that differ from the exact answer, on this rank. h is
// host memory for count floats; a and b may be on the GPU.
static double count_wrong(CollKind k, float *a, float *b, float *h, size_t count) {
    size_t per = count / rt.world;
    double wrong = 0;
    if (k == COLL_ALL_GATHER) fill_inputs(h, per, (size_t)rt.rank * per);  // this rank's slice
    else fill_inputs(h, count, 0);
    mem_copy(a, h, (k == COLL_ALL_GATHER ? per : count) * sizeof(float));
    run_once(k, a, b, count);
    mem_copy(h, k == COLL_ALL_REDUCE ? a : b, (k == COLL_REDUCE_SCATTER ? per : count) * sizeof(float));
    if (k == COLL_ALL_REDUCE)
        for (size_t i = 0; i < count; i++) wrong += h[i] != (float)sum_over_ranks(i);
    else if (k == COLL_REDUCE_SCATTER)
        for (size_t i = 0; i < per; i++) wrong += h[i] != (float)sum_over_ranks((size_t)rt.rank * per + i);
    else
        for (size_t i = 0; i < count; i++) wrong += h[i] != input((int)(i / per), i);
    return wrong;
}

// Prints one row; returns busbw in GB/s.
static double bench_size(const Opts *o, CollKind k, size_t bytes) {
    size_t count = bytes / sizeof(float);
    count -= count % (size_t)rt.world;  // reduce-scatter and all-gather need equal slices
    if (count == 0) count = (size_t)rt.world;
    float *a = mem_alloc(MEM_COMM_BUFFERS, count * sizeof(float));
    float *b = mem_alloc(MEM_COMM_BUFFERS, count * sizeof(float));
    float *h = mem_alloc_host(MEM_COMM_BUFFERS, count * sizeof(float));
    fill_inputs(h, count, 0);
    mem_copy(a, h, count * sizeof(float));
    for (int i = 0; i < o->warmup; i++) run_once(k, a, b, count);
    comm_barrier();
    double t0 = now_s();
    for (int i = 0; i < o->iters; i++) run_once(k, a, b, count);
    double t[1] = { (now_s() - t0) / o->iters };
    comm_metric_max(t, 1);  // the slowest rank sets the pace
    double wrong[1] = { o->check ? count_wrong(k, a, b, h, count) : -1 };
    comm_metric_sum(wrong, 1);
    if (!o->check) wrong[0] = -1;
    double size = (double)count * sizeof(float), N = rt.world;
    double algbw = size / t[0] / 1e9;
    double bus = algbw * (k == COLL_ALL_REDUCE ? 2.0 * (N - 1) / N : (N - 1) / N);
    print0("%12.0f %12zu %7s %7s %11.1f %12.3f %12.3f %7.0f\n", size, count, "float", "sum", 1e6 * t[0], algbw,
           bus, wrong[0]);
    mem_free(a);
    mem_free(b);
    mem_free(h);
    return bus;
}

int main(int argc, char **argv) {
    rt_init(&argc, &argv, "bench_comm");
    Opts o = parse(argc, argv);
    static const struct { const char *name; CollKind kind; } ops[] = {
        { "all_reduce", COLL_ALL_REDUCE }, { "reduce_scatter", COLL_REDUCE_SCATTER },
        { "all_gather", COLL_ALL_GATHER } };
    char backends[128];
    snprintf(backends, sizeof backends, "%s", o.backends);
    for (char *be = strtok(backends, " "); be; be = strtok(NULL, " ")) {  // nothing below uses strtok
        if (!comm_use(be)) usage_error("-B %s: cannot be used here", be);
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
            if (!args_has_word(o.ops, ops[i].name)) continue;
            print0("\n# %s, backend %s, N = %d ranks, buffers on the %s, %d warm-up and %d timed iterations\n",
                   ops[i].name, be, rt.world, o.device, o.warmup, o.iters);
            print0("# %10s %12s %7s %7s %11s %12s %12s %7s\n", "size(B)", "count", "type", "redop", "time(us)",
                   "algbw(GB/s)", "busbw(GB/s)", "#wrong");
            double sum = 0;
            int rows = 0;
            for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes = (size_t)(bytes * o.factor)) {
                sum += bench_size(&o, ops[i].kind, bytes);
                rows++;
            }
            print0("# %s %s: Avg bus bandwidth : %.3f GB/s\n", be, ops[i].name, sum / rows);
        }
    }
    rt_finalize();
    return 0;
}
