// bench_comm: collective bandwidth in the format of nccl-tests, for every
// backend of common/comm (the MPI library's, and the algorithms written here:
// ring, naive, tree, rd, rabenseifner, hier, and auto, which picks one per
// call). Under mpirun:
//   tools/launch 4 build/bin/bench_comm -b 1K -e 64M -f 4 -o all_reduce
// For each size: time per call (the median over the timed calls of the slowest
// rank's time, each call started from MPI's barrier whatever the backend),
// algbw = size / time, busbw = algbw x 2(N-1)/N for all-reduce and (N-1)/N for
// reduce-scatter and all-gather (the bytes each link carries in a ring), and
// #wrong, the elements that differ from the exact answer (inputs are small
// integers, so float sums are exact whatever the order). -d cuda puts the
// buffers on the GPU, which adds the nccl backend (the others stage through
// host memory).
//
// The cost model (comm_model): -m prints each algorithm's error against the
// measurements from 64 KiB on (-M also each prediction beside its time); --fit FILE first fits the model's constants to these
// measurements (least squares, relative), prints the fit with its error and
// writes FILE for --comm auto (ZC_COMM_FIT). --rules FILE (after --fit, or on
// a fit already written) puts into FILE, for this N, the fastest measured of
// mpi and the algorithms written here at every size (mpi unless another leads
// by COMM_RULE_LEAD): auto's rules on one node.
// -t SECONDS takes as many timed calls per size as fit in that time (at least
// 3, at most -n).
#include "../common/args.h"
#include "../common/clock.h"
#include "../common/comm.h"
#include "../common/comm_model.h"
#include "../common/file.h"
#include "../common/mem.h"
#include "../common/print.h"
#include "../common/rt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    size_t min_bytes, max_bytes;
    double factor;
    int warmup, iters, check, per_node, model;
    double target;            // -t: seconds of timed calls per size (0: -n calls)
    const char *ops, *backends, *device, *fit, *rules;
} Opts;

// One measurement, kept for the tables and the model.
typedef struct {
    Algo algo;                // what ran (auto: what it chose, the last call)
    CollKind kind;
    double bytes, secs;
    const char *backend;
    int calls;                // timed calls
    double wrong;             // elements wrong (-1: not checked)
} Row;

#define MAX_ROWS 4096
static Row rows[MAX_ROWS];
static int nrows;

// ----------------------------------------------------------------------------
// options

static size_t parse_size(const char *flag, const char *v) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    double unit = *end == 'K' ? 1024.0 : *end == 'M' ? 1048576.0 : *end == 'G' ? 1073741824.0 : 1.0;
    if (unit > 1.0) end++;
    if (end == v || *end || errno || !(x >= 1 && x * unit <= 4.0 * 1073741824.0))  // NaN too
        usage_error("%s '%s': expected a size in bytes (suffix K, M or G allowed), 1 to 4G", flag, file_shown(v));
    return (size_t)(x * unit);
}

static int parse_int(const char *flag, const char *v, int lo, int hi) {
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi)
        usage_error("%s '%s': expected an integer in [%d, %d]", flag, file_shown(v), lo, hi);
    return (int)x;
}

static double parse_seconds(const char *flag, const char *v) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno || !(x >= 0 && x <= 3600))
        usage_error("%s '%s': expected seconds, 0 to 3600", flag, file_shown(v));
    return x;
}

// list must hold one word at least, each one of allowed; else one line naming
// what is wrong, exit 2.
static void check_words(const char *flag, const char *list, const char *allowed) {
    char copy[128];
    int words = 0;
    if (strlen(list) >= sizeof copy) usage_error("%s '%s': too long (expected some of: %s)", flag, file_shown(list),
                                                 allowed);
    snprintf(copy, sizeof copy, "%s", list);
    for (char *w = strtok(copy, " "); w; w = strtok(NULL, " "), words++)
        if (!args_has_word(allowed, w)) usage_error("%s '%s': expected one of: %s", flag, file_shown(w), allowed);
    if (!words) usage_error("%s '%s': expected one or more of: %s", flag, file_shown(list), allowed);
}

static Opts parse(int argc, char **argv) {
    Opts o = { 1024, 64u << 20, 4.0, 5, 20, 1, 0, 0, 0, "all_reduce reduce_scatter all_gather", NULL, "cpu", NULL,
               NULL };
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        if (strcmp(f, "-h") == 0 || strcmp(f, "--help") == 0) {
            print0("usage: %s [-b MIN] [-e MAX] [-f FACTOR] [-w WARMUP] [-n ITERS] [-t SECONDS] [-c 0|1] "
                   "[-o 'all_reduce reduce_scatter all_gather'] [-B '%s'] [-d cpu|cuda] [-k RANKS_PER_NODE] [-m|-M] "
                   "[--fit FILE] [--rules FILE]\n", rt.prog, comm_backends());
            rt_finalize();
            exit(0);
        }
        if (strcmp(f, "-m") == 0 || strcmp(f, "-M") == 0) {
            o.model = f[1] == 'M' ? 2 : 1;
            continue;
        }
        if (i + 1 >= argc) usage_error("%s: missing value (see -h)", f);
        const char *v = argv[++i];
        if (strcmp(f, "-b") == 0) o.min_bytes = parse_size(f, v);
        else if (strcmp(f, "-e") == 0) o.max_bytes = parse_size(f, v);
        else if (strcmp(f, "-f") == 0) o.factor = parse_int(f, v, 2, 1024);
        else if (strcmp(f, "-w") == 0) o.warmup = parse_int(f, v, 0, 100000);
        else if (strcmp(f, "-n") == 0) o.iters = parse_int(f, v, 1, 1000000);
        else if (strcmp(f, "-c") == 0) o.check = parse_int(f, v, 0, 1);
        else if (strcmp(f, "-k") == 0) o.per_node = parse_int(f, v, 0, 1 << 20);
        else if (strcmp(f, "-t") == 0) o.target = parse_seconds(f, v);
        else if (strcmp(f, "--fit") == 0) o.fit = v, o.model = o.model ? o.model : 1;
        else if (strcmp(f, "--rules") == 0) o.rules = v;
        else if (strcmp(f, "-o") == 0) o.ops = v;
        else if (strcmp(f, "-B") == 0) o.backends = v;
        else if (strcmp(f, "-d") == 0) o.device = v;
        else usage_error("unknown flag '%s' (see -h)", file_shown(f));
    }
    if (o.min_bytes > o.max_bytes) usage_error("-b %zu is larger than -e %zu", o.min_bytes, o.max_bytes);
    // The fit is written after the whole benchmark: a place it cannot go is refused first.
    if (o.fit) agree_input(rt.rank == 0 ? file_check_output(o.fit, "cost model fit") : NULL);
    if (o.rules) agree_input(rt.rank == 0 ? file_check_output(o.rules, "cost model fit") : NULL);
    check_words("-o", o.ops, "all_reduce reduce_scatter all_gather");
    if (!args_has_word("cpu cuda", o.device)) usage_error("-d '%s': expected cpu or cuda", file_shown(o.device));
    rt_nodes(o.per_node);
    rt_use_device(o.device);
    if (o.rules && (comm_nodes() > 1 || rt.device != DEV_CPU))  // what auto's rules are for
        usage_error("--rules: measured on one node with buffers on the cpu (no -k, no -d cuda)");
    if (o.rules && !o.fit) {  // a fit to add to: checked before the benchmark, not after
        CommFit f;
        agree_input(rt.rank == 0 ? comm_fit_read(o.rules, &f, NULL) : NULL);
    }
    // nccl moves GPU memory only; the others run on either device.
    static char usable[128];
    snprintf(usable, sizeof usable, "%s", comm_backends());
    char *nccl = strstr(usable, " nccl");
    if (nccl && rt.device != DEV_CUDA) *nccl = '\0';
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

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// The algorithm the last collective of kind k ran with, from two snapshots.
static Algo ran(const CommStats *before, const CommStats *after, CollKind k) {
    for (int a = 0; a < ALGO_N; a++)
        if (after->algo[k][a] > before->algo[k][a]) return (Algo)a;
    return ALGO_MPI;
}

// Measures one collective and size on every backend, interleaved: each timed
// round runs every backend once, so that all of them meet the same machine
// (on a shared or oversubscribed one, conditions drift from second to second).
// Keeps one row per backend: the median of its calls, each the slowest rank's.
static void bench_size(const Opts *o, char **names, int nb, CollKind k, size_t bytes) {
    size_t count = bytes / sizeof(float);
    count -= count % (size_t)rt.world;  // reduce-scatter and all-gather need equal slices
    if (count == 0) count = (size_t)rt.world;
    float *a = mem_alloc(MEM_COMM_BUFFERS, count * sizeof(float));
    float *b = mem_alloc(MEM_COMM_BUFFERS, count * sizeof(float));
    float *h = mem_alloc_host(MEM_COMM_BUFFERS, count * sizeof(float));
    fill_inputs(h, count, 0);
    mem_copy(a, h, count * sizeof(float));
    double round[1] = { 0 };
    for (int n = 0; n < nb; n++) {
        if (!comm_use(names[n])) usage_error("-B %s: cannot be used here", names[n]);
        for (int i = 0; i < o->warmup; i++) {
            double t0 = now_s();
            run_once(k, a, b, count);
            if (i == o->warmup - 1) round[0] += now_s() - t0;
        }
    }
    comm_metric_max(round, 1);
    int iters = o->iters;
    if (o->target > 0 && round[0] > 0) {  // as many rounds as fit in the target time, 3 at least
        double fit = o->target / round[0];
        iters = fit < 3 ? 3 : fit < iters ? (int)fit : iters;
    }
    double *t = mem_alloc_host(MEM_COMM_BUFFERS, (size_t)nb * (size_t)iters * sizeof(double));
    Algo *algo = mem_alloc_host(MEM_COMM_BUFFERS, (size_t)nb * sizeof(Algo));
    for (int i = 0; i < iters; i++)
        for (int n = 0; n < nb; n++) {
            comm_use(names[n]);
            rt_barrier();  // MPI's, for every backend: the same start line
            CommStats before = comm_stats();
            double t0 = now_s();
            run_once(k, a, b, count);
            t[(size_t)n * iters + i] = now_s() - t0;
            CommStats after = comm_stats();
            algo[n] = ran(&before, &after, k);
        }
    comm_metric_max(t, nb * iters);  // each call: the slowest rank sets the pace
    for (int n = 0; n < nb; n++) {
        double *tn = t + (size_t)n * iters;
        qsort(tn, (size_t)iters, sizeof(double), cmp_double);
        double secs = iters % 2 ? tn[iters / 2] : 0.5 * (tn[iters / 2 - 1] + tn[iters / 2]);
        comm_use(names[n]);
        double wrong[1] = { o->check ? count_wrong(k, a, b, h, count) : -1 };
        comm_metric_sum(wrong, 1);
        if (nrows < MAX_ROWS)
            rows[nrows++] = (Row){ algo[n], k, (double)count * sizeof(float), secs, names[n], iters,
                                   o->check ? wrong[0] : -1 };
    }
    mem_free(algo);
    mem_free(t);
    mem_free(a);
    mem_free(b);
    mem_free(h);
}

// Prints, in the format of nccl-tests, every backend's rows of one collective.
static void print_tables(const Opts *o, char **names, int nb, CollKind k) {
    for (int n = 0; n < nb; n++) {
        print0("\n# %s, backend %s, N = %d ranks, buffers on the %s, %d warm-up calls, then rounds of every "
               "backend in turn\n", coll_name(k), names[n], rt.world, o->device, o->warmup);
        print0("# %10s %12s %7s %7s %11s %12s %12s %7s %7s\n", "size(B)", "count", "type", "redop", "time(us)",
               "algbw(GB/s)", "busbw(GB/s)", "#wrong", "calls");
        double sum = 0, N = rt.world;
        int count = 0;
        for (int i = 0; i < nrows; i++) {
            const Row *r = &rows[i];
            if (r->kind != k || strcmp(r->backend, names[n])) continue;
            double algbw = r->bytes / r->secs / 1e9;
            double bus = algbw * (k == COLL_ALL_REDUCE ? 2.0 * (N - 1) / N : (N - 1) / N);
            print0("%12.0f %12.0f %7s %7s %11.1f %12.3f %12.3f %7.0f %7d\n", r->bytes, r->bytes / sizeof(float),
                   "float", "sum", 1e6 * r->secs, algbw, bus, r->wrong, r->calls);
            sum += bus, count++;
        }
        if (count) print0("# %s %s: Avg bus bandwidth : %.3f GB/s\n", names[n], coll_name(k), sum / count);
    }
}

// ----------------------------------------------------------------------------
// side by side

// The rows of one backend, kind and size; NULL if not measured.
static const Row *row_of(const char *backend, CollKind k, double bytes) {
    for (int i = 0; i < nrows; i++)
        if (strcmp(rows[i].backend, backend) == 0 && rows[i].kind == k && rows[i].bytes == bytes) return &rows[i];
    return NULL;
}

// For each collective and size, every backend's time in one line; the fastest
// algorithm written here; auto against it and against the library.
static void print_compare(void) {
    const char *names[16];
    int nb = 0;
    for (int i = 0; i < nrows && nb < 16; i++) {
        int seen = 0;
        for (int b = 0; b < nb; b++) seen |= strcmp(names[b], rows[i].backend) == 0;
        if (!seen) names[nb++] = rows[i].backend;
    }
    if (nb < 2) return;
    for (int k = 0; k < COLL_NKIND; k++) {
        int any = 0;
        for (int i = 0; i < nrows; i++) any |= (int)rows[i].kind == k;
        if (!any) continue;
        print0("\n# %s at N = %d, time per call (us), side by side\n# %10s", coll_name(k), rt.world, "size(B)");
        for (int b = 0; b < nb; b++) print0(" %12s", names[b]);
        print0(" %13s %10s %10s\n", "fastest", "auto/best", "auto/mpi");
        for (int i = 0; i < nrows; i++) {
            if ((int)rows[i].kind != k || row_of(rows[i].backend, k, rows[i].bytes) != &rows[i]) continue;
            if (strcmp(rows[i].backend, names[0]) != 0) continue;  // one line per size
            double bytes = rows[i].bytes, best = 0;
            const char *fastest = "";
            print0("  %10.0f", bytes);
            for (int b = 0; b < nb; b++) {
                const Row *r = row_of(names[b], k, bytes);
                print0(" %12.1f", r ? 1e6 * r->secs : 0.0);
                int ours = r && strcmp(names[b], "mpi") && strcmp(names[b], "auto") && strcmp(names[b], "nccl");
                if (ours && (!*fastest || r->secs < best)) best = r->secs, fastest = names[b];
            }
            const Row *a = row_of("auto", k, bytes), *m = row_of("mpi", k, bytes);
            print0(" %13s", fastest);
            if (a && best > 0) print0(" %10.2f", best / a->secs);  // >= 1: auto as fast as the best
            else print0(" %10s", "-");
            if (a && m) print0(" %10.2f", m->secs / a->secs);     // >= 1: auto as fast as the library
            else print0(" %10s", "-");
            print0("\n");
        }
    }
    print0("# auto/best and auto/mpi are speeds: the other's time over auto's (1.00 or more: auto as fast)\n");
}

// ----------------------------------------------------------------------------
// the cost model

static CommCost cost_of(Algo a, CollKind k, double bytes) {
    int K = comm_ranks_per_node() ? comm_ranks_per_node() : rt.world;
    return comm_cost(a, k, bytes, rt.world, K, (int)sysconf(_SC_NPROCESSORS_ONLN));
}

// Fits the model to the rows of the algorithms written here (not the library's,
// not auto's, whose choice is another algorithm's row) and writes the file. Two
// stages: the per-byte constants from the sizes from 64 KiB on, where bytes
// decide; then the per-call and per-message ones from the smaller sizes, the
// per-byte ones kept.
static CommFit fit_rows(const char *path) {
    CommCost *c = mem_alloc_host(MEM_COMM_BUFFERS, (size_t)nrows * sizeof(CommCost));
    double *t = mem_alloc_host(MEM_COMM_BUFFERS, (size_t)nrows * sizeof(double)), err[2] = { 0, 0 };
    CommFit f = { 0, 0, 0, 0, 0 };
    int used[2] = { 0, 0 };
    for (int stage = 0; stage < 2; stage++) {
        int n = 0;
        for (int i = 0; i < nrows; i++) {
            if (rows[i].algo == ALGO_MPI || strcmp(rows[i].backend, "auto") == 0) continue;
            if (!comm_modelled(rows[i].algo, rt.world, rt.world) || (rows[i].bytes >= 65536) != (stage == 0)) continue;
            c[n] = cost_of(rows[i].algo, rows[i].kind, rows[i].bytes);
            t[n++] = rows[i].secs;
        }
        f = comm_fit(c, t, n, stage == 0 ? FIT_ALL : FIT_CALL | FIT_ALPHA, &f, &err[stage]);
        used[stage] = n;
    }
    print0("\n# the fit (least squares of the relative error): beta %.3g s per byte (%.2f GB/s), gamma %.3g s per "
           "byte reduced (%.2f GB/s), delta %.3g s per byte copied (%.2f GB/s) from %d measurements of 64 KiB or "
           "more, rms error %.1f%%; then call %.3g s and alpha %.3g s per message from %d smaller ones, rms error "
           "%.1f%%\n", f.beta, f.beta > 0 ? 1e-9 / f.beta : 0, f.gamma, f.gamma > 0 ? 1e-9 / f.gamma : 0, f.delta,
           f.delta > 0 ? 1e-9 / f.delta : 0, used[0], 100 * err[0], f.call, f.alpha, used[1], 100 * err[1]);
    char comment[200];
    snprintf(comment, sizeof comment, "bench_comm --fit at N = %d: %d + %d measurements, rms relative error %.1f%% "
             "and %.1f%%", rt.world, used[0], used[1], 100 * err[0], 100 * err[1]);
    const char *why = rt.rank == 0 ? comm_fit_write(path, &f, NULL, comment) : NULL;
    if (why) fatal("%s", why);
    mem_free(c);
    mem_free(t);
    return f;
}

// The rules of this N: for every collective and size measured, the fastest of
// mpi and the algorithms written here that got it right (auto's and hier's
// rows are not candidates: auto's is another's, hier is the ring on one node).
// Put into path's fit (read again: --fit may have just written it) and written
// back.
static int rule_candidate(const Row *r) { return strcmp(r->backend, "auto") && r->algo != ALGO_HIER && r->wrong <= 0; }

// The row whose algorithm is the rule at c's size (comm_rule_choose).
static const Row *rule_at(const Row *c) {
    const Row *cand[64];
    double secs[64];
    Algo algo[64];
    int n = 0;
    for (int j = 0; j < nrows && n < 64; j++) {
        const Row *o = &rows[j];
        if (o->kind != c->kind || o->bytes != c->bytes || !rule_candidate(o)) continue;
        cand[n] = o, secs[n] = o->secs, algo[n] = o->algo;
        n++;
    }
    return cand[comm_rule_choose(secs, algo, n)];
}

static void write_rules(const char *path) {
    static CommFit f;
    static CommRules r;
    const char *why = comm_fit_read(path, &f, &r);
    print0("\n# the rules written to %s (N = %d, one node: at each size the fastest measured, or Open MPI's own where "
           "none was %.0f%% faster)\n", file_shown(path), rt.world, 100 * COMM_RULE_LEAD);
    for (int k = 0; k < COLL_NKIND && !why; k++) {
        CommRule add[64];
        int n = 0;
        for (int i = 0; i < nrows && n < 64; i++) {
            const Row *c = &rows[i];
            if ((int)c->kind != k || !rule_candidate(c)) continue;
            if (rule_at(c) != c) continue;  // one rule per size: at its row
            add[n++] = (CommRule){ (CollKind)k, rt.world, c->bytes, c->algo };
            if (n == 1) print0("#   %s:", coll_name((CollKind)k));
            print0("%s %s %s", n == 1 ? "" : ",", human_bytes(c->bytes), algo_name(c->algo));
        }
        if (n) print0("\n");
        if (n) why = comm_rules_set(&r, (CollKind)k, rt.world, add, n);
    }
    char comment[200];
    int len = snprintf(comment, sizeof comment, "bench_comm: the fit, and the rules measured at N =");
    for (int i = 0; i < r.n && len < 150; i++) {  // each N once, in the order first met
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= r.rule[j].N == r.rule[i].N;
        if (!seen) len += snprintf(comment + len, sizeof comment - (size_t)len, " %d", r.rule[i].N);
    }
    if (!why) why = comm_fit_write(path, &f, &r, comment);
    if (why) fatal("%s", why);
}

// Where the hierarchical all-reduce starts to beat every flat algorithm written
// here, measured (the smallest size from which on it is the fastest) and as
// the model predicts it (the same, on a fine grid of sizes). Only with nodes.
static void print_crossover(const CommFit *f) {
    static const char *flat[] = { "ring", "tree", "rd", "rabenseifner" };
    if (comm_nodes() < 2) return;
    double measured = -1, la, lb;
    comm_link(&la, &lb);
    for (int i = nrows - 1; i >= 0; i--) {  // from the largest size down, while hier stays the fastest
        const Row *h = &rows[i];
        if (strcmp(h->backend, "hier") || h->kind != COLL_ALL_REDUCE) continue;
        int wins = 1, seen = 0;
        for (int a = 0; a < 4; a++) {
            const Row *r = row_of(flat[a], COLL_ALL_REDUCE, h->bytes);
            if (r) seen = 1, wins &= h->secs < r->secs;
        }
        if (!seen) return;
        if (!wins) break;
        measured = h->bytes;
    }
    double predicted = -1;
    for (double b = 64e6; b >= 16; b /= 1.0905) {  // 2^(1/8) steps, from the top down
        CommCost hc = cost_of(ALGO_HIER, COLL_ALL_REDUCE, b);
        double th = comm_time(&hc, f, la, lb), best = -1;
        for (int a = 0; a < 4; a++) {
            Algo al = a == 0 ? ALGO_RING : a == 1 ? ALGO_TREE : a == 2 ? ALGO_RD : ALGO_RABENSEIFNER;
            CommCost c = cost_of(al, COLL_ALL_REDUCE, b);
            double t = comm_time(&c, f, la, lb);
            if (best < 0 || t < best) best = t;
        }
        if (th >= best) break;
        predicted = b;
    }
    print0("# hier beats every flat algorithm written here from %s on (measured, sizes above) and from %s on "
           "(the model)\n", measured > 0 ? human_bytes(measured) : "no size", predicted > 0 ? human_bytes(predicted) :
           "no size");
}

// Prints each row's prediction beside its measurement (rows = 1), then each
// algorithm's error over the sizes from 64 KiB on.
static void print_model(const CommFit *f, int each_row) {
    double la, lb;
    comm_link(&la, &lb);
    print0("\n# the model beside the measurements (N = %d, %d rank%s per node; link between nodes %.3g s + %.3g s/B)\n",
           rt.world, comm_ranks_per_node(), comm_ranks_per_node() == 1 ? "" : "s", la, lb);
    if (each_row)
        print0("# %-13s %-15s %12s %12s %12s %8s\n", "backend", "collective", "size(B)", "time(us)", "model(us)", "err%");
    for (int i = 0; i < nrows && each_row; i++) {
        const Row *r = &rows[i];
        int is_auto = strcmp(r->backend, "auto") == 0;
        if (!comm_modelled(r->algo, rt.world, comm_ranks_per_node() ? comm_ranks_per_node() : rt.world)) {
            if (is_auto)  // a rule sent it to the library, which the model does not know
                print0("  %-13s %-15s %12.0f %12.1f %12s %8s chose %s\n", r->backend, coll_name(r->kind), r->bytes,
                       1e6 * r->secs, "-", "-", algo_name(r->algo));
            continue;
        }
        CommCost c = cost_of(r->algo, r->kind, r->bytes);
        double p = comm_time(&c, f, la, lb);
        print0("  %-13s %-15s %12.0f %12.1f %12.1f %8.1f%s%s\n", r->backend, coll_name(r->kind), r->bytes,
               1e6 * r->secs, 1e6 * p, 100 * (p - r->secs) / r->secs, is_auto ? " chose " : "",
               is_auto ? algo_name(r->algo) : "");
    }
    print0("# error of the model from 64 KiB on, per algorithm and collective: mean |err|, max |err|\n");
    for (int a = 0; a < ALGO_N; a++)
        for (int k = 0; k < COLL_NKIND; k++) {
            double sum = 0, worst = 0;
            int n = 0;
            if (!comm_modelled((Algo)a, rt.world, rt.world)) continue;
            for (int i = 0; i < nrows; i++) {
                const Row *r = &rows[i];
                if ((int)r->algo != a || (int)r->kind != k || r->bytes < 65536 || strcmp(r->backend, "auto") == 0)
                    continue;
                CommCost c = cost_of(r->algo, r->kind, r->bytes);
                double e = fabs(comm_time(&c, f, la, lb) - r->secs) / r->secs;
                sum += e, n++;
                if (e > worst) worst = e;
            }
            if (n) print0("  %-13s %-15s %6.1f%% %6.1f%%  (%d sizes)\n", algo_name(a), coll_name(k), 100 * sum / n,
                          100 * worst, n);
        }
}

int main(int argc, char **argv) {
    rt_init(&argc, &argv, "bench_comm");
    rt_agree_argv(argc, argv);  // then every rank reads the same options, and refuses them together
    Opts o = parse(argc, argv);
    // The largest size's buffers, before any is allocated: two on the device, one on the host.
    size_t most = o.max_bytes + (size_t)rt.world * sizeof(float);
    char what[96];
    snprintf(what, sizeof what, "the buffers of -e %s", human_bytes((double)o.max_bytes));
    rt_check_host_bytes((rt.device == DEV_CUDA ? 1.0 : 3.0) * (double)most, what);
    static const struct { const char *name; CollKind kind; } ops[] = {
        { "all_reduce", COLL_ALL_REDUCE }, { "reduce_scatter", COLL_REDUCE_SCATTER },
        { "all_gather", COLL_ALL_GATHER } };
    char backends[128], *names[16];
    int nb = 0;
    snprintf(backends, sizeof backends, "%s", o.backends);
    for (char *be = strtok(backends, " "); be && nb < 16; be = strtok(NULL, " ")) names[nb++] = be;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (!args_has_word(o.ops, ops[i].name)) continue;
        for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes = (size_t)(bytes * o.factor))
            bench_size(&o, names, nb, ops[i].kind, bytes);
        print_tables(&o, names, nb, ops[i].kind);
    }
    print_compare();
    if (o.model) {
        CommFit f;
        const char *from, *why = o.fit ? NULL : comm_fit_load(&f, NULL, &from);
        if (why) usage_error("%s", why);
        if (o.fit) f = fit_rows(o.fit);
        else print0("\n# the cost model: %s\n", from);
        print_model(&f, o.model > 1);
        print_crossover(&f);
    }
    if (o.rules && rt.rank == 0) write_rules(o.rules);
    rt_finalize();
    return 0;
}
