// test_lc3: grades lc3_zero2 at whatever N the runner launches it with (1-4):
// it follows lc0's loss curve and ends with lc0's params (one layer per
// reduce-scatter and bucketed, clipping on and off, accum 1 and 3); model state
// is 4Ψ + 12Ψ_pad/N and communication equals the theory, to the byte; a layer's
// full gradient is freed once its reduce-scatter is done, so at most two
// buckets' full gradients ever exist, asserted through mem; and the
// reduce-scatters run while backward computes, measured by their timestamps.
#include "check_mpi.h"

#include "../lc3_zero2/zero2.c"
#include "grading.h"
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
    CK_ALL(last && last->lo == 0 && mem_stats().cur[MEM_GRADS] == slices + 4 * padded(&m->layer[0]),
           "after backward: grads hold %zu bytes, want slices + layer 0", mem_stats().cur[MEM_GRADS]);
    reduce_scatter_wait(&t);
    CK_ALL(comm_test(last->req) && mem_stats().cur[MEM_GRADS] == slices && t.sending == NULL,
           "after the reduce-scatter: grads hold %zu bytes, want the slices %llu",
           mem_stats().cur[MEM_GRADS], (unsigned long long)slices);
    trainer_teardown(&t);
}
END_TEST

START_TEST(test_reduce_scatter_overlaps_backward) {
    // Each reduce-scatter but the last is waited for only after the next
    // layer's backward: the time it ran before that wait began ran under
    // compute. Wide layers make each layer's backward take milliseconds.
    Trainer t;
    setup(&t, "overlap", "512", "3", "384", "1", "0", "0");
    train(&t);
    double hidden[1] = { t.rs.hidden }, total[1] = { t.rs.time };
    comm_metric_sum(hidden, 1);
    comm_metric_sum(total, 1);
    if (rt.rank == 0 && getenv("ZC_VERBOSE"))
        printf("  reduce-scatter %.3f ms, %.3f ms of it under compute (summed over ranks)\n",
               1e3 * total[0], 1e3 * hidden[0]);
    CK_ALL(hidden[0] > 0 && hidden[0] <= total[0],
           "no reduce-scatter ran during backward (%.3g s of %.3g s)", hidden[0], total[0]);
    trainer_teardown(&t);
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
    g[n++] = (Graded){ "follows-lc0", 0, "", "follows-lc0", test_follows_lc0 };
    g[n++] = (Graded){ "follows-lc0-bucketed", 0, "", "follows-lc0-bucketed", test_follows_lc0_bucketed };
    g[n++] = (Graded){ "model-state-and-comm-exact", 0, "", "model-state-and-comm-exact", test_model_state_and_comm_exact };
    g[n++] = (Graded){ "buckets-plan", 0, "", "buckets-plan", test_buckets_plan };
    g[n++] = (Graded){ "grads-peak", 0, "", "grads-peak", test_grads_peak };
    g[n++] = (Graded){ "full-grad-freed-when-reduced", 0, "", "full-grad-freed-when-reduced", test_full_grad_freed_when_reduced };
    g[n++] = (Graded){ "reduce-scatter-overlaps-backward", 0, "", "reduce-scatter-overlaps-backward", test_reduce_scatter_overlaps_backward };
    g[n++] = (Graded){ "follows-lc0-hand-written-collectives", 0, "", "follows-lc0-hand-written-collectives", test_follows_lc0_hand_written_collectives };
    g[n++] = (Graded){ "no-leaks", 0, "", "no-leaks", test_no_leaks };
    return n;
}

static void load_refs(void) { nruns = ref_load(runs); }

GRADED_MAIN("test_lc3", checks, load_refs)
