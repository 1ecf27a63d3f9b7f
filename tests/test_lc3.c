// test_lc3: grades lc3_zero2 at whatever N the runner launches it with (1-4):
// it follows lc0's loss curve and ends with lc0's params (one layer per
// reduce-scatter and bucketed, clipping on and off, accum 1 and 3); model state
// is 4Ψ + 12Ψ_pad/N and communication equals the theory, to the byte; a layer's
// full gradient is freed once its reduce-scatter is done, so at most two
// buckets' full gradients ever exist, asserted through mem; and the
// reduce-scatters run while backward computes: by the order of launches, waits
// and compute (grading mode runs a request at its wait), never by timing.
#include "check_mpi.h"

#include "../lc3_zero2/zero2.c"
#include "grading.h"
#include "ref_model.h"
#include "sharding.h"

// As for lc1 and lc2: reordered float sums measured below 3e-7 (params) and
// 1e-8 (loss); a gradient lost or counted twice moves them by 1e-3 or more.
#define PARAM_TOL 1e-5
#define LOSS_TOL 1e-6

static RefRun runs[REF_MAX];
static int nruns;

static void full_params(Trainer *t, float *dst) { copy(dst, t->model.params, t->model.numel); }

static Trainer *setup(Trainer *t, const char *what, const char *hidden, const char *layers,
                      const char *batch, const char *accum, const char *clip, const char *bucket_mb) {
    char *argv[] = { "t", "--hidden", (char *)hidden, "--layers", (char *)layers, "--batch",
                     (char *)batch, "--steps", "4", "--accum", (char *)accum, "--clip", (char *)clip,
                     "--bucket-mb", (char *)bucket_mb, "--sample", "0", "--log-every", "0" };
    Args a = args_of(what, 19, argv);
    trainer_setup(t, &a);
    return t;
}

// ----------------------------------------------------------------------------
// against lc0

START_TEST(test_follows_lc0) { grade_follows_lc0(runs, nruns, "", LOSS_TOL, PARAM_TOL); }
END_TEST

START_TEST(test_follows_lc0_bucketed) {
    // 0.03 MiB groups the two last layers of the reference model (N = 1..4);
    // 1 MiB puts every layer in one collective.
    grade_follows_lc0(runs, nruns, "--bucket-mb 0.03", LOSS_TOL, PARAM_TOL);
    grade_follows_lc0(runs, nruns, "--bucket-mb 1", LOSS_TOL, PARAM_TOL);
}
END_TEST

START_TEST(test_follows_lc0_hand_written_collectives) {
    grade_follows_lc0_hand_written(runs, nruns, "", LOSS_TOL, PARAM_TOL);
}
END_TEST

// ----------------------------------------------------------------------------
// the exercises one at a time

// The relative L2 distance over all ranks of this rank's gradient slices from
// the same elements of a full gradient in double.
static double slices_from(const Model *m, const double *full) {
    double d[2] = { 0, 0 };
    for (int l = 0; l < m->nlayers; l++) {
        const Layer *L = &m->layer[l];
        for (size_t i = 0; i < own_real(L); i++) {
            double want = full[L->off + (size_t)rt.rank * L->shard + i], got = m->grads[L->soff + i];
            d[0] += (got - want) * (got - want);
            d[1] += want * want;
        }
    }
    comm_metric_sum(d, 2);
    return sqrt(d[0] / (d[1] + 1e-300));
}

START_TEST(test_slices_hold_global_sum) {
    // Three micro-batches, one layer per bucket and all layers in one: after the
    // last reduce-scatter each slice holds the gradient of the whole global batch.
    const char *buckets[] = { "0", "1" };
    for (int y = 0; y < 2; y++) {
        char *argv[] = { "t", "--context", "3", "--hidden", "40", "--layers", "2", "--batch", "252", "--accum", "3",
                         "--bucket-mb", (char *)buckets[y], "--sample", "0", "--log-every", "0" };
        Trainer t;
        setup_from(&t, "slices run", 17, argv);
        Model *m = &t.model;
        int B = t.a.batch, per = B / rt.world, rows = t.acts.rows, K = t.a.accum;
        zero_grad(m);
        for (int k = 0; k < K; k++) {
            data_batch(&t.data, 0, B, rt.rank * per + k * rows, rows, t.acts.ctx, t.acts.targets);
            forward_backward(&t, B);
        }
        reduce_scatter_wait(&t);
        double *p = mem_alloc(MEM_DATA, m->numel * sizeof(double)), *g = mem_alloc(MEM_DATA, m->numel * sizeof(double));
        double *part = mem_alloc(MEM_DATA, m->numel * sizeof(double));
        for (size_t i = 0; i < m->numel; i++) p[i] = m->params[i];
        ref_grad_of(&t, p, 0, B, 0, B, g);  // every example of the batch
        double dist = slices_from(m, g);
        double nans = 0;
        for (size_t i = 0; i < m->shard_numel; i++) nans += isnan(m->grads[i]);
        comm_metric_max(&nans, 1);
        const char *why = "compare with the instructions of lc3.2";
        if (nans > 0) why = "there are NaNs in them: the reduce-scatter read a buffer that was freed before it "
                            "completed (free it only after the wait; make grade fills freed memory with NaN)";
        else if (dist > 1e-5) {
            // What only the last micro-batch, or this rank's own examples, would give.
            for (size_t i = 0; i < m->numel; i++) g[i] = 0;
            for (int r = 0; r < rt.world; r++) {
                ref_grad_of(&t, p, 0, B, r * per + (K - 1) * rows, rows, part);
                for (size_t i = 0; i < m->numel; i++) g[i] += part[i];
            }
            double last = slices_from(m, g);
            ref_grad_of(&t, p, 0, B, rt.rank * per, per, part);
            double own = slices_from(m, part);
            double zero = 0;
            for (size_t i = 0; i < m->shard_numel; i++) zero += fabsf(m->grads[i]);
            comm_metric_sum(&zero, 1);
            why = zero == 0 ? "they are all zero: no reduce-scatter reached them" :
                  last <= 1e-5 ? "only the last micro-batch is in them: the reduce-scatter overwrites the slices, so "
                                 "add what they held into your own part before launching" :
                  rt.world > 1 && own <= 1e-5 ? "they hold this rank's own gradient: nothing was summed over ranks" :
                  why;
        }
        ck_all_msg(nans == 0 && dist <= 1e-5, "after backward with accum 3 (bucket-mb %s) and the last wait, the "
                   "gradient slices are %.3g (relative L2) from the gradient of the whole global batch: %s",
                   buckets[y], dist, why);
        mem_free(p);
        mem_free(g);
        mem_free(part);
        trainer_teardown(&t);
    }
}
END_TEST

START_TEST(test_launch_does_not_wait) {
    // Grading mode runs a request only when it, or a later one, is waited for:
    // the reduce-scatter launched for the top layer is still not done when the
    // launch returns, unless the launch waited for it.
    Trainer t;
    setup(&t, "launch", "64", "3", "252", "1", "0", "0");
    Model *m = &t.model;
    int top = m->nlayers - 1;
    float *g = mem_alloc(MEM_GRADS, m->layer[top].pad * sizeof(float));
    zero_grad(m);
    grads_ready(&t, top, g);  // the top layer's bucket is complete: its reduce-scatter is launched
    int launched = t.sending != NULL, waited = launched && comm_test(t.sending->req);
    reduce_scatter_wait(&t);
    ck_all_msg(launched, "after the top layer's gradient was ready, no reduce-scatter was in flight (t->sending "
               "is empty): launch it, and remember it in t->sending");
    ck_all_msg(!waited, "the launch returned with its reduce-scatter complete: it waited. Launch with "
               "comm_reduce_scatter_async and wait only in reduce_scatter_wait, so backward goes on meanwhile");
    trainer_teardown(&t);
}
END_TEST

START_TEST(test_formulas) {
    const char *sizes[][2] = { { "64", "3" }, { "37", "2" } };
    for (int z = 0; z < 2; z++)
        for (int accum = 1; accum <= 3; accum += 2)
            for (int c = 0; c < 2; c++) {
                Trainer t;
                MemStats before = mem_stats();
                setup(&t, "formula", sizes[z][0], sizes[z][1], "252", accum == 1 ? "1" : "3", c ? "0.5" : "0", "0");
                MemStats s = mem_stats();
                double psi = (double)t.model.numel, pad = (double)padded_numel(&t.model), N = rt.world;
                double cat[MEM_NCAT];
                for (int k = 0; k < MEM_NCAT; k++) cat[k] = (double)(s.cur[k] - before.cur[k]);
                ck_all_msg(cat[MEM_PARAMS] == 4 * psi && cat[MEM_GRADS] == 4 * pad / N && cat[MEM_ADAM_M] == 4 * pad / N &&
                           cat[MEM_ADAM_V] == 4 * pad / N, "mem holds params %.0f, grads %.0f, adam_m %.0f, adam_v "
                           "%.0f bytes; want 4Ψ, then 4Ψ_pad/N each (Ψ = %.0f, Ψ_pad = %.0f, N = %d)", cat[MEM_PARAMS],
                           cat[MEM_GRADS], cat[MEM_ADAM_M], cat[MEM_ADAM_V], psi, pad, rt.world);
                double state = 4 * psi + 12 * pad / N;
                ck_all_msg(model_state_formula(&t.model) == state, "model_state_formula says %.0f bytes; this stage "
                           "keeps 4Ψ + 12Ψ_pad/N = %.0f (Ψ = %.0f, Ψ_pad = %.0f, N = %d)",
                           model_state_formula(&t.model), state, psi, pad, rt.world);
                double f = (N - 1) / N, traffic = accum * f * 4 * pad + f * 4 * pad + (c ? 2 * f * 8 : 0);
                ck_all_msg(fabs(comm_theory(&t) - traffic) <= 1e-9 * traffic + 1e-9, "comm_theory says %.1f bytes per "
                           "step (accum %d, clip %s, N = %d); the ring model gives %.1f", comm_theory(&t), accum,
                           c ? "on" : "off", rt.world, traffic);
                trainer_teardown(&t);
            }
}
END_TEST

// ----------------------------------------------------------------------------
// memory and communication against the formulas

START_TEST(test_model_state_and_comm_exact) {
    // The default model (at N = 3 its first layer does not divide), and hidden
    // 37, where no layer divides by 3 or 4.
    const char *sizes[][2] = { { "256", "2" }, { "64", "3" }, { "37", "2" } };
    const char *buckets[] = { "0", "0.03", "1" };
    for (int z = 0; z < 3; z++)
        for (int accum = 1; accum <= 3; accum += 2)
            for (int y = 0; y < 3; y++)
                for (int clipping = 0; clipping < 2; clipping++) {
                    char what[128];
                    snprintf(what, sizeof what, "hidden %s accum %d bucket-mb %s clip %d", sizes[z][0],
                             accum, buckets[y], clipping);
                    Trainer t;
                    MemStats before = mem_stats();
                    setup(&t, what, sizes[z][0], sizes[z][1], "252", accum == 1 ? "1" : "3",
                          clipping ? "0.5" : "0", buckets[y]);
                    train(&t);
                    MemStats s = mem_stats();
                    uint64_t psi = t.model.numel, pad = padded_numel(&t.model), N = (uint64_t)rt.world;
                    uint64_t steps = (uint64_t)t.a.steps, micro = steps * (uint64_t)accum;
                    CK_ALL(mem_model_state_bytes(&s) - mem_model_state_bytes(&before) ==
                               4 * psi + 12 * pad / N,
                           "%s: model state is not 4Ψ + 12Ψ_pad/N", what);
                    CK_ALL(model_state_formula(&t.model) == (double)(4 * psi + 12 * pad / N),
                           "%s: formula wrong", what);
                    const CommCount *rs = &t.comm.kind[COLL_REDUCE_SCATTER],
                                    *ag = &t.comm.kind[COLL_ALL_GATHER], *ar = &t.comm.kind[COLL_ALL_REDUCE];
                    // One reduce-scatter per bucket per micro-batch: accumulation costs here.
                    CK_ALL(rs->calls == micro * (uint64_t)t.nbuckets && rs->payload == micro * 4 * pad &&
                               rs->sent_xn == micro * (N - 1) * 4 * pad,
                           "%s: %llu reduce-scatters for %d buckets, payload %llu", what,
                           (unsigned long long)rs->calls, t.nbuckets, (unsigned long long)rs->payload);
                    CK_ALL(ag->calls == steps * (uint64_t)t.model.nlayers && ag->payload == steps * 4 * pad &&
                               ag->sent_xn == steps * (N - 1) * 4 * pad,
                           "%s: all-gather is not one per layer of 4Ψ_pad per step", what);
                    CK_ALL(ar->calls == steps * (uint64_t)clipping && ar->payload == steps * 8 * clipping,
                           "%s: all-reduces other than the clip's one double", what);
                    double per_step = comm_total_sent_bytes(&t.comm) / (double)steps;
                    CK_ALL(fabs(per_step - comm_theory(&t)) <= 1e-9 * per_step + 1e-9,
                           "%s: stage's theory %.1f != measured %.1f", what, comm_theory(&t), per_step);
                    trainer_teardown(&t);
                }
}
END_TEST

START_TEST(test_buckets_plan) {
    // hidden 64, layers 3 at N = 4: padded layers 5248, 4160, 4160, 1756
    // elements; 0.03 MiB (7864 floats) takes {3, 2}, then {1} and {0} alone.
    Trainer t;
    setup(&t, "buckets", "64", "3", "252", "1", "0", "0.03");
    uint64_t cap = (uint64_t)(0.03 * 1048576.0), covered = 0;
    int next = t.model.nlayers - 1, ok = 1;
    for (int b = 0; b < t.nbuckets; b++) {
        const Bucket *k = &t.bucket[b];
        uint64_t bytes = 0;
        for (int l = k->lo; l <= k->hi; l++) bytes += 4 * padded(&t.model.layer[l]);
        ok &= k->hi == next && k->lo <= k->hi && (k->lo == k->hi || bytes <= cap);
        ok &= k->count * (uint64_t)rt.world * 4 == bytes;
        // A bucket closes only when the next layer would not fit.
        ok &= k->lo == 0 || bytes + 4 * padded(&t.model.layer[k->lo - 1]) > cap;
        covered += bytes;
        next = k->lo - 1;
    }
    CK_ALL(ok && next == -1 && covered == 4 * padded_numel(&t.model), "bucket plan wrong");
    if (rt.world == 4) CK_ALL(t.nbuckets == 3 && t.bucket[0].lo == 2, "want buckets {3,2} {1} {0}");
    trainer_teardown(&t);
}
END_TEST

START_TEST(test_grads_peak) {
    // One layer per bucket: layer l's full gradient is allocated while layer
    // l+1's reduce-scatter may be in flight, never more. So the peak of `grads`
    // is the slices plus the biggest pair of neighbouring layers (and with
    // accumulation, layer 0's still in flight when the next micro-batch's top
    // layer arrives). Six layers: that is well under a full 4Ψ.
    for (int accum = 1; accum <= 3; accum += 2) {
        Trainer t;
        setup(&t, "peak", "48", "5", "252", accum == 1 ? "1" : "3", "0", "0");
        train(&t);
        const Model *m = &t.model;
        uint64_t pair = largest(m, 1);
        uint64_t wrap = padded(&m->layer[m->nlayers - 1]) + padded(&m->layer[0]);
        if (accum > 1 && wrap > pair) pair = wrap;
        uint64_t slices = 4 * padded_numel(m) / (uint64_t)rt.world;
        MemStats s = mem_stats();
        CK_ALL(s.peak[MEM_GRADS] == slices + 4 * pair,
               "accum %d: grads peaked at %zu bytes, want slices %llu + two layers %llu", accum,
               s.peak[MEM_GRADS], (unsigned long long)slices, (unsigned long long)(4 * pair));
        CK_ALL(4 * pair < 4 * m->numel, "two layers are the whole model: the test proves nothing");
        CK_ALL(s.cur[MEM_GRADS] == slices, "after the step, grads hold %zu bytes, want the slices %llu",
               s.cur[MEM_GRADS], (unsigned long long)slices);
        trainer_teardown(&t);
    }
}
END_TEST

START_TEST(test_full_grad_freed_when_reduced) {
    Trainer t;
    setup(&t, "freed", "64", "3", "252", "1", "0", "0");
    Model *m = &t.model;
    uint64_t slices = 4 * m->shard_numel;
    zero_grad(m);
    data_batch(&t.data, 0, t.a.batch, rt.rank * t.acts.rows, t.acts.rows, t.acts.ctx, t.acts.targets);
    forward_backward(&t, t.a.batch);
    // Backward ended with layer 0's reduce-scatter launched: its full gradient
    // is all that is left, whether or not the comm thread has finished it.
    Bucket *last = t.sending;
    ck_all_msg(last && last->lo == 0 && mem_stats().cur[MEM_GRADS] == slices + 4 * padded(&m->layer[0]),
               "right after backward, grads hold %zu bytes; want the slices (%llu) and layer 0's full gradient "
               "(%llu), whose reduce-scatter is the one still in flight: each other layer's full gradient is "
               "freed once its reduce-scatter is done", mem_stats().cur[MEM_GRADS], (unsigned long long)slices,
               (unsigned long long)(4 * padded(&m->layer[0])));
    reduce_scatter_wait(&t);
    // Each of the three named by itself: which one failed is the message.
    ck_all_msg(comm_test(last->req), "after reduce_scatter_wait, layer 0's reduce-scatter (the last launched) is "
               "still in flight: the wait must wait for it");
    ck_all_msg(mem_stats().cur[MEM_GRADS] == slices, "after reduce_scatter_wait, grads hold %zu bytes; want the "
               "slices alone (%llu): layer 0's full gradient is freed once its reduce-scatter is done",
               mem_stats().cur[MEM_GRADS], (unsigned long long)slices);
    ck_all_msg(t.sending == NULL, "after reduce_scatter_wait, t->sending still names a bucket (layer %d's): "
               "nothing is in flight once it returns, so set it to NULL", t.sending ? t.sending->lo : -1);
    trainer_teardown(&t);
}
END_TEST

START_TEST(test_reduce_scatter_overlaps_backward) {
    // Each reduce-scatter but a micro-batch's last is needed only after the next
    // layer's backward has launched compute: comm_wait_timed counts the requests
    // that had compute between their launch and the first wait that needed
    // them. Order, not time: the same verdict on a loaded machine.
    for (int accum = 1; accum <= 3; accum += 2) {
        Trainer t;
        setup(&t, "overlap", "64", "3", "252", accum == 1 ? "1" : "3", "0", "0");
        train(&t);
        long micro = t.a.steps * accum, launched = (long)t.comm.kind[COLL_REDUCE_SCATTER].calls;
        long waits = t.rs.waits, covered = t.rs.covered;
        if (rt.rank == 0 && getenv("ZC_VERBOSE"))
            printf("  accum %d: %ld reduce-scatters, %ld waited with comm_wait_timed, %ld after compute\n", accum,
                   launched, waits, covered);
        ck_all_msg(launched > 0, "no reduce-scatter was launched in %ld training steps (accum %d)", t.a.steps, accum);
        ck_all_msg(waits == launched, "%ld reduce-scatters were launched (accum %d) and %ld waited for with "
                   "comm_wait_timed(req, &t->rs), which also measures the overlap: wait for every one with it",
                   launched, accum, waits);
        ck_all_msg(covered > 0 && covered >= waits - micro, "only %ld of %ld reduce-scatters (accum %d) had backward compute between "
                   "their launch and the first wait that needed them; all but each micro-batch's last should: "
                   "launch each as its layer's gradient is ready, and wait only when the next one is launched",
                   covered, waits, accum);
        trainer_teardown(&t);
    }
}
END_TEST

START_TEST(test_no_leaks) {
    CK_ALL(mem_live_count() == 0, "%zu allocations still live", mem_live_count());
}
END_TEST

// ----------------------------------------------------------------------------
// the checks (0 points: project tests, which make test runs and make grade does not)

static int checks(Graded *g) {
    int n = 0;
    g[n++] = (Graded){ "lc3.1a", 10, "1 2 3 4", "a full gradient lives until its reduce-scatter is done, no longer", test_full_grad_freed_when_reduced };
    g[n++] = (Graded){ "lc3.1b", 5, "1 2 3 4", "the grads' peak: the slices and two layers, not 4Ψ", test_grads_peak };
    g[n++] = (Graded){ "lc3.2a", 10, "1 2 3 4", "the slices after backward: the whole batch's gradient, accum 3", test_slices_hold_global_sum };
    g[n++] = (Graded){ "lc3.2b", 5, "1 2 3 4", "the launch returns at once: backward goes on meanwhile", test_launch_does_not_wait };
    g[n++] = (Graded){ "lc3.2c", 5, "1 2 3 4", "each reduce-scatter has backward compute between launch and wait", test_reduce_scatter_overlaps_backward };
    g[n++] = (Graded){ "lc3.3a", 5, "1 2 3 4", "the formulas: 4Ψ + 12Ψ_pad/N, and the traffic", test_formulas };
    g[n++] = (Graded){ "lc3.3b", 5, "1 2 3 4", "memory and bytes exact, every shape, bucket and accum", test_model_state_and_comm_exact };
    g[n++] = (Graded){ "lc3.0a", 10, "1 2 3 4", "the whole stage: lc0's losses and model", test_follows_lc0 };
    g[n++] = (Graded){ "lc3.0b", 5, "1 2 3 4", "the same with buckets of several layers", test_follows_lc0_bucketed };
    g[n++] = (Graded){ "buckets-plan", 0, "", "buckets-plan", test_buckets_plan };
    g[n++] = (Graded){ "follows-lc0-hand-written-collectives", 0, "", "follows-lc0-hand-written-collectives", test_follows_lc0_hand_written_collectives };
    g[n++] = (Graded){ "no-leaks", 0, "", "no-leaks", test_no_leaks };
    return n;
}

static void load_refs(void) { nruns = ref_load(runs); }

GRADED_MAIN("test_lc3", checks, load_refs)
