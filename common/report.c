// report: progress lines, sampled words, the memory and communication reports
// and the summary line.
#include "report.h"
#include "base.h"
#include "data.h"
#include "file.h"
#include "gemm.h"
#include "kernels.h"
#include "rng.h"
#include "rt.h"
#include "trace.h"
#include "clock.h"
#include "comm_model.h"
#include "print.h"
#ifdef ZC_CUDA
#include "gpu.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

// ----------------------------------------------------------------------------
// step times: the median of the recorded steps (milliseconds), the last 65536

#define STEPTIMES 65536
static float steptimes[STEPTIMES];  // static: bookkeeping, not a model buffer
static long nsteptimes;

static void steptime_record(double ms) { steptimes[nsteptimes++ % STEPTIMES] = (float)ms; }
static void steptime_reset(void) { nsteptimes = 0; }

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static double steptime_median(void) {
    long n = nsteptimes < STEPTIMES ? nsteptimes : STEPTIMES;
    if (n == 0) return 0.0;
    static float sorted[STEPTIMES];
    memcpy(sorted, steptimes, (size_t)n * sizeof(float));
    qsort(sorted, (size_t)n, sizeof(float), cmp_float);
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

// ----------------------------------------------------------------------------
// the loss log

static Progress *training;  // between progress_start and progress_end: the log a checkpoint keeps

// Copies into the open log w the lines of the log at path ("STEP LOSS"), from
// the first as long as each is the next step, up to step upto; returns the
// last step copied. No file: nothing. A resumed run's log so continues the
// one that ran to its checkpoint (steps 1..upto), and a log kept at a
// checkpoint goes on from what it holds.
static long continue_log(AtomicFile *w, const char *path, long upto) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[128];
    long step = -1, n;
    double loss;
    char end;
    while (step < upto && fgets(line, sizeof line, f) && sscanf(line, "%ld %lf%c", &n, &loss, &end) == 3 &&
           end == '\n' && (step < 0 || n == step + 1) && n <= upto) {
        if (fputs(line, w->f) < 0) fatal("%s", file_fail(w, errno));
        step = n;
    }
    fclose(f);
    return step < 0 ? 0 : step;
}

// Step s is the first this run logs: after a resume, the saved run's steps come first.
static void log_begin(Progress *p, long s) {
    if (s > 0) p->logged = continue_log(&p->loss_log, p->loss_log.path, s);
}

void progress_checkpointed(long done) {
    Progress *p = training;
    if (!p || !p->loss_log.f) return;
    const char *err = file_commit(&p->loss_log);
    if (!err) err = file_begin(&p->loss_log, p->a->loss_log, "loss log");
    if (err) fatal("%s", err);
    p->logged = continue_log(&p->loss_log, p->loss_log.path, done);
}

// ----------------------------------------------------------------------------
// while training

void progress_start(Progress *p, const Args *a, FindNonFinite find, void *trainer) {
    memset(p, 0, sizeof *p);
    training = p;
    p->logged = -1;  // nothing logged yet: the first step says where the log begins
    p->a = a;
    p->find = find;
    p->trainer = trainer;
    agree_input(a->loss_log && rt.rank == 0 ? file_begin(&p->loss_log, a->loss_log, "loss log") : NULL);
    if (a->trace) trace_open(a->trace);
    comm_reset_stats();
    mem_reset_peaks();
    steptime_reset();
    p->window_start = now_s();
}

void progress_begin_step(Progress *p) { p->step_start = now_s(); }

// Training stops early: the loss log keeps the steps so far (the curve up to
// here is what a learner looks at).
static void keep_loss_log(Progress *p) {
    const char *err = p->loss_log.f ? file_commit(&p->loss_log) : NULL;
    if (err) fprintf(stderr, "%s: %s\n", rt.prog, err);
}

// The loss is not finite at step s: the lowest rank that holds a tensor that
// is not finite names it, and every rank stops.
static void __attribute__((noreturn)) stop_not_finite(Progress *p, long s, double loss) {
    const char *where = p->find ? p->find(p->trainer) : NULL;
    int first = where ? rt.rank : rt.world;
    comm_agree_min(&first);
    static char why[512];
    const char *value = isnan(loss) ? "nan" : loss > 0 ? "inf" : "-inf";
    if (first == rt.world)
        snprintf(why, sizeof why, "step %ld: the loss is %s, though every parameter is finite (the forward pass "
                 "overflowed): training stopped", s + 1, value);
    else
        snprintf(why, sizeof why, "step %ld: the loss is %s, and after the step's update %s holds a value that is "
                 "not finite (first on rank %d): training stopped", s + 1, value, where, first);
    keep_loss_log(p);
    agree_exit(rt.rank == (first == rt.world ? 0 : first) ? why : NULL, 1);
    fatal("%s", why);  // not reached: agree_exit stops every rank
}

void progress_stop_if(Progress *p, long s, const char *why) {
    if (!why) return;
    keep_loss_log(p);
    char line[512];
    snprintf(line, sizeof line, "step %ld: %s", s + 1, why);
    agree_exit(rt.rank == 0 ? line : NULL, 1);
}

void progress_end_step(Progress *p, long s, double loss, const char *extra) {
    kernels_wait();  // on a GPU the step ends when its queued kernels have run
    steptime_record(1e3 * (now_s() - p->step_start));
    p->window_steps++;
    p->steps++;
    if (p->loss_log.f && p->logged < 0) log_begin(p, s);
    if (p->loss_log.f && fprintf(p->loss_log.f, "%ld %.9g\n", s + 1, loss) < 0)
        fatal("%s", file_fail(&p->loss_log, errno));
    p->logged = s + 1;
    long steps = p->a->steps;
    int every = p->a->log_every;
    if (every > 0 && (s == 0 || (s + 1) % every == 0 || s + 1 == steps || !isfinite(loss))) {
        double dt = now_s() - p->window_start;
        print0("step %5ld/%ld | loss %.4f | %.1f ms | %.0f ex/s%s\n", s + 1, steps, loss,
               1e3 * dt / p->window_steps, p->a->batch * p->window_steps / dt, extra ? extra : "");
        p->window_start = now_s();
        p->window_steps = 0;
    }
    if (!isfinite(loss)) stop_not_finite(p, s, loss);
}

CommStats progress_end(Progress *p) {
    CommStats counted = comm_stats();  // before the trace's own collectives
    counted.steps = p->steps;
    const char *err = p->a->trace ? trace_write(p->a->trace) : NULL;
    if (err) fatal("%s", err);
    err = p->loss_log.f ? file_commit(&p->loss_log) : NULL;
    if (err) fatal("%s", err);
    training = NULL;
    return counted;
}

const char *nonfinite_layer(int l, int out, int in, const float *x, size_t first, size_t count) {
    static char name[64];
    size_t nw = (size_t)out * (size_t)in, end = first + count;
    // Squares summed in double overflow only where a value is not finite.
    if (first < nw && !isfinite(sum_squares(x, (end < nw ? end : nw) - first)))
        return snprintf(name, sizeof name, "layers.%d.weight", l), name;
    if (end > nw && !isfinite(sum_squares(x + (first < nw ? nw - first : 0), end - (first > nw ? first : nw))))
        return snprintf(name, sizeof name, "layers.%d.bias", l), name;
    return NULL;
}

// ----------------------------------------------------------------------------
// sampling

void report_samples(const Args *a, int T, int collective, NextSymbol next, void *model) {
    if (a->sample == 0) return;
    print0("\nsamples:");
    Rng r = rng_stream(a->seed, RNG_STREAM_SAMPLE);
    uint8_t ctx[64];
    float probs[VOCAB];
    if (T > (int)sizeof ctx) fatal("report_samples: context %d is longer than %zu", T, sizeof ctx);
    for (int w = 0; w < a->sample && (collective || rt.rank == 0); w++) {
        char word[64];
        int len = 0;
        memset(ctx, 0, (size_t)T);
        for (;;) {
            next(model, ctx, probs);
            int c = rng_categorical(&r, probs, VOCAB);
            // Every rank must feed the same symbol back, or the forwards' gathers
            // part ways and hang; their logits can differ in the last bit (mixed
            // hardware, another BLAS), so rank 0 draws and the others take its symbol.
            if (collective) {
                double v = rt.rank == 0 ? (double)c : -1.0;
                comm_metric_max(&v, 1);
                c = (int)v;
            }
            if (c == 0 || len == (int)sizeof word - 1) break;
            word[len++] = data_char(c);
            memmove(ctx, ctx + 1, (size_t)T - 1);
            ctx[T - 1] = (uint8_t)c;
        }
        word[len] = '\0';
        print0(" %s", word);
    }
    print0("\n");
}

// ----------------------------------------------------------------------------
// memory

#ifdef ZC_CUDA
#define BUILT_WITH_CUDA 1
#else
#define BUILT_WITH_CUDA 0
#endif

MemReport report_memory(const char *formula, double formula_bytes) {
    // One row per category plus the total and the model state: max over ranks.
    // Rows: current and peak per category, the totals and the model state, then
    // the GPU's three, the process's five, the pool's one and staging's two.
    enum { GPU = 2 * MEM_NCAT + 3, RSS = GPU + 3, POOL = RSS + 5, STAGE = POOL + 1, NROW = STAGE + 2 };
    MemStats s = mem_stats();
    double v[NROW];
    for (int c = 0; c < MEM_NCAT; c++) {
        v[2 * c] = (double)s.cur[c];
        v[2 * c + 1] = (double)s.peak[c];
    }
    v[2 * MEM_NCAT] = (double)s.cur_total;
    v[2 * MEM_NCAT + 1] = (double)s.peak_total;
    v[2 * MEM_NCAT + 2] = (double)mem_model_state_bytes(&s);
    v[GPU] = (double)s.gpu_cur;
    v[GPU + 1] = (double)s.gpu_peak;
    v[GPU + 2] = 0.0;  // what the driver says is in use on the device
    v[POOL] = 0.0;     // the most the device's memory pool held at once
    v[STAGE] = v[STAGE + 1] = 0.0;  // of comm_buffers, the staging buffers (host, GPU)
#ifdef ZC_CUDA
    if (rt.device == DEV_CUDA) {
        size_t used = 0, total = 0;
        gpu_mem_info(&used, &total);
        v[GPU + 2] = (double)used;
        v[POOL] = (double)gpu_pool_peak();
        size_t host_stage, gpu_stage;
        comm_staging_held(&host_stage, &gpu_stage);
        v[STAGE] = (double)host_stage;
        v[STAGE + 1] = (double)gpu_stage;
    }
#endif
    ProcessMem pm = mem_process();
    v[RSS] = (double)pm.rss;
    v[RSS + 1] = (double)pm.peak;
    v[RSS + 2] = (double)pm.anon;
    v[RSS + 3] = (double)pm.file;
    v[RSS + 4] = (double)pm.shmem;
    comm_metric_max(v, NROW);

    // Which library ran the products: what every step's time depends on most.
    print0("\nmatmul: %s\n", rt.device == DEV_CUDA ? "cuBLAS, on the GPU" : gemm_library());
    print0("\nmemory per rank (max over %d rank%s)\n", rt.world, rt.world > 1 ? "s" : "");
    print0("  %-14s %12s %12s\n", "category", "current MiB", "peak MiB");
    for (int c = 0; c < MEM_NCAT; c++)
        print0("  %-14s %12.3f %12.3f\n", mem_cat_name(c), v[2 * c] / MIB, v[2 * c + 1] / MIB);
    print0("  %-14s %12.3f %12.3f\n", "total", v[2 * MEM_NCAT] / MIB, v[2 * MEM_NCAT + 1] / MIB);
    print0("  model state: formula %s = %.0f bytes, measured %.0f bytes%s\n", formula,
           formula_bytes, v[2 * MEM_NCAT + 2],
           formula_bytes == v[2 * MEM_NCAT + 2] ? " (equal)" : " (DIFFERENT)");
    // The tracked bytes are the lesson; the process's own count is the honesty.
    if (v[RSS + 1] > 0) {
        print0("  the process as the OS counts it (RSS): %.3f MiB now, %.3f MiB peak, beside %.3f MiB tracked "
               "at peak\n", v[RSS] / MIB, v[RSS + 1] / MIB, v[2 * MEM_NCAT + 1] / MIB);
        print0("    now: %.3f MiB anonymous (every heap: the tracked buffers, and what MPI, OpenBLAS, libc%s "
               "allocate for themselves),\n    %.3f MiB mapped from files (the code of the program and its "
               "libraries), %.3f MiB shared (MPI between the ranks of a node)\n", v[RSS + 2] / MIB,
               BUILT_WITH_CUDA ? " and the CUDA libraries, loaded by a CUDA build even on the CPU," : "",
               v[RSS + 3] / MIB, v[RSS + 4] / MIB);
    }
    if (rt.device == DEV_CUDA)
        print0("  on the GPU: tracked %.3f MiB now, %.3f MiB peak; the device reports %.3f MiB in use now "
               "(cudaMemGetInfo: the whole device, also the CUDA context, cuBLAS and NCCL), and its memory pool "
               "held at most %.3f MiB\n", v[GPU] / MIB, v[GPU + 1] / MIB, v[GPU + 2] / MIB, v[POOL] / MIB);
    if (rt.device == DEV_CUDA && v[STAGE] + v[STAGE + 1] > 0)
        print0("  of comm_buffers, staging: %.3f MiB of page-locked host memory and %.3f MiB on the GPU, where the "
               "collectives are copied to the side their backend reads (not the stage's own buffers)\n",
               v[STAGE] / MIB, v[STAGE + 1] / MIB);
    MemReport r = { .state = (size_t)v[2 * MEM_NCAT + 2], .peak = (size_t)v[2 * MEM_NCAT + 1],
                    .formula = formula_bytes };
    int n = 0;
    for (int c = MEM_PARAMS; c <= MEM_ADAM_V; c++)
        n += snprintf(r.fields + n, sizeof r.fields - (size_t)n, " mem_%s=%.0f", mem_cat_name(c), v[2 * c]);
    for (int c = 0; c < MEM_NCAT; c++)
        n += snprintf(r.fields + n, sizeof r.fields - (size_t)n, " peak_%s=%.0f", mem_cat_name(c), v[2 * c + 1]);
    return r;
}

double report_peak(MemCat cat) {
    double v = (double)mem_stats().peak[cat];
    comm_metric_max(&v, 1);
    return v;
}

void report_grads_at_peak(size_t b, size_t shard_numel, size_t numel) {
    double g = report_peak(MEM_GRADS), kept = (double)(b * shard_numel);
    print0("  grads at peak: %.0f bytes = slices %zuΨ_pad/N %.0f + full gradients in flight %.0f (a full %zuΨ is "
           "%zu)\n", g, b, kept, g - kept, b, b * numel);
}

void report_gathered_at_peak(size_t b, size_t numel, int prefetch) {
    print0("  params gathered at peak: %.0f bytes in comm_buffers (%s; a full %zuΨ is %zu)\n",
           report_peak(MEM_COMM_BUFFERS), prefetch ? "a layer and the one prefetched" : "one layer at a time", b,
           b * numel);
}

// ----------------------------------------------------------------------------
// communication

// Where the ranks are, one line: each node's name and its ranks ("node1 (ranks
// 0-1), node2 (ranks 2-3)"), the first eight nodes of a bigger job.
static void report_nodes(int nodes) {
    char line[1024];
    int n = snprintf(line, sizeof line, "  nodes%s:", comm_node_name(0) ? "" : " (emulated, --ranks-per-node)");
    for (int j = 0; j < nodes && j < 8; j++) {
        int first = -1, last = -1, count = 0;
        for (int r = 0; r < rt.world; r++)
            if (comm_node_of(r) == j) last = r, count++, first = first < 0 ? r : first;
        char who[96], index[16];
        snprintf(index, sizeof index, "%d", j);
        const char *name = comm_node_name(j) ? comm_node_name(j) : index;
        if (count == last - first + 1)
            snprintf(who, sizeof who, count > 1 ? "ranks %d-%d" : "rank %d", first, last);
        else
            snprintf(who, sizeof who, "%d ranks", count);
        if (n < (int)sizeof line)
            n += snprintf(line + n, sizeof line - (size_t)n, "%s %s (%s)", j ? "," : "", name, who);
    }
    if (nodes > 8 && n < (int)sizeof line) snprintf(line + n, sizeof line - (size_t)n, ", and %d more", nodes - 8);
    print0("%s\n", line);
}

void report_comm(const CommStats *st, const char *theory, double theory_bytes) {
    long steps = st->steps;
    CommStats s = *st;
    double per = steps > 0 ? 1.0 / steps : 0.0;
    const char *backend = comm_backend_name();
    int counted = comm_counts_sent(), nodes = comm_nodes(), inter = nodes > 1 && counted, on_mpi = 0;
    for (int k = 0; k < COLL_NKIND; k++) on_mpi |= counted && s.algo[k][ALGO_MPI] > 0;  // auto ran the library's
    print0("\ncommunication per step (rank 0, %s backend, N = %d%s%.0d%s, %s)\n", backend, rt.world,
           nodes > 1 ? " on " : "", nodes > 1 ? nodes : 0, nodes > 1 ? " nodes" : "",
           !counted ? "sent bytes by the ring model" :
           on_mpi ? "sent bytes as counted, by the ring model for the calls run on mpi" : "sent bytes as counted");
    if (nodes > 1) report_nodes(nodes);
    print0("  %-15s %10s %16s %18s%s\n", "collective", "calls", "payload bytes", "sent bytes/rank",
           inter ? "   of them to other nodes" : "");
    int any = 0;
    double across = 0;
    for (int k = 0; k < COLL_NKIND; k++) {
        const CommCount *c = &s.kind[k];
        if (!c->calls) continue;
        any = 1;
        across += comm_inter_bytes(c) * per;
        print0("  %-15s %10.2f %16.1f %18.1f", coll_name(k), c->calls * per, c->payload * per,
               comm_sent_bytes(c) * per);
        if (inter) print0(" %25.1f", comm_inter_bytes(c) * per);
        print0("\n");
    }
    if (!any) print0("  (no collectives)\n");
    double sent = comm_total_sent_bytes(&s) * per;
    print0("  %-15s %10s %16s %18.1f", "total", "", "", sent);
    if (inter) print0(" %25.1f", across);
    print0("\n");
    if (strcmp(backend, "auto") == 0) {  // which algorithm the cost model took, how often, from which fit
        const char *from = comm_fit_loaded_from();  // rank 0 loaded it when auto opened
        if (from) print0("  auto's cost model: %s\n", from);
        for (int k = 0; k < COLL_NKIND; k++) {
            if (!s.kind[k].calls || k == COLL_BARRIER) continue;
            print0("  auto chose for %s:", coll_name(k));
            for (int a = 0; a < ALGO_N; a++)
                if (s.algo[k][a]) print0(" %s %.2f", algo_name(a), s.algo[k][a] * per);
            print0(" (calls per step)\n");
        }
    }
    if (s.metrics.calls)
        print0("  not counted above: %.2f scalar all_reduce/step for logging and bookkeeping (%.1f bytes/step)\n",
               s.metrics.calls * per, s.metrics.payload * per);
    int ring_model = !counted || strcmp(backend, "ring") == 0;  // what the stages' theory is
    print0("  theory: %s = %.1f bytes sent per rank per step%s\n", theory, theory_bytes,
           !ring_model ? " (the ring model; this backend's algorithms send what their own formulas say: see "
                         "lc1_distributed_adam/README.md)" :
           fabs(sent - theory_bytes) <= 1e-9 * theory_bytes ? " (equal)" : " (DIFFERENT)");
}

void report_overlap(const char *what, const CommOverlap *o, long steps, const char *note) {
    double per = 1e3 / (double)steps;
    print0("  %s: %.3f ms per step on the comm thread, %.3f ms of it under compute; %ld of %ld waited for "
           "after compute (rank 0, %s)\n", what, o->time * per, o->hidden * per, o->covered, o->waits, note);
}

// ----------------------------------------------------------------------------
// the summary line

void report_summary(const char *stage, const Args *a, size_t params, double final_loss,
                    const MemReport *mem, const CommStats *comm) {
    double sent = comm->steps > 0 ? comm_total_sent_bytes(comm) / (double)comm->steps : 0.0;
    print0("summary stage=%s ranks=%d device=%s params=%zu steps=%ld final_loss=%.6f "
           "model_state_bytes=%zu peak_bytes=%zu comm_bytes_per_step=%.0f step_ms=%.3f "
           "model_state_formula=%.0f%s\n",
           stage, rt.world, a->device, params, a->steps, final_loss, mem->state, mem->peak, sent,
           steptime_median(), mem->formula, mem->fields);
}
