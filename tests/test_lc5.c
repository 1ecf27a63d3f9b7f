// test_lc5: grades lc5_mixed_precision at whatever N the runner launches it
// with (1-4): with --dtype fp32 it follows lc0 as tightly as lc4 does; in bf16
// and fp16 it stays within a measured tolerance of lc0's fp32 curve and
// converges; model state is 16Ψ_pad/N in every type and the collectives carry
// 2-byte elements, bytes exactly as the theory; activations are stored in 2; an overflow on one rank makes
// every rank skip the same step, halve the scale and leave params, master, m,
// v and the step count untouched; fp16 gradients too small for the type are
// lost without loss scaling and kept with it; a static power-of-two scale gives
// the same model as none (dividing, not multiplying); the dynamic scale moves
// as the rule says.
#include "check_mpi.h"

#include "../lc5_mixed_precision/mixed_precision.c"
#include "grading.h"
#include "sharding.h"

// fp32: as lc1-lc4 (the same arithmetic as lc4, bit for bit).
#define PARAM_TOL 1e-5
#define LOSS_TOL 1e-6
// 16-bit: every layer output and gradient is rounded to 8 (bf16) or 11 (fp16)
// significant bits. Over the 30 reference steps the loss stayed within 5.0e-4
// (bf16) and 2.6e-4 (fp16) of lc0's, relative, at N = 1..4 over every backend:
// the bounds are 4x that. The params drift further, 4.4e-2 and 3.3e-2 (relative
// L2): Adam's first steps are nearly lr x sign(g), so a small gradient that
// rounds differently moves its param by a whole lr. The bounds there are 2.3x
// and 3x. A gradient
// lost or counted twice moves the loss by 1e-2.
#define LOSS_TOL_BF16 2e-3
#define PARAM_TOL_BF16 1e-1
#define LOSS_TOL_FP16 1e-3
#define PARAM_TOL_FP16 1e-1

static RefRun runs[REF_MAX];
static int nruns;

// The model is the fp32 master: gather its slices.
static void full_params(Trainer *t, float *dst) { gather_slices(&t->model, t->model.master, dst); }

// ----------------------------------------------------------------------------
// against lc0

START_TEST(test_fp32_follows_lc0) { grade_follows_lc0(runs, nruns, "--dtype fp32", LOSS_TOL, PARAM_TOL); }
END_TEST

START_TEST(test_bf16_near_lc0) { grade_follows_lc0(runs, nruns, "--dtype bf16", LOSS_TOL_BF16, PARAM_TOL_BF16); }
END_TEST

START_TEST(test_fp16_near_lc0) { grade_follows_lc0(runs, nruns, "--dtype fp16", LOSS_TOL_FP16, PARAM_TOL_FP16); }
END_TEST

// The mean loss of the last 50 of `steps` steps of the default model at batch
// 252 (one batch's loss is noise of a few percent).
static double train_default(const char *dtype, long steps, long *skipped) {
    char n[16];
    snprintf(n, sizeof n, "%ld", steps);
    char *argv[] = { "t", "--dtype", (char *)dtype, "--steps", n, "--batch", "252", "--sample", "0",
                     "--log-every", "0" };
    Trainer t;
    setup_from(&t, dtype, 11, argv);
    double loss = 0;
    for (long s = 0; s < t.a.steps; s++) {
        double l = train_step(&t, s);
        if (s >= t.a.steps - 50) loss += l / 50;
    }
    *skipped = t.scaler.skipped;
    trainer_teardown(&t);
    return loss;
}

START_TEST(test_bf16_converges_with_fp32) {
    // 300 steps of the default model (six hidden layers of 128): from ln 27 =
    // 3.30 both average 2.41-2.42 over the last 50 steps; bf16 was within 5e-3
    // of fp32 (relative) at N = 1..4, and skipped nothing.
    long skipped, none;
    double bf16 = train_default("bf16", 300, &skipped), fp32 = train_default("fp32", 300, &none);
    if (rt.rank == 0 && getenv("ZC_VERBOSE")) printf("  last 50 of 300 steps: bf16 %.4f, fp32 %.4f\n", bf16, fp32);
    CK_ALL(fp32 < 2.5 && fabs(bf16 - fp32) <= 1e-2 * fp32 && skipped == 0,
           "bf16 ended at %.4f, fp32 at %.4f (skipped %ld)", bf16, fp32, skipped);
}
END_TEST

START_TEST(test_follows_lc0_hand_written_collectives) {
    grade_follows_lc0_hand_written(runs, nruns, "--dtype fp32", LOSS_TOL, PARAM_TOL);
}
END_TEST

START_TEST(test_bf16_hand_written_collectives) {
    grade_follows_lc0_hand_written(runs, nruns, "--dtype bf16", LOSS_TOL_BF16, PARAM_TOL_BF16);
}
END_TEST

// ----------------------------------------------------------------------------
// memory and communication

START_TEST(test_model_state_and_comm_exact) {
    const char *types[] = { "bf16", "fp16", "fp32" };
    const char *sizes[][2] = { { "256", "2" }, { "37", "2" } };
    for (int q = 0; q < 3; q++)
        for (int z = 0; z < 2; z++)
            for (int accum = 1; accum <= 3; accum += 2) {
                char what[128];
                snprintf(what, sizeof what, "%s hidden %s accum %d", types[q], sizes[z][0], accum);
                char *argv[] = { "t", "--dtype", (char *)types[q], "--hidden", (char *)sizes[z][0], "--layers",
                                 (char *)sizes[z][1], "--batch", "252", "--steps", "3", "--accum",
                                 accum == 1 ? "1" : "3", "--clip", "1", "--sample", "0", "--log-every", "0" };
                MemStats before = mem_stats();
                Trainer t;
                setup_from(&t, what, 19, argv);
                train(&t);
                MemStats s = mem_stats();
                const Model *m = &t.model;
                uint64_t N = (uint64_t)rt.world, pad = padded_numel(m), L = (uint64_t)m->nlayers;
                uint64_t e = q == 2 ? 4 : 2, micro = (uint64_t)t.a.steps * (uint64_t)accum;
                uint64_t last = padded(&m->layer[L - 1]);
                CK_ALL(mem_model_state_bytes(&s) - mem_model_state_bytes(&before) == 16 * pad / N,
                       "%s: model state is not 16Ψ_pad/N", what);
                CK_ALL(s.cur[MEM_PARAMS] - before.cur[MEM_PARAMS] == e * pad / N &&
                           s.cur[MEM_MASTER_PARAMS] - before.cur[MEM_MASTER_PARAMS] == (e == 2 ? 4 * pad / N : 0),
                       "%s: params are not %llu bytes and master 4 (none in fp32)", what, (unsigned long long)e);
                const CommCount *ag = &t.comm.kind[COLL_ALL_GATHER], *rs = &t.comm.kind[COLL_REDUCE_SCATTER],
                                *ar = &t.comm.kind[COLL_ALL_REDUCE];
                CK_ALL(ag->calls == micro * (2 * L - 1) && ag->payload == micro * e * (2 * pad - last) &&
                           ag->sent_xn == micro * (N - 1) * e * (2 * pad - last),
                       "%s: all-gathers are not %llu-byte elements", what, (unsigned long long)e);
                CK_ALL(rs->calls == micro * (uint64_t)t.nbuckets && rs->payload == micro * e * pad,
                       "%s: reduce-scatters are not %llu-byte elements", what, (unsigned long long)e);
                // Per step: the overflow flag (an int) and the clip's double.
                CK_ALL(ar->calls == 2 * (uint64_t)t.a.steps && ar->payload == 12 * (uint64_t)t.a.steps,
                       "%s: all-reduces are not the flag and the norm", what);
                double per_step = comm_total_sent_bytes(&t.comm) / (double)t.a.steps;
                CK_ALL(fabs(per_step - comm_theory(&t)) <= 1e-9 * per_step + 1e-9,
                       "%s: stage's theory %.1f != measured %.1f", what, comm_theory(&t), per_step);
                trainer_teardown(&t);
            }
}
END_TEST

// The activations kept for backward are stored in dt, and so is the gradient
// the products read (d16): the same model holds 2 bytes less for each of their
// elements in bf16 than in fp32. Measured after set-up, when nothing else of
// the stage's activations category is live.
START_TEST(test_activations_in_dt) {
    const char *types[] = { "bf16", "fp32" };
    size_t held[2], elems = 0;
    for (int q = 0; q < 2; q++) {
        char *argv[] = { "t", "--dtype", (char *)types[q], "--hidden", "37", "--layers", "2",
                         "--batch", "252", "--sample", "0", "--log-every", "0" };
        MemStats before = mem_stats();
        Trainer t;
        setup_from(&t, types[q], 13, argv);
        held[q] = mem_stats().cur[MEM_ACTIVATIONS] - before.cur[MEM_ACTIVATIONS];
        const Model *m = &t.model;
        size_t stored = (size_t)m->layer[0].in, widest = (size_t)m->layer[0].in;
        for (int l = 0; l < m->nlayers; l++) {
            stored += (size_t)m->layer[l].out;
            if ((size_t)m->layer[l].out > widest) widest = (size_t)m->layer[l].out;
        }
        elems = (size_t)t.acts.rows * (stored + widest);
        trainer_teardown(&t);
    }
    CK_ALL(held[1] - held[0] == 2 * elems, "activations: bf16 holds %zu bytes, fp32 %zu: not 2 x %zu less",
           held[0], held[1], elems);
}
END_TEST

// ----------------------------------------------------------------------------
// the optimizer state of this rank

// This rank's optimizer state, to check that a skipped step leaves it alone.
typedef struct { void *params; float *master, *m, *v; long step; } State;

static State snapshot(const Trainer *t) {
    const Model *m = &t->model;
    size_t n = m->shard_numel, e = dtype_size(m->dt);
    State s = { mem_alloc(MEM_DATA, n * e), mem_alloc(MEM_DATA, n * 4), mem_alloc(MEM_DATA, n * 4),
                mem_alloc(MEM_DATA, n * 4), t->opt.step };
    memcpy(s.params, m->params, n * e);
    copy(s.master, m->master, n);
    copy(s.m, t->opt.m, n);
    copy(s.v, t->opt.v, n);
    return s;
}

static int unchanged(const Trainer *t, const State *s) {
    const Model *m = &t->model;
    size_t n = m->shard_numel;
    return memcmp(s->params, m->params, n * dtype_size(m->dt)) == 0 && memcmp(s->master, m->master, n * 4) == 0 &&
           memcmp(s->m, t->opt.m, n * 4) == 0 && memcmp(s->v, t->opt.v, n * 4) == 0 && s->step == t->opt.step;
}

static void state_free(State *s) {
    mem_free(s->params); mem_free(s->master); mem_free(s->m); mem_free(s->v);
}

// ----------------------------------------------------------------------------
// the exercises one at a time

// A bf16 trainer whose gradient slices hold g(i) times the loss scale S, as
// backward would leave them: values exact in bf16 and after the scaling.
static float slice_grad(size_t i) { return (float)((int)(i % 61) - 30) / 64.0f; }

static void trainer_with_scaled_grads(Trainer *t, const char *scale) {
    char *argv[] = { "t", "--context", "3", "--hidden", "37", "--layers", "2", "--batch", "252", "--dtype", "bf16",
                     "--loss-scale", (char *)scale, "--sample", "0", "--log-every", "0" };
    setup_from(t, "scaled run", 17, argv);
    Model *m = &t->model;
    float *g = mem_alloc(MEM_DATA, m->shard_numel * sizeof(float));
    for (size_t i = 0; i < m->shard_numel; i++) g[i] = slice_grad(i) * t->scaler.scale;
    cast_from_f32(m->grads, g, m->dt, m->shard_numel);
    mem_free(g);
}

START_TEST(test_unscaled_grads) {
    Trainer t;
    trainer_with_scaled_grads(&t, "1024");
    const Model *m = &t.model;
    for (int l = 0; l < m->nlayers; l++) {
        const Layer *L = &m->layer[l];
        const float *g = unscaled_grads(&t, l);
        size_t bad = own_real(L);
        for (size_t i = 0; i < own_real(L) && bad == own_real(L); i++)
            if (!g || g[i] != slice_grad(L->soff + i)) bad = i;
        float got = g && bad < own_real(L) ? g[bad] : 0.0f, want = bad < own_real(L) ? slice_grad(L->soff + bad) : 0.0f;
        ck_all_msg(bad == own_real(L), "unscaled_grads(layer %d) with a loss scale of 1024: element %zu is %g, the "
                   "gradient is %g (%g as stored, scaled)%s", l, bad, got, want, want * 1024.0f,
                   !g ? ": it returned NULL" :
                   want != 0 && got == want * 1024.0f * 1024.0f ? ": multiplied by the scale where it must be divided" :
                   want != 0 && got == want * 1024.0f ? ": the scale was not taken out" : "");
    }
    trainer_teardown(&t);
}
END_TEST

// What one Adam step from zero moments makes of master slices `start` (copied
// to `want`), with the gradient slice_grad times gscale: the reference Adam.
static void adam_from(const Trainer *t, const float *start, float gscale, float *want) {
    const Model *m = &t->model;
    copy(want, start, m->shard_numel);
    for (int l = 0; l < m->nlayers; l++) {
        const Layer *L = &m->layer[l];
        size_t k = own_real(L);
        float *g = mem_alloc(MEM_DATA, (k + 1) * 4), *mm = mem_alloc(MEM_DATA, (k + 1) * 4),
              *vv = mem_alloc(MEM_DATA, (k + 1) * 4);
        for (size_t i = 0; i < k; i++) g[i] = slice_grad(L->soff + i) * gscale;
        adam_update(want + L->soff, g, mm, vv, k, &t->opt.h, 1);
        mem_free(g); mem_free(mm); mem_free(vv);
    }
}

// The first of n floats where a and b differ, or n.
static size_t first_difference(const float *a, const float *b, size_t n) {
    size_t i = 0;
    while (i < n && a[i] == b[i]) i++;
    return i;
}

START_TEST(test_adam_on_master) {
    Trainer t;
    trainer_with_scaled_grads(&t, "256");
    Model *m = &t.model;
    size_t n = m->shard_numel;
    float *master0 = mem_alloc(MEM_DATA, n * 4), *want = mem_alloc(MEM_DATA, n * 4),
          *from16 = mem_alloc(MEM_DATA, n * 4), *widened = mem_alloc(MEM_DATA, n * 4);
    uint16_t *want16 = mem_alloc(MEM_DATA, n * 2), *params0 = mem_alloc(MEM_DATA, n * 2);
    copy(master0, m->master, n);
    memcpy(params0, m->params, n * 2);
    adam_from(&t, master0, 0.5f, want);  // 0.5: the clip factor below
    cast_from_f32(want16, want, m->dt, n);
    // The mistake of a master taken back from the 16-bit params before the step:
    // Adam from the rounded values.
    cast_to_f32(widened, params0, m->dt, n);
    adam_from(&t, widened, 0.5f, from16);
    adam_step(&t, 0.5f);
    size_t bad = first_difference(m->master, want, n), bad16 = n;
    for (size_t i = 0; i < n && bad16 == n; i++)
        if (((uint16_t *)m->params)[i] != want16[i]) bad16 = i;
    ck_all_msg(t.opt.step == 1, "after one adam_step the step count is %ld, want 1%s", t.opt.step,
               t.opt.step > 1 ? ": one count for the whole model, not one per layer" : "");
    ck_all_msg(bad == n, "after adam_step (loss scale 256, clip factor 0.5) rank %d's master[%zu] is %.9g, want "
               "%.9g%s", rt.rank, bad, bad < n ? m->master[bad] : 0.0f, bad < n ? want[bad] : 0.0f,
               bad < n && m->master[bad] == master0[bad] ? ": the fp32 master did not move (Adam ran on the 16-bit "
               "params?)" :
               first_difference(m->master, from16, n) == n ? ": that is Adam on the master after it was overwritten "
               "from the 16-bit params: the master is the one full-precision copy; the params are rounded from it, "
               "never the other way" :
               ": the gradient Adam sees is the stored one divided by the scale, times the clip factor");
    ck_all_msg(bad16 == n, "after adam_step rank %d's bf16 params[%zu] are 0x%04x, the new master rounded to bf16 is "
               "0x%04x%s", rt.rank, bad16, bad16 < n ? ((uint16_t *)m->params)[bad16] : 0, bad16 < n ? want16[bad16] : 0,
               bad16 < n && ((uint16_t *)m->params)[bad16] == params0[bad16] ?
                   ": the params were not rounded from the new master (cast_from_f32)" : "");
    mem_free(master0); mem_free(want); mem_free(from16); mem_free(widened); mem_free(want16); mem_free(params0);
    trainer_teardown(&t);
}
END_TEST

START_TEST(test_saved_model_is_master) {
    char path[600];
    snprintf(path, sizeof path, "%s/lc5_saved_%d.safetensors", scratch_dir(), rt.world);
    char *argv[] = { "t", "--context", "3", "--hidden", "37", "--layers", "2", "--batch", "252", "--dtype", "bf16",
                     "--sample", "0", "--log-every", "0" };
    Trainer t;
    setup_from(&t, "save run", 15, argv);
    State s0 = snapshot(&t);
    train_step(&t, 0);
    train_step(&t, 1);
    double moved = memcmp(s0.master, t.model.master, t.model.shard_numel * 4) != 0;
    comm_metric_max(&moved, 1);
    state_free(&s0);
    ck_all_msg(moved, "two training steps left the fp32 master as it was: nothing to save (lc5.4 to lc5.2 first)");
    const char *err = save_params(&t, path);
    ck_all_msg(err == NULL, "save_params: %s", err ? err : "");
    float *mine = mem_alloc(MEM_DATA, t.model.numel * sizeof(float));
    full_params(&t, mine);
    double dist = distance_to_reference(&t.model, mine, path);
    ck_all_msg(dist == 0, "the saved model is %.3g (relative L2) from the fp32 master: --save-model writes the "
               "master, the model at full precision, not the 16-bit params", dist);
    mem_free(mine);
    trainer_teardown(&t);
}
END_TEST

START_TEST(test_formulas) {
    const char *types[] = { "bf16", "fp16", "fp32" };
    for (int y = 0; y < 3; y++)
        for (int c = 0; c < 2; c++) {
            char *argv[] = { "t", "--context", "3", "--hidden", "37", "--layers", "2", "--batch", "252", "--accum",
                             c ? "3" : "1", "--clip", c ? "0.5" : "0", "--dtype", (char *)types[y], "--sample", "0",
                             "--log-every", "0" };
            Trainer t;
            MemStats before = mem_stats();
            setup_from(&t, "formula run", 19, argv);
            MemStats s = mem_stats();
            double pad = (double)padded_numel(&t.model), N = rt.world, e = y < 2 ? 2 : 4, k = y < 2 ? 12 : 8;
            double cat[MEM_NCAT];
            for (int q = 0; q < MEM_NCAT; q++) cat[q] = (double)(s.cur[q] - before.cur[q]);
            ck_all_msg(cat[MEM_PARAMS] == e * pad / N && cat[MEM_GRADS] == e * pad / N &&
                       cat[MEM_MASTER_PARAMS] == (y < 2 ? 4 * pad / N : 0) && cat[MEM_ADAM_M] == 4 * pad / N &&
                       cat[MEM_ADAM_V] == 4 * pad / N, "%s: mem holds params %.0f, grads %.0f, master_params %.0f, "
                       "adam_m %.0f, adam_v %.0f bytes; want %gΨ_pad/N, %gΨ_pad/N, %gΨ_pad/N, 4Ψ_pad/N, 4Ψ_pad/N "
                       "(Ψ_pad = %.0f, N = %d)", types[y], cat[MEM_PARAMS], cat[MEM_GRADS], cat[MEM_MASTER_PARAMS],
                       cat[MEM_ADAM_M], cat[MEM_ADAM_V], e, e, y < 2 ? 4.0 : 0.0, pad, rt.world);
            double state = (2 * e + k) * pad / N;
            ck_all_msg(model_state_formula(&t.model) == state, "%s: model_state_formula says %.0f bytes; this stage "
                       "keeps (%g + %g + %g)Ψ_pad/N = %.0f", types[y], model_state_formula(&t.model), e, e, k, state);
            double f = (N - 1) / N, last = e * (double)padded(&t.model.layer[t.model.nlayers - 1]);
            double traffic = (c ? 3 : 1) * f * (3 * e * pad - last) + 2 * f * 4 + (c ? 2 * f * 8 : 0);
            ck_all_msg(fabs(comm_theory(&t) - traffic) <= 1e-9 * traffic + 1e-9, "%s: comm_theory says %.1f bytes "
                       "per step (accum %d, clip %s, N = %d); the ring model gives %.1f", types[y], comm_theory(&t),
                       c ? 3 : 1, c ? "on" : "off", rt.world, traffic);
            trainer_teardown(&t);
        }
}
END_TEST

// ----------------------------------------------------------------------------
// loss scaling

// This rank's gradients for global batch `step`, summed over ranks, not yet applied.
static void gradients(Trainer *t, long step) {
    zero_grad(&t->model);
    for (int k = 0; k < t->a.accum; k++) {
        data_batch(&t->data, step, t->a.batch, rt.rank * (t->a.batch / rt.world) + k * t->acts.rows,
                   t->acts.rows, t->acts.ctx, t->acts.targets);
        forward_backward(t, t->a.batch);
    }
    reduce_scatter_wait(t);
}

START_TEST(test_overflow_on_one_rank_skips_everywhere) {
    char *argv[] = { "t", "--dtype", "fp16", "--hidden", "37", "--layers", "2", "--batch", "252",
                     "--sample", "0", "--log-every", "0" };
    Trainer t;
    setup_from(&t, "overflow", 13, argv);
    train_step(&t, 0);  // a normal step first, so m and v are not zero
    CK_ALL(t.scaler.skipped == 0 && t.scaler.scale == 65536.0f, "the first step overflowed already");
    gradients(&t, 1);
    // The last rank finds an infinity in its slice of layer 0; no other rank does.
    if (rt.rank == rt.world - 1) ((uint16_t *)t.model.grads)[0] = 0x7c00;
    State s = snapshot(&t);
    int took = optimizer_step(&t);
    ck_all_msg(!took, "rank %d took the step although rank %d's gradient overflowed: the ranks must agree on the "
               "overflow (one all-reduce of an int), or they hold different models from then on", rt.rank,
               rt.world - 1);
    ck_all_msg(t.scaler.skipped == 1 && t.scaler.scale == 32768.0f, "after the overflow rank %d counts %ld skipped "
               "steps at a scale of %g; want 1 at 32768 (halved)", rt.rank, t.scaler.skipped, t.scaler.scale);
    ck_all_msg(unchanged(&t, &s), "rank %d: the skipped step changed %s", rt.rank,
               t.opt.step != s.step ? "Adam's step count: a skipped step must not advance it" :
               "params, master, m or v");
    state_free(&s);
    // The next step goes through, at the new scale.
    s = snapshot(&t);
    gradients(&t, 2);
    CK_ALL(optimizer_step(&t) && !unchanged(&t, &s) && t.opt.step == 2, "the step after the skip failed");
    state_free(&s);
    trainer_teardown(&t);
}
END_TEST

START_TEST(test_doubling_step_unscales_by_its_scale) {
    // A dynamic scale one clean step from the end of its window: the step's
    // gradient was scaled by 65536, so the update divides by 65536; only then
    // does the scaler double (to 131072, for the next step's backward).
    Trainer t;
    trainer_with_scaled_grads(&t, "dynamic");
    t.scaler.clean = t.scaler.window - 1;
    size_t n = t.model.shard_numel;
    float *master0 = mem_alloc(MEM_DATA, n * 4), *want = mem_alloc(MEM_DATA, n * 4), *half = mem_alloc(MEM_DATA, n * 4);
    copy(master0, t.model.master, n);
    adam_from(&t, master0, 1.0f, want);
    adam_from(&t, master0, 0.5f, half);
    int took = optimizer_step(&t);
    size_t bad = first_difference(t.model.master, want, n);
    ck_all_msg(took && t.scaler.scale == 131072.0f, "a clean step at the end of a window: optimizer_step returned %d "
               "and left the scale at %g; want 1 (taken) and 131072 (doubled)", took, t.scaler.scale);
    ck_all_msg(bad == n, "a clean step that doubled the scale (65536 to 131072): rank %d's master[%zu] is %.9g, want "
               "%.9g%s", rt.rank, bad, bad < n ? t.model.master[bad] : 0.0f, bad < n ? want[bad] : 0.0f,
               first_difference(t.model.master, half, n) == n ? ": that is the gradient divided by 131072, the new "
               "scale: the step ran with 65536; tell the scaler the outcome after the update (scaler_update last)" : "");
    mem_free(master0); mem_free(want); mem_free(half);
    trainer_teardown(&t);
}
END_TEST

// ----------------------------------------------------------------------------
// the whole state through every branch of the loss scaler

// Runs graded on their whole state after every step against the reference
// build's (tests/trail.h), chosen so that each branch of the scaler runs, with
// clipping, accumulation and uneven slices (hidden 37): name and options.
static const char *scaler_runs[][2] = {
    // fp16 from 2^16, a window of 2: doublings, then overflows alone and in
    // bursts, at 40 steps.
    { "scale_window", "--dtype fp16 --scale-window 2 --clip 0.1 --accum 3 --steps 40" },
    // fp16 at a learning rate that blows the forward pass up at step 2: from
    // 8, overflows down to the floor, 1, and on at it until the scaler stops
    // the run (MAX_SKIPS_AT_FLOOR in a row). (The program itself stops at the
    // first loss that is not finite; stepping on, the harness reaches the floor.)
    { "scale_floor", "--dtype fp16 --lr 5 --initial-scale 8 --scale-window 2 --steps 20" },
    // a static fp16 scale of 700000 (not a power of two: unscaling rounds): 7
    // of 30 steps overflow, alone and in bursts, and are skipped; the scale
    // never moves.
    { "scale_static", "--dtype fp16 --loss-scale 700000 --clip 0.1 --accum 3 --steps 30" },
    // a static bf16 scale that is not a power of two: unscaling rounds in bf16's
    // 8 bits, where no step overflows.
    { "bf16_static", "--dtype bf16 --loss-scale 700000 --clip 0.1 --accum 3 --steps 30" },
    // bf16 from 2^22 with a window of 1: up to the ceiling, 2^24, and held there.
    { "scale_ceiling", "--dtype bf16 --loss-scale dynamic --initial-scale 4194304 --scale-window 1 --steps 8" },
};

START_TEST(test_scaler_whole_state) {
    for (size_t r = 0; r < sizeof scaler_runs / sizeof scaler_runs[0]; r++) {
        char text[300], *argv[40] = { "t" }, words[400];
        int argc = 1;
        snprintf(text, sizeof text, "--context 3 --hidden 37 --layers 2 --batch 252 --seed 5 %s --sample 0 "
                 "--log-every 0", scaler_runs[r][1]);
        for (char *tok = strtok(text, " "); tok && argc < 40; tok = strtok(NULL, " ")) argv[argc++] = tok;
        options_in_words(words, sizeof words, argc, argv);
        Trainer t;
        setup_from(&t, scaler_runs[r][0], argc, argv);
        Trail tr;
        trail_open(&tr, &t, scaler_runs[r][0]);
        for (long s = 0; s < t.a.steps && !t.scaler.stop; s++) {  // the stage stops where the scaler says
            train_step(&t, s);
            trail_step(&tr, &t, s);
        }
        char why[512];
        long left = trail_close(&tr, why);
        CK_ALL(left < 0, "the run '%s' (%s) at N=%d: %s", scaler_runs[r][0], words, rt.world, why);
        trainer_teardown(&t);
    }
}
END_TEST

// A model file with lc0's init scaled by `factor`: small weights make small
// gradients, down into fp16's subnormals and below.
static void write_scaled_init(const char *path, const char *hidden, float factor) {
    char *argv[] = { "t", "--context", "3", "--hidden", (char *)hidden, "--layers", "3" };
    Args a = args_of("scaled init", 7, argv);
    Model m;
    model_build(&m, &a);
    float *w = mem_alloc(MEM_DATA, m.numel * sizeof(float));
    StTensor specs[2 * MAX_LAYERS];
    const float *data[2 * MAX_LAYERS];
    for (int l = 0; l < m.nlayers; l++) {
        const Layer *L = &m.layer[l];
        init_segment(w + L->off, L, l, a.seed, 0, L->numel);
        scale(w + L->off, factor, L->numel);
        mlp_specs(specs + 2 * l, l, L->out, L->in);
        data[2 * l] = w + L->off;                                   // the weight
        data[2 * l + 1] = w + L->off + (size_t)L->out * L->in;      // the bias
    }
    const char *err = rt.rank == 0 ? st_write(path, 2 * m.nlayers, specs, data) : NULL;
    CK_ALL(err == NULL, "%s", err ? err : "");
    comm_barrier();
    mem_free(w);
    if (m.master != m.params) mem_free(m.master);
    mem_free(m.params);
    mem_free(m.grads);
}

// Params that one step moved, counted over all ranks.
static double params_moved(const char *path, const char *dtype, const char *loss_scale) {
    char *argv[] = { "t", "--context", "3", "--hidden", "64", "--layers", "3", "--batch", "252",
                     "--dtype", (char *)dtype, "--loss-scale", (char *)loss_scale, "--init", (char *)path,
                     "--sample", "0", "--log-every", "0" };
    Trainer t;
    setup_from(&t, loss_scale, 19, argv);
    State s = snapshot(&t);
    train_step(&t, 0);
    double moved[1] = { 0 };
    for (size_t i = 0; i < t.model.shard_numel; i++) moved[0] += t.model.master[i] != s.master[i];
    comm_metric_sum(moved, 1);
    CK_ALL(t.scaler.skipped == 0, "%s: the step was skipped", loss_scale);
    state_free(&s);
    trainer_teardown(&t);
    return moved[0];
}

START_TEST(test_fp16_underflow_needs_scaling) {
    // Weights at 1/100 of the usual init make most gradients smaller than fp16's
    // smallest subnormal (6e-8). Unscaled, they round to zero and Adam never
    // moves those params; scaled by 2^16 first, they survive the 16-bit trip
    // and the step moves the same params an fp32 step does. (About half the
    // params have an exactly zero gradient here, in any type: ReLU units that
    // are off for every example.)
    char path[600];
    snprintf(path, sizeof path, "%s/lc5_small_%d.safetensors", scratch_dir(), rt.world);
    write_scaled_init(path, "64", 0.01f);
    double fp32 = params_moved(path, "fp32", "none");
    double none = params_moved(path, "fp16", "none"), dynamic = params_moved(path, "fp16", "dynamic");
    if (rt.rank == 0 && getenv("ZC_VERBOSE"))
        printf("  params moved by one step: fp32 %.0f, fp16 unscaled %.0f, fp16 dynamic %.0f\n", fp32, none,
               dynamic);
    CK_ALL(fabs(dynamic - fp32) <= 0.01 * fp32 && none < 0.5 * fp32,
           "one step moved %.0f params in fp32, %.0f in fp16 unscaled, %.0f in fp16 scaled", fp32, none, dynamic);
}
END_TEST

START_TEST(test_static_scale_divides) {
    // Multiplying by 2^10 is exact in bf16 as in fp32 (only the exponent moves),
    // so a static scale of 1024 must give the very same model as none. A scale
    // multiplied in where it should be divided out is off by 10^6.
    double d[2];
    float *p[2];
    const char *scales[] = { "none", "1024" };
    for (int k = 0; k < 2; k++) {
        char *argv[] = { "t", "--context", "3", "--hidden", "37", "--layers", "2", "--batch", "252",
                         "--steps", "5", "--dtype", "bf16", "--loss-scale", (char *)scales[k],
                         "--sample", "0", "--log-every", "0" };
        Trainer t;
        setup_from(&t, scales[k], 19, argv);
        State s0 = snapshot(&t);
        d[k] = 0;
        for (long s = 0; s < t.a.steps; s++) d[k] += train_step(&t, s);
        double moved = memcmp(s0.master, t.model.master, t.model.shard_numel * 4) != 0;
        comm_metric_max(&moved, 1);
        state_free(&s0);
        ck_all_msg(moved, "%s: five steps left the fp32 master as it was, so comparing scales says nothing "
                   "(lc5.4 to lc5.2 first)", scales[k]);
        p[k] = mem_alloc(MEM_DATA, t.model.shard_numel * 4);
        copy(p[k], t.model.master, t.model.shard_numel);
        CK_ALL(t.scaler.scale == (k ? 1024.0f : 1.0f) && t.scaler.skipped == 0, "scale %g", t.scaler.scale);
        if (k == 1) CK_ALL(memcmp(p[0], p[1], t.model.shard_numel * 4) == 0 && d[0] == d[1],
                           "static scale 1024 changed the model");
        trainer_teardown(&t);
    }
    mem_free(p[0]);
    mem_free(p[1]);
}
END_TEST

// The loss scale's rule applied here to one outcome: what scaler_update must do.
static void rule(Scaler *want, int overflow) {
    if (overflow) {
        want->skipped++;
        want->clean = 0;
        if (want->dynamic) want->scale = fmaxf(want->scale / 2, MIN_SCALE);
    } else if (want->dynamic && ++want->clean == want->window) {
        if (want->scale * 2 <= MAX_SCALE) want->scale *= 2;
        want->clean = 0;
    }
}

// What the rule did in one step, in words: "an overflow at 1, the floor".
static void rule_in_words(char *out, size_t len, const Scaler *before, const Scaler *after, int overflow) {
    if (overflow)
        snprintf(out, len, "an overflow at the scale %g%s", before->scale, !before->dynamic ? ", a static scale" :
                 after->scale == before->scale ? ", the floor" : "");
    else if (after->scale != before->scale) snprintf(out, len, "a clean step that ends a window: the scale doubles");
    else if (before->dynamic && after->clean == 0 && before->clean + 1 == before->window)
        snprintf(out, len, "a clean step that ends a window at the ceiling, MAX_SCALE = %g", MAX_SCALE);
    else snprintf(out, len, "a clean step");
}

// scaler_update against the rule over a sequence of outcomes (1: overflow),
// from the scaler that options opts set up; says at which outcome it first
// departs, what that outcome was, and what it should have left.
static void grade_scaler_sequence(const char *opts, const int *overflow, int n) {
    char text[256], *argv[16] = { "t" };
    int argc = 1;
    snprintf(text, sizeof text, "%s", opts);
    for (char *tok = strtok(text, " "); tok && argc < 16; tok = strtok(NULL, " ")) argv[argc++] = tok;
    Args a = args_of(opts, argc, argv);
    Scaler got, want;
    scaler_init(&got, &a);
    scaler_init(&want, &a);
    for (int k = 0; k < n; k++) {
        Scaler before = want;
        scaler_update(&got, overflow[k]);
        rule(&want, overflow[k]);
        if (got.scale == want.scale && got.clean == want.clean && got.skipped == want.skipped) continue;
        char did[128];
        rule_in_words(did, sizeof did, &before, &want, overflow[k]);
        ck_abort_msg("scaler_update (%s) after outcome %d of %d (%s): the scale is %g, clean steps %d, skipped %ld; "
                     "the rule gives %g, %d, %ld%s", opts, k + 1, n, did, got.scale, got.clean, got.skipped,
                     want.scale, want.clean, want.skipped,
                     got.scale < MIN_SCALE ? ": a halving never goes below MIN_SCALE = 1" :
                     !want.dynamic && got.scale != want.scale ? ": a static scale never moves" :
                     got.scale > MAX_SCALE ? ": a doubling past MAX_SCALE is not taken" :
                     got.skipped != want.skipped ? ": every overflow counts one skipped step" :
                     got.clean != want.clean ? ": an overflow breaks the run of clean steps; a doubling starts a new one" :
                     "");
    }
}

START_TEST(test_dynamic_scale_rule) {
    // Outcomes given, the rule's every branch: doublings, halvings down to the
    // floor and staying there, a window that ends at the ceiling, a static
    // scale that overflows and never moves.
    const int down[] = { 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1 };
    grade_scaler_sequence("--loss-scale dynamic --initial-scale 4 --scale-window 2", down, 14);
    const int up[] = { 0, 0, 0, 1, 0, 0, 0 };
    grade_scaler_sequence("--loss-scale dynamic --initial-scale 8388608 --scale-window 1", up, 7);
    // A scale that is not a power of two (--initial-scale takes any number up
    // to 2^24): from 10^7 a doubling would pass the ceiling, so it stays (a
    // test that only looks at how far the scale is from the ceiling, not at
    // the doubled scale, takes it to 2 x 10^7).
    grade_scaler_sequence("--loss-scale dynamic --initial-scale 10000000 --scale-window 1", up, 7);
    const int fixed[] = { 1, 0, 1, 1, 0, 0, 1 };
    grade_scaler_sequence("--loss-scale 1024 --scale-window 2", fixed, 7);
    // Then in training: fp16 with a window of 3, the scale doubles after every 3
    // clean steps until gradients times the scale overflow, then halves and the
    // step is skipped. Each step's outcome is checked against the rule.
    char *argv[] = { "t", "--context", "3", "--hidden", "37", "--layers", "2", "--batch", "252",
                     "--dtype", "fp16", "--scale-window", "3", "--sample", "0", "--log-every", "0" };
    Trainer t;
    setup_from(&t, "dynamic", 17, argv);
    Scaler want = t.scaler;
    int doubled = 0, halved = 0;
    long first = -1;
    char did[128] = "";
    float got = 0, wanted = 0;
    for (long s = 0; s < 60; s++) {
        long skipped = t.scaler.skipped;
        train_step(&t, s);
        int overflow = t.scaler.skipped > skipped;
        Scaler before = want;
        rule(&want, overflow);
        doubled += want.scale > before.scale;
        halved += overflow;
        if (first < 0 && t.scaler.scale != want.scale) {
            first = s, got = t.scaler.scale, wanted = want.scale;
            rule_in_words(did, sizeof did, &before, &want, overflow);
        }
    }
    ck_all_msg(first < 0 && doubled > 0 && halved > 0, "fp16 steps with --scale-window 3 from 65536: at step %ld (%s) "
               "the scale became %g; the rule (halve on an overflow, never below 1; double after 3 clean steps in a "
               "row) gives %g (%d doublings, %d overflows in 60 steps)", first + 1, did, got, wanted, doubled, halved);
    CK_ALL(t.opt.step == 60 - t.scaler.skipped, "%ld Adam steps for %ld skipped of 60", t.opt.step,
           t.scaler.skipped);
    trainer_teardown(&t);
}
END_TEST

START_TEST(test_scale_bounded) {
    // bf16 never overflows here: from 2^22 with a window of 1 the scale doubles
    // twice, to MAX_SCALE = 2^24, and stays there (never inf however long the run).
    char *argv[] = { "t", "--context", "3", "--hidden", "16", "--layers", "1", "--batch", "24", "--dtype", "bf16",
                     "--loss-scale", "dynamic", "--initial-scale", "4194304", "--scale-window", "1", "--sample", "0",
                     "--log-every", "0" };
    Trainer t;
    setup_from(&t, "bounded", 21, argv);
    float want[] = { 8388608.0f, MAX_SCALE, MAX_SCALE, MAX_SCALE }, got[4];
    for (long s = 0; s < 4; s++) {
        train_step(&t, s);
        got[s] = t.scaler.scale;
    }
    ck_all_msg(memcmp(got, want, sizeof got) == 0 && t.scaler.skipped == 0, "from 2^22 with --scale-window 1 the "
               "scale went %g, %g, %g, %g; want 2^23 then MAX_SCALE = 2^24 (a doubling past it is not taken)",
               got[0], got[1], got[2], got[3]);
    trainer_teardown(&t);
}
END_TEST

// The floor: a scale that cannot fall further (dynamic at MIN_SCALE, or static)
// stops the run after MAX_SKIPS_AT_FLOOR overflows in a row there; a clean step
// or a step at a higher scale starts the count again.
START_TEST(test_scale_floor_stops) {
    Scaler s;
    Args a;
    char err[256];
    char *argv[] = { "t", "--loss-scale", "dynamic", "--initial-scale", "1024" };
    ck_assert_int_eq(args_parse(&a, 5, argv, OPTIONS, 1, err, sizeof err), ARGS_OK);
    scaler_init(&s, &a);
    ck_assert(s.scale == 1024.0f);
    int stopped_at = -1;
    const char *why = NULL;
    // 10 overflows from 1024 down to 2 do not count; then 3 at 1, a clean step,
    // and overflows at 1 until the stop, at the 10th.
    int overflow[32];
    for (int k = 0; k < 32; k++) overflow[k] = k != 13;
    for (int k = 0; k < (int)(sizeof overflow / sizeof *overflow) && stopped_at < 0; k++) {
        scaler_update(&s, overflow[k]);
        if ((why = s.stop)) stopped_at = k;
    }
    ck_assert_int_eq(stopped_at, 13 + MAX_SKIPS_AT_FLOOR);
    ck_assert_msg(why && strstr(why, "overflowed with the loss scale at its lowest, 1") != NULL, "%s", why);
    char *st[] = { "t", "--loss-scale", "1e9" };
    ck_assert_int_eq(args_parse(&a, 3, st, OPTIONS, 1, err, sizeof err), ARGS_OK);
    scaler_init(&s, &a);
    for (int k = 0; k < MAX_SKIPS_AT_FLOOR - 1; k++) {
        scaler_update(&s, 1);
        ck_assert_ptr_null(s.stop);
    }
    scaler_update(&s, 1);
    why = s.stop;
    ck_assert_msg(why && strstr(why, "10 steps in a row overflowed at the static loss scale 1e+09") == why, "%s",
                  why);
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
    g[n++] = (Graded){ "lc5.1a", 10, "1 2 3 4", "the dynamic scale: halved on overflow, doubled after a window", test_dynamic_scale_rule };
    g[n++] = (Graded){ "lc5.1b", 5, "1 2 3 4", "the dynamic scale never passes MAX_SCALE", test_scale_bounded };
    g[n++] = (Graded){ "lc5.2a", 10, "2 3 4", "an overflow on one rank: every rank skips, nothing moves", test_overflow_on_one_rank_skips_everywhere };
    g[n++] = (Graded){ "lc5.2b", 5, "1 2 3 4", "a step that doubles the scale unscales by the scale it ran with", test_doubling_step_unscales_by_its_scale };
    g[n++] = (Graded){ "lc5.3a", 10, "1 2 3 4", "unscaled_grads: the slice in fp32, divided by the scale", test_unscaled_grads };
    g[n++] = (Graded){ "lc5.3b", 5, "1 2 3 4", "a static scale of 1024 gives the very model of none", test_static_scale_divides };
    g[n++] = (Graded){ "lc5.4a", 10, "1 2 3 4", "adam_step: Adam on the fp32 master, the bf16 params rounded from it", test_adam_on_master };
    g[n++] = (Graded){ "lc5.4b", 5, "1 2 3 4", "--save-model writes the fp32 master", test_saved_model_is_master };
    g[n++] = (Graded){ "lc5.5a", 5, "1 2 3 4", "the formulas: (2 + 2 + 12)Ψ_pad/N, and the traffic", test_formulas };
    g[n++] = (Graded){ "lc5.5b", 5, "1 2 3 4", "memory and bytes exact in every type", test_model_state_and_comm_exact };
    g[n++] = (Graded){ "lc5.0a", 10, "1 2 3 4", "the whole stage in fp32: lc0's losses and model", test_fp32_follows_lc0 };
    g[n++] = (Graded){ "lc5.0b", 5, "1 2 3 4", "in bf16: near lc0", test_bf16_near_lc0 };
    g[n++] = (Graded){ "lc5.0c", 5, "1 2 3 4", "in fp16 with dynamic scaling: near lc0", test_fp16_near_lc0 };
    g[n++] = (Graded){ "lc5.0d", 10, "1 2 3 4", "the whole state, step by step, through every branch of the scaler", test_scaler_whole_state };
    g[n++] = (Graded){ "bf16-converges-with-fp32", 0, "", "bf16-converges-with-fp32", test_bf16_converges_with_fp32 };
    g[n++] = (Graded){ "activations-in-dt", 0, "", "activations-in-dt", test_activations_in_dt };
    g[n++] = (Graded){ "fp16-underflow-needs-scaling", 0, "", "fp16-underflow-needs-scaling", test_fp16_underflow_needs_scaling };
    g[n++] = (Graded){ "follows-lc0-hand-written-collectives", 0, "", "follows-lc0-hand-written-collectives", test_follows_lc0_hand_written_collectives };
    g[n++] = (Graded){ "bf16-hand-written-collectives", 0, "", "bf16-hand-written-collectives", test_bf16_hand_written_collectives };
    g[n++] = (Graded){ "scale-floor-stops", 0, "", "scale-floor-stops", test_scale_floor_stops };
    g[n++] = (Graded){ "no-leaks", 0, "", "no-leaks", test_no_leaks };
    return n;
}

static void load_refs(void) { nruns = ref_load(runs); }

GRADED_MAIN("test_lc5", checks, load_refs)
