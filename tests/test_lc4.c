// test_lc4: grades lc4_zero3 at whatever N the runner launches it with (1-4):
// it follows lc0's loss curve and ends with lc0's params (prefetch on and off,
// clipping on and off, accum 1 and 3); no rank holds the whole model, not even
// at start-up, and the seeded init and --init give exactly lc0's params; a
// layer's gathered params are freed after it runs, and at most two layers are
// gathered at once (one without prefetch), through mem; model state is
// 16Ψ_pad/N and the all-gathers are 2L-1 per micro-batch, bytes exactly as the
// theory; the prefetched gathers run under compute, by the order of launches,
// waits and compute (grading mode runs a request at its wait), never by timing.
#include "check_mpi.h"

#include "../lc4_zero3/zero3.c"
#include "grading.h"
#include "sharding.h"

// As for lc1-lc3: reordered float sums measured below 3e-7 (params) and 1e-8
// (loss); a gradient lost or counted twice moves them by 1e-3 or more.
#define PARAM_TOL 1e-5
#define LOSS_TOL 1e-6

static RefRun runs[REF_MAX];
static int nruns;

static void full_params(Trainer *t, float *dst) { gather_slices(&t->model, t->model.params, dst); }

// ----------------------------------------------------------------------------
// against lc0

START_TEST(test_follows_lc0) { grade_follows_lc0(runs, nruns, "", LOSS_TOL, PARAM_TOL); }
END_TEST

START_TEST(test_follows_lc0_without_prefetch) {
    grade_follows_lc0(runs, nruns, "--prefetch 0", LOSS_TOL, PARAM_TOL);
}
END_TEST

START_TEST(test_follows_lc0_hand_written_collectives) {
    grade_follows_lc0_hand_written(runs, nruns, "", LOSS_TOL, PARAM_TOL);
}
END_TEST

// ----------------------------------------------------------------------------
// start-up: slices only, and exactly lc0's params

START_TEST(test_init_by_slices) {
    char *argv[] = { "t", "--context", "3", "--hidden", "37", "--layers", "3", "--sample", "0" };
    mem_reset_peaks();
    MemStats before = mem_stats();
    Trainer t;
    setup_from(&t, "init", 9, argv);
    MemStats s = mem_stats();
    const Model *m = &t.model;
    // Nothing was gathered and no more than the slices of params ever existed.
    CK_ALL(s.peak[MEM_PARAMS] - before.cur[MEM_PARAMS] == 4 * m->shard_numel &&
               s.peak[MEM_COMM_BUFFERS] == before.cur[MEM_COMM_BUFFERS],
           "set-up held %zu bytes of params (slices are %zu) and gathered %zu bytes",
           s.peak[MEM_PARAMS], 4 * m->shard_numel, s.peak[MEM_COMM_BUFFERS]);
    // The slices put together are lc0's init, bit for bit.
    float *got = mem_alloc(MEM_DATA, m->numel * sizeof(float));
    float *want = mem_alloc(MEM_DATA, m->numel * sizeof(float));
    full_params(&t, got);
    for (int l = 0; l < m->nlayers; l++)
        init_segment(want + m->layer[l].off, &m->layer[l], l, t.a.seed, 0, m->layer[l].numel);
    CK_ALL(memcmp(got, want, m->numel * sizeof(float)) == 0, "sliced init differs from lc0's init");
    mem_free(got);
    mem_free(want);
    trainer_teardown(&t);
}
END_TEST

START_TEST(test_init_file_and_save) {
    // --init reads the own slices of lc0's model; --save-model writes back the
    // same bytes of tensor data, gathering one layer at a time.
    const RefRun *r = &runs[0];
    char *argv[80], path[600];
    int argc = 0;
    for (; argc < r->argc; argc++) argv[argc] = r->argv[argc];
    argv[argc++] = "--init";
    argv[argc++] = (char *)r->model;
    Trainer t;
    setup_from(&t, "init file", argc, argv);
    const Model *m = &t.model;
    float *got = mem_alloc(MEM_DATA, m->numel * sizeof(float));
    full_params(&t, got);
    CK_ALL(distance_to_reference(m, got, r->model) == 0.0, "--init did not load lc0's model exactly");
    snprintf(path, sizeof path, "%s/lc4_saved_%d.safetensors", scratch_dir(), rt.world);
    MemStats before = mem_stats();
    mem_reset_peaks();
    const char *err = save_params(&t, path);
    CK_ALL(err == NULL, "save failed: %s", err ? err : "");
    comm_barrier();  // rank 0 has closed the file
    CK_ALL(distance_to_reference(m, got, path) == 0.0, "saved model differs from the params");
    CK_ALL(mem_stats().peak[MEM_COMM_BUFFERS] - before.cur[MEM_COMM_BUFFERS] <= 4 * largest(m, 1),
           "saving gathered more than two layers at once");
    mem_free(got);
    trainer_teardown(&t);
}
END_TEST

// ----------------------------------------------------------------------------
// the exercises one at a time

START_TEST(test_gather_params_result) {
    // Each rank's slices hold values that say whose they are.
    char *argv[] = { "t", "--context", "3", "--hidden", "37", "--layers", "2", "--batch", "252", "--sample", "0" };
    Trainer t;
    setup_from(&t, "gather run", 11, argv);
    Model *m = &t.model;
    for (int l = 0; l < m->nlayers; l++) {
        const Layer *L = &m->layer[l];
        for (size_t i = 0; i < L->shard; i++) {
            size_t at = (size_t)rt.rank * L->shard + i;
            m->params[L->soff + i] = at < L->numel ? (float)(1000 * l + (int)(at % 997)) + 0.25f * rt.rank : 0.0f;
        }
    }
    // As backward visits the layers, then as forward does, prefetching the next;
    // nothing else is waited for in between (a collective of the test's own
    // would complete the prefetched gather), so the verdict comes at the end.
    int bad_l = -1, pass = 0;
    size_t bad = 0;
    float seen = 0;
    const char *why = "";
    for (int p = 0; p < 2 && bad_l < 0; p++)
        for (int k = 0; k < m->nlayers && bad_l < 0; k++) {
            int l = p == 0 ? m->nlayers - 1 - k : k, next = p == 0 ? l - 1 : l + 1;
            const Layer *L = &m->layer[l];
            const float *W = gather_params(&t, l, next);
            for (size_t i = 0; i < L->numel && bad_l < 0; i++)
                if (!W || W[i] != (float)(1000 * l + (int)(i % 997)) + 0.25f * (float)(i / L->shard)) {
                    bad_l = l, bad = i, pass = p, seen = W ? W[i] : 0.0f;
                    why = !W ? ": it returned NULL" :
                          isnan(seen) ? ": NaN is what a gathered buffer holds from the launch of its gather until "
                                        "its wait (in grading mode): wait for the layer's gather before using it, "
                                        "also when it was prefetched" :
                          seen == 0.0f ? ": nothing was gathered there" : "";
                }
            gather_free(&t, l);
        }
    const Layer *L = &m->layer[bad_l >= 0 ? bad_l : 0];
    int owner = (int)(bad / L->shard);
    ck_all_msg(bad_l < 0, "gather_params(layer %d), visited in %s order with prefetch, at N=%d: element %zu (of rank "
               "%d's slice) is %g on rank %d, want %g%s", bad_l, pass ? "forward's" : "backward's", rt.world, bad,
               owner, seen, rt.rank, (float)(1000 * bad_l + (int)(bad % 997)) + 0.25f * owner, why);
    trainer_teardown(&t);
}
END_TEST

START_TEST(test_gather_counts) {
    // Per micro-batch: every layer gathered in forward, all but the last again in
    // backward (2L - 1), none after the step; one all-gather of its padded
    // length each.
    for (int accum = 1; accum <= 3; accum += 2) {
        char *argv[] = { "t", "--context", "3", "--hidden", "37", "--layers", "3", "--batch", "252", "--steps", "2",
                         "--accum", accum == 1 ? "1" : "3", "--sample", "0", "--log-every", "0" };
        Trainer t;
        setup_from(&t, "gather count run", 17, argv);
        train(&t);
        const Model *m = &t.model;
        uint64_t L = (uint64_t)m->nlayers, micro = (uint64_t)t.a.steps * (uint64_t)accum;
        uint64_t pad = padded_numel(m), last = padded(&m->layer[L - 1]);
        const CommCount *ag = &t.comm.kind[COLL_ALL_GATHER];
        double per = (double)ag->calls / (double)micro;
        const char *why = per == 2.0 * L ? ": the last layer is gathered again in backward, though forward left it "
                                           "gathered" :
                          per == (double)L ? ": backward gathered nothing; forward freed the layers, so backward must "
                                             "gather them again" :
                          per < (double)L ? ": forward does not gather every layer it uses" : "";
        ck_all_msg(ag->calls == micro * (2 * L - 1), "%.2f all-gathers per micro-batch (accum %d) for %llu layers; "
                   "want 2L - 1 = %llu%s", per, accum, (unsigned long long)L, (unsigned long long)(2 * L - 1), why);
        ck_all_msg(ag->payload == micro * 4 * (2 * pad - last), "all-gather payload %.0f bytes per micro-batch; want "
                   "every layer's 4 x padded length once in forward and again in backward but the last: %llu",
                   (double)ag->payload / (double)micro, (unsigned long long)(4 * (2 * pad - last)));
        trainer_teardown(&t);
    }
}
END_TEST

START_TEST(test_formulas) {
    const char *sizes[][2] = { { "64", "3" }, { "37", "2" } };
    for (int z = 0; z < 2; z++)
        for (int accum = 1; accum <= 3; accum += 2)
            for (int c = 0; c < 2; c++) {
                char *argv[] = { "t", "--context", "3", "--hidden", (char *)sizes[z][0], "--layers",
                                 (char *)sizes[z][1], "--batch", "252", "--accum", accum == 1 ? "1" : "3", "--clip",
                                 c ? "0.5" : "0", "--sample", "0", "--log-every", "0" };
                Trainer t;
                MemStats before = mem_stats();
                setup_from(&t, "formula run", 17, argv);
                MemStats s = mem_stats();
                double pad = (double)padded_numel(&t.model), N = rt.world;
                double cat[MEM_NCAT];
                for (int k = 0; k < MEM_NCAT; k++) cat[k] = (double)(s.cur[k] - before.cur[k]);
                ck_all_msg(cat[MEM_PARAMS] == 4 * pad / N && cat[MEM_GRADS] == 4 * pad / N &&
                           cat[MEM_ADAM_M] == 4 * pad / N && cat[MEM_ADAM_V] == 4 * pad / N, "mem holds params %.0f, "
                           "grads %.0f, adam_m %.0f, adam_v %.0f bytes; want 4Ψ_pad/N each (Ψ_pad = %.0f, N = %d)",
                           cat[MEM_PARAMS], cat[MEM_GRADS], cat[MEM_ADAM_M], cat[MEM_ADAM_V], pad, rt.world);
                ck_all_msg(model_state_formula(&t.model) == 16 * pad / N, "model_state_formula says %.0f bytes; this "
                           "stage keeps 16Ψ_pad/N = %.0f (Ψ_pad = %.0f, N = %d)", model_state_formula(&t.model),
                           16 * pad / N, pad, rt.world);
                double f = (N - 1) / N, last = 4.0 * (double)padded(&t.model.layer[t.model.nlayers - 1]);
                double traffic = accum * f * (3 * 4 * pad - last) + (c ? 2 * f * 8 : 0);
                ck_all_msg(fabs(comm_theory(&t) - traffic) <= 1e-9 * traffic + 1e-9, "comm_theory says %.1f bytes per "
                           "step (accum %d, clip %s, N = %d); the ring model gives %.1f", comm_theory(&t), accum,
                           c ? "on" : "off", rt.world, traffic);
                trainer_teardown(&t);
            }
}
END_TEST

// ----------------------------------------------------------------------------
// memory: gathered layers freed, model state 16Ψ_pad/N

START_TEST(test_gathered_params_freed) {
    char *argv[] = { "t", "--hidden", "48", "--layers", "5", "--batch", "252", "--sample", "0" };
    Trainer t;
    setup_from(&t, "freed", 9, argv);
    const Model *m = &t.model;
    data_batch(&t.data, 0, t.a.batch, rt.rank * t.acts.rows, t.acts.rows, t.acts.ctx, t.acts.targets);
    size_t base = mem_stats().cur[MEM_COMM_BUFFERS];
    forward(&t, t.acts.rows);
    // After forward only the last layer is still gathered, for backward.
    ck_all_msg(mem_stats().cur[MEM_COMM_BUFFERS] - base == 4 * padded(&m->layer[m->nlayers - 1]),
               "after forward %zu bytes of params are gathered; want the last layer's alone (%llu), kept for "
               "backward: a layer left gathered, or one freed too soon", mem_stats().cur[MEM_COMM_BUFFERS] - base,
               (unsigned long long)(4 * padded(&m->layer[m->nlayers - 1])));
    gather_free(&t, m->nlayers - 1);
    size_t left = mem_stats().cur[MEM_COMM_BUFFERS] - base;
    ck_all_msg(left == 0, "after gather_free of the last layer %zu bytes of params are still gathered: a layer left "
               "gathered", left);
    ck_all_msg(t.gathered[m->nlayers - 1] == NULL, "gather_free freed the last layer's buffer, but "
               "t->gathered still points at the buffer: set it to NULL, or the layer's next use takes the freed "
               "buffer for gathered params");
    trainer_teardown(&t);
}
END_TEST

START_TEST(test_peaks_exact) {
    // With prefetch a layer and its neighbour are gathered at once, without it
    // one layer; gradients as in lc3. Six layers: well under a full 4Ψ.
    for (int prefetch = 0; prefetch < 2; prefetch++) {
        char *argv[] = { "t", "--hidden", "48", "--layers", "5", "--batch", "252", "--steps", "3",
                         "--prefetch", prefetch ? "1" : "0", "--sample", "1", "--log-every", "0" };
        Trainer t;
        MemStats before = mem_stats();
        setup_from(&t, "peaks", 15, argv);
        train(&t);
        sample_words(&t);
        const Model *m = &t.model;
        MemStats s = mem_stats();
        uint64_t gathered = 4 * largest(m, prefetch), slices = 4 * padded_numel(m) / (uint64_t)rt.world;
        CK_ALL(s.peak[MEM_COMM_BUFFERS] == gathered,
               "prefetch %d: %zu bytes gathered at the peak, want %llu", prefetch,
               s.peak[MEM_COMM_BUFFERS], (unsigned long long)gathered);
        CK_ALL(s.peak[MEM_GRADS] == slices + 4 * largest(m, 1), "prefetch %d: grads peak %zu", prefetch,
               s.peak[MEM_GRADS]);
        CK_ALL(gathered < 4 * m->numel, "two layers are the whole model: the test proves nothing");
        CK_ALL(mem_model_state_bytes(&s) - mem_model_state_bytes(&before) == 16 * padded_numel(m) / rt.world,
               "model state is not 16Ψ_pad/N");
        CK_ALL(s.cur[MEM_COMM_BUFFERS] == before.cur[MEM_COMM_BUFFERS], "gathered params left behind");
        trainer_teardown(&t);
    }
}
END_TEST

// ----------------------------------------------------------------------------
// communication against the theory

START_TEST(test_comm_exact) {
    const char *sizes[][2] = { { "256", "2" }, { "64", "3" }, { "37", "2" } };
    for (int z = 0; z < 3; z++)
        for (int accum = 1; accum <= 3; accum += 2)
            for (int clipping = 0; clipping < 2; clipping++)
                for (int prefetch = 0; prefetch < 2; prefetch++) {
                    char what[128];
                    snprintf(what, sizeof what, "hidden %s accum %d clip %d prefetch %d", sizes[z][0], accum,
                             clipping, prefetch);
                    char *argv[] = { "t", "--hidden", (char *)sizes[z][0], "--layers", (char *)sizes[z][1],
                                     "--batch", "252", "--steps", "3", "--accum", accum == 1 ? "1" : "3",
                                     "--clip", clipping ? "0.5" : "0", "--prefetch", prefetch ? "1" : "0",
                                     "--sample", "0", "--log-every", "0" };
                    Trainer t;
                    setup_from(&t, what, 19, argv);
                    train(&t);
                    const Model *m = &t.model;
                    uint64_t N = (uint64_t)rt.world, pad = padded_numel(m), L = (uint64_t)m->nlayers;
                    uint64_t last = padded(&m->layer[L - 1]), micro = (uint64_t)t.a.steps * (uint64_t)accum;
                    const CommCount *ag = &t.comm.kind[COLL_ALL_GATHER], *rs = &t.comm.kind[COLL_REDUCE_SCATTER],
                                    *ar = &t.comm.kind[COLL_ALL_REDUCE];
                    // L gathers in forward, L-1 in backward; none after the step.
                    CK_ALL(ag->calls == micro * (2 * L - 1) && ag->payload == micro * 4 * (2 * pad - last) &&
                               ag->sent_xn == micro * (N - 1) * 4 * (2 * pad - last),
                           "%s: %llu all-gathers, payload %llu", what, (unsigned long long)ag->calls,
                           (unsigned long long)ag->payload);
                    CK_ALL(rs->calls == micro * (uint64_t)t.nbuckets && rs->payload == micro * 4 * pad &&
                               rs->sent_xn == micro * (N - 1) * 4 * pad,
                           "%s: reduce-scatters wrong", what);
                    CK_ALL(ar->calls == (uint64_t)t.a.steps * (uint64_t)clipping, "%s: all-reduces wrong", what);
                    double per_step = comm_total_sent_bytes(&t.comm) / (double)t.a.steps;
                    CK_ALL(fabs(per_step - comm_theory(&t)) <= 1e-9 * per_step + 1e-9,
                           "%s: stage's theory %.1f != measured %.1f", what, comm_theory(&t), per_step);
                    trainer_teardown(&t);
                }
}
END_TEST

START_TEST(test_prefetch_overlaps_compute) {
    // With prefetch, layer l+1's gather (l-1's in backward) is launched before
    // layer l computes and first needed after: comm_wait_timed counts the
    // gathers that had compute between their launch and the first wait that
    // needed them. Per micro-batch only forward's first layer has nothing to
    // hide under. Order, not time: the same verdict on a loaded machine.
    for (int accum = 1; accum <= 3; accum += 2) {
        char *argv[] = { "t", "--context", "3", "--hidden", "37", "--layers", "3", "--batch", "252", "--steps", "2",
                         "--accum", accum == 1 ? "1" : "3", "--sample", "0", "--log-every", "0" };
        Trainer t;
        setup_from(&t, "overlap", 17, argv);
        train(&t);
        long micro = t.a.steps * accum, launched = (long)t.comm.kind[COLL_ALL_GATHER].calls;
        long waits = t.ag.waits, covered = t.ag.covered;
        if (rt.rank == 0 && getenv("ZC_VERBOSE"))
            printf("  accum %d: %ld all-gathers, %ld waited with comm_wait_timed, %ld after compute\n", accum,
                   launched, waits, covered);
        ck_all_msg(launched > 0, "no all-gather was launched in %ld training steps (accum %d)", t.a.steps, accum);
        ck_all_msg(waits == launched, "%ld all-gathers were launched (accum %d) and %ld waited for with "
                   "comm_wait_timed(req, &t->ag): %s", launched, accum, waits, waits < launched ?
                   "a gather launched is waited for before its layer is used, a prefetched one too (until its wait "
                   "the buffer holds poison)" : "wait once for each, with it");
        ck_all_msg(covered > 0 && covered >= waits - micro, "no all-gather ran under compute: only %ld of %ld (accum %d) had compute "
                   "between their launch and the first wait that needed them; with --prefetch 1 launch the next "
                   "layer's gather before waiting for this one's, and wait for it only when that layer runs",
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

// A model whose ranks disagree: rank 0 puts all mass on 'a', the others on
// 'z'. report_samples must feed every rank rank 0's draw, so every rank sees
// the same contexts; it records a hash of them.
static uint64_t seen_hash;
static int seen_calls;
static void disagreeing_next(void *model, const uint8_t *ctx, float *probs) {
    (void)model;
    for (int t = 0; t < 3; t++) seen_hash = seen_hash * 1099511628211ull + ctx[t] + 1;
    seen_calls++;
    for (int v = 0; v < VOCAB; v++) probs[v] = 0.0f;
    probs[rt.rank == 0 ? (seen_calls % 4 ? 1 : 0) : 26] = 1.0f;  // rank 0: "aaa" words
}

START_TEST(test_samples_follow_rank_0) {
    Args a;
    char err[256];
    char *argv[] = { "t", "--sample", "3" };
    ck_assert_int_eq(args_parse(&a, 3, argv, OPTIONS, rt.world, err, sizeof err), ARGS_OK);
    seen_hash = 0;
    seen_calls = 0;
    report_samples(&a, 3, 1, disagreeing_next, NULL);
    double v[4] = { (double)(seen_hash >> 11), -(double)(seen_hash >> 11), seen_calls, -seen_calls };
    comm_metric_max(v, 4);
    CK_ALL(v[0] == -v[1] && v[2] == -v[3], "the ranks fed different symbols back into the model: they would part ways");
}
END_TEST

static int checks(Graded *g) {
    int n = 0;
    g[n++] = (Graded){ "lc4.1a", 10, "1 2 3 4", "gather_params: each layer whole, from every rank's slice", test_gather_params_result };
    g[n++] = (Graded){ "lc4.1b", 10, "1 2 3 4", "2L - 1 all-gathers per micro-batch: backward gathers again", test_gather_counts };
    g[n++] = (Graded){ "lc4.1c", 5, "1 2 3 4", "each prefetched gather has compute between launch and wait", test_prefetch_overlaps_compute };
    g[n++] = (Graded){ "lc4.2a", 10, "1 2 3 4", "after forward only the last layer gathered; freed, it is gone", test_gathered_params_freed };
    g[n++] = (Graded){ "lc4.2b", 5, "1 2 3 4", "the peaks: two layers gathered with prefetch, one without", test_peaks_exact };
    g[n++] = (Graded){ "lc4.3a", 5, "1 2 3 4", "the formulas: 16Ψ_pad/N, and the traffic", test_formulas };
    g[n++] = (Graded){ "lc4.3b", 5, "1 2 3 4", "bytes exact, every shape, accum, clip and prefetch", test_comm_exact };
    g[n++] = (Graded){ "lc4.0a", 10, "1 2 3 4", "the whole stage: lc0's losses and model", test_follows_lc0 };
    g[n++] = (Graded){ "lc4.0b", 5, "1 2 3 4", "the same without prefetch", test_follows_lc0_without_prefetch };
    g[n++] = (Graded){ "init-by-slices", 0, "", "init-by-slices", test_init_by_slices };
    g[n++] = (Graded){ "init-file-and-save", 0, "", "init-file-and-save", test_init_file_and_save };
    g[n++] = (Graded){ "follows-lc0-hand-written-collectives", 0, "", "follows-lc0-hand-written-collectives", test_follows_lc0_hand_written_collectives };
    g[n++] = (Graded){ "samples-follow-rank-0", 0, "", "samples-follow-rank-0", test_samples_follow_rank_0 };
    g[n++] = (Graded){ "no-leaks", 0, "", "no-leaks", test_no_leaks };
    return n;
}

static void load_refs(void) { nruns = ref_load(runs); }

GRADED_MAIN("test_lc4", checks, load_refs)
