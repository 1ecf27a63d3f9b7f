// test_lc0: grades lc0_adam through its own functions (the stage is included
// with LECTURE_TEST, so its main is left out), and the AdamW update of
// common/kernels_cpu.c. The graded checks (make grade) are exercises lc0.1 to
// lc0.4 and the whole stage against the reference lc0 (lc0.0); the rest are
// project tests that make test runs too.
#include "check_mpi.h"

#include <unistd.h>

#include "../lc0_adam/adam.c"
#include "gpu_standin.h"
#include "grading.h"
#include "ref_model.h"

static RefRun runs[REF_MAX];
static int nruns;

static void full_params(Trainer *t, float *dst) { copy(dst, t->model.params, t->model.numel); }

// A small model, so the tests run in seconds on a laptop; up to two more options.
static Args small_args(const char *extra1, const char *extra2) {
    char *argv[20] = { "test", "--context", "2", "--hidden", "6", "--layers", "2", "--batch", "5",
                       "--steps", "3", "--sample", "0", "--log-every", "0" };
    int argc = 15;
    if (extra1) argv[argc++] = (char *)extra1;
    if (extra2) argv[argc++] = (char *)extra2;
    return args_of("small run", argc, argv);
}

START_TEST(test_gradient_matches_double_reference) {
    Args a = small_args(NULL, NULL);
    Trainer t;
    trainer_setup(&t, &a);
    Model *m = &t.model;
    Acts *x = &t.acts;
    data_batch(&t.data, 0, a.batch, 0, x->rows, x->ctx, x->targets);
    zero_grad(m);
    double loss = forward_backward(&t, a.batch) / a.batch;
    double *p = mem_alloc(MEM_DATA, m->numel * sizeof(double));
    double *g = mem_alloc(MEM_DATA, m->numel * sizeof(double));
    for (size_t i = 0; i < m->numel; i++) p[i] = m->params[i];
    double ref = ref_loss_grad(m, p, x->ctx, x->targets, x->rows, a.batch, g);
    ck_assert_double_le(fabs(loss - ref), 1e-6 * ref);
    double num = 0, den = 0;
    for (size_t i = 0; i < m->numel; i++) {
        num += (m->grads[i] - g[i]) * (m->grads[i] - g[i]);
        den += g[i] * g[i];
    }
    ck_assert_msg(sqrt(num / den) < 1e-5, "gradient rel error %g", sqrt(num / den));
    // And the reference itself against central differences (double, h = 1e-6).
    for (size_t i = 0; i < m->numel; i += 7) {
        double keep = p[i], h = 1e-6;
        p[i] = keep + h;
        double up = ref_loss_grad(m, p, x->ctx, x->targets, x->rows, a.batch, NULL);
        p[i] = keep - h;
        double dn = ref_loss_grad(m, p, x->ctx, x->targets, x->rows, a.batch, NULL);
        p[i] = keep;
        ck_assert_msg(fabs((up - dn) / (2 * h) - g[i]) < 1e-7, "finite difference at %zu", i);
    }
    mem_free(p);
    mem_free(g);
    trainer_teardown(&t);
}
END_TEST

// ----------------------------------------------------------------------------
// lc0.1: the AdamW update (adam_update, common/kernels_cpu.c)

// The Adam updates a learner writes, PyTorch's AdamW first (ADAM_RIGHT); each
// of the others is a usual slip, named in adam_slips. adam_update's result is
// held to each in turn, and the verdict names the one it equals.
typedef enum {
    ADAM_RIGHT, ADAM_NO_CORRECTION, ADAM_COUPLED, ADAM_EPS_IN_SQRT, ADAM_EPS_BEFORE_CORRECTION, ADAM_NO_EPS,
    ADAM_NO_SQRT, ADAM_DECAY_AFTER, ADAM_DECAY_WITHOUT_LR, ADAM_NO_DECAY, ADAM_STEP_PLUS_ONE, ADAM_STEP_MINUS_ONE,
    ADAM_BETAS_SWAPPED, ADAM_MOMENT_WEIGHTS_SWAPPED, ADAM_ABS_G, ADAM_G_FOR_M, ADAM_ASCENT, ADAM_M_CORRECTED_ONLY,
    ADAM_V_CORRECTED_ONLY, ADAM_NO_LR, ADAM_V_CORRECTION_NOT_ROOTED, ADAM_STORES_CORRECTED, ADAM_OLD_MOMENTS,
    ADAM_NO_EXPONENT, ADAM_DECAY_WITH_STEP_SIZE, ADAM_NVARIANTS
} AdamVariant;

static const char *adam_slips[ADAM_NVARIANTS] = {
    [ADAM_NO_CORRECTION] = "this is Adam without bias correction: divide m by 1 - beta1^step and v by 1 - beta2^step",
    [ADAM_COUPLED] = "the weight decay went into the gradient (L2, coupled); AdamW shrinks p by 1 - lr wd outside m and v",
    [ADAM_EPS_IN_SQRT] = "your update equals AdamW with eps inside the square root, sqrt(v_hat + eps); PyTorch adds it "
                         "after: sqrt(v_hat) + eps",
    [ADAM_EPS_BEFORE_CORRECTION] = "your update equals AdamW with eps added before v's correction, (sqrt(v) + eps) / "
                                   "sqrt(1 - beta2^step); PyTorch adds it after: sqrt(v) / sqrt(1 - beta2^step) + eps",
    [ADAM_NO_EPS] = "your update equals AdamW without eps: the denominator is sqrt(v_hat) + eps (a zero gradient "
                    "would give 0 / 0)",
    [ADAM_NO_SQRT] = "your update equals AdamW without the square root of v: the denominator is sqrt(v_hat) + eps",
    [ADAM_DECAY_AFTER] = "your update equals AdamW with the weight decay applied after the Adam step; PyTorch decays "
                         "p first (p *= 1 - lr wd), then subtracts the step",
    [ADAM_DECAY_WITHOUT_LR] = "your update equals AdamW with p *= 1 - wd: the decay is lr wd, not wd",
    [ADAM_NO_DECAY] = "your update equals Adam without weight decay: AdamW multiplies p by 1 - lr wd",
    [ADAM_STEP_PLUS_ONE] = "your update equals AdamW with the bias corrections of step + 1: the step count is one off "
                           "(step is the step being taken, 1 for the first)",
    [ADAM_STEP_MINUS_ONE] = "your update equals AdamW with the bias corrections of step - 1: the step count is one off "
                            "(step is the step being taken, 1 for the first, where 1 - beta^0 = 0 divides by zero)",
    [ADAM_BETAS_SWAPPED] = "your update equals AdamW with beta1 and beta2 swapped: m averages with beta1, v with beta2",
    [ADAM_MOMENT_WEIGHTS_SWAPPED] = "your update equals AdamW with each moment's weights swapped: m = beta1 m + (1 - "
                                    "beta1) g, not (1 - beta1) m + beta1 g (and v the same with beta2)",
    [ADAM_ABS_G] = "your update equals AdamW with |g| where v takes g^2",
    [ADAM_G_FOR_M] = "your update equals AdamW stepping with g where it steps with m (the moment, bias-corrected)",
    [ADAM_ASCENT] = "your update equals AdamW's step added, not subtracted: p moves up its gradient",
    [ADAM_M_CORRECTED_ONLY] = "your update equals AdamW with m's bias correction alone: v's (1 - beta2^step, under "
                              "the square root) is missing",
    [ADAM_V_CORRECTED_ONLY] = "your update equals AdamW with v's bias correction alone: m's (1 - beta1^step) is missing",
    [ADAM_NO_LR] = "your update equals AdamW without lr: the step is lr m_hat / (sqrt(v_hat) + eps)",
    [ADAM_V_CORRECTION_NOT_ROOTED] = "your update equals AdamW with sqrt(v) divided by 1 - beta2^step: v's correction "
                                     "goes under the root, sqrt(v / (1 - beta2^step)) = sqrt(v) / sqrt(1 - beta2^step)",
    [ADAM_STORES_CORRECTED] = "p is right, and m and v hold their bias-corrected values m_hat and v_hat: store the "
                              "moments themselves (the correction is for this step's update only)",
    [ADAM_OLD_MOMENTS] = "your update equals AdamW stepping with m and v from before this step's update: update the "
                         "moments with this step's gradient first, then step with them",
    [ADAM_NO_EXPONENT] = "your update equals AdamW with the bias corrections 1 - beta (no power): 1 - beta1^step and "
                         "1 - beta2^step",
    [ADAM_DECAY_WITH_STEP_SIZE] = "your update equals AdamW with the decay 1 - lr wd / (1 - beta1^step): the decay "
                                  "takes lr alone, not the bias-corrected step size",
};

// Adam in double from one state, as variant `var` computes it.
static void adam_double(double *p, double *m, double *v, double g, const AdamHyper *h, long step, AdamVariant var) {
    double lr = h->lr, wd = h->weight_decay, b1 = h->beta1, b2 = h->beta2, eps = h->eps;
    double t = (double)step + (var == ADAM_STEP_PLUS_ONE ? 1 : var == ADAM_STEP_MINUS_ONE ? -1 : 0);
    double m_old = *m, v_old = *v;
    if (var == ADAM_BETAS_SWAPPED) b1 = h->beta2, b2 = h->beta1;
    if (var == ADAM_COUPLED) g += wd * *p;
    double decay = var == ADAM_COUPLED || var == ADAM_NO_DECAY ? 1 : var == ADAM_DECAY_WITHOUT_LR ? 1 - wd
                 : var == ADAM_DECAY_WITH_STEP_SIZE ? 1 - lr / (1.0 - pow(b1, t)) * wd : 1 - lr * wd;
    if (var != ADAM_DECAY_AFTER) *p *= decay;
    double gg = var == ADAM_ABS_G ? fabs(g) : g * g;
    if (var == ADAM_MOMENT_WEIGHTS_SWAPPED) {
        *m = (1.0 - b1) * *m + b1 * g;
        *v = (1.0 - b2) * *v + b2 * gg;
    } else {
        *m = b1 * *m + (1.0 - b1) * g;
        *v = b2 * *v + (1.0 - b2) * gg;
    }
    int c1 = var != ADAM_NO_CORRECTION && var != ADAM_V_CORRECTED_ONLY;
    int c2 = var != ADAM_NO_CORRECTION && var != ADAM_M_CORRECTED_ONLY;
    double bc1 = c1 ? 1.0 - (var == ADAM_NO_EXPONENT ? b1 : pow(b1, t)) : 1.0;
    double bc2 = c2 ? 1.0 - (var == ADAM_NO_EXPONENT ? b2 : pow(b2, t)) : 1.0;
    double mh = (var == ADAM_G_FOR_M ? g : var == ADAM_OLD_MOMENTS ? m_old : *m) / bc1;
    double vh = (var == ADAM_OLD_MOMENTS ? v_old : *v) / bc2;
    double denom = var == ADAM_EPS_IN_SQRT ? sqrt(vh + eps)
                 : var == ADAM_V_CORRECTION_NOT_ROOTED ? sqrt(*v) / bc2 + eps
                 : var == ADAM_EPS_BEFORE_CORRECTION ? (sqrt(*v) + eps) / sqrt(bc2)
                 : var == ADAM_NO_EPS ? sqrt(vh)
                 : var == ADAM_NO_SQRT ? vh + eps : sqrt(vh) + eps;
    double stepped = (var == ADAM_NO_LR ? 1.0 : lr) * mh / denom;
    *p += var == ADAM_ASCENT ? stepped : -stepped;
    if (var == ADAM_DECAY_AFTER) *p *= decay;
    if (var == ADAM_STORES_CORRECTED) *m /= bc1, *v /= bc2;
}

// 1 if adam_update's result (p, m, v) is within a few float ulps of variant
// var in double from state (p0, m0, v0); else the first element off in *worst.
static int adam_matches(const float *p, const float *m, const float *v, const float *p0, const float *m0,
                        const float *v0, const float *g, size_t n, const AdamHyper *h, long step, AdamVariant var,
                        size_t *worst) {
    for (size_t i = 0; i < n; i++) {
        double rp = p0[i], rm = m0[i], rv = v0[i];
        adam_double(&rp, &rm, &rv, g[i], h, step, var);
        // Bounds scale with the terms combined (a few float32 ulps of each); a
        // slip's terms can be larger (its step, its moments), and count too.
        double ge = fabs(g[i]) + (var == ADAM_COUPLED ? h->weight_decay * fabs(p0[i]) : 0.0);  // the gradient Adam saw
        double m_terms = h->beta1 * fabs(m0[i]) + (1.0 - h->beta1) * ge + 1e-30;
        double v_terms = h->beta2 * v0[i] + (1.0 - h->beta2) * ge * ge + 1e-30;
        double p_terms = fabs(p0[i]) + 10.0 * h->lr;
        if (var != ADAM_RIGHT && var != ADAM_COUPLED) {
            m_terms += fabs(rm);
            v_terms += fabs(rv);
            p_terms += fabs(rp - p0[i]);
        }
        // (A slip can give inf or NaN, 1 - beta^0 = 0 for one: the same is a match.)
        int p_same = p[i] == rp || (isnan(p[i]) && isnan(rp)) || fabs(p[i] - rp) <= 1e-6 * p_terms;
        if (!(fabs(m[i] - rm) <= 1e-6 * m_terms && fabs(v[i] - rv) <= 1e-6 * v_terms && p_same)) {
            *worst = i;
            return 0;
        }
    }
    return 1;
}

// Runs adam_update on random state and says what is wrong with the result, if anything.
static void grade_adam_step(long step, float weight_decay) {
    enum { N = 1001 };  // not a multiple of any vector width
    AdamHyper h = { 3e-3f, 0.9f, 0.999f, 1e-8f, weight_decay };
    // One element more than n in each buffer, which adam_update must leave alone.
    static float p[N + 1], m[N + 1], v[N + 1], g[N + 1], p0[N + 1], m0[N + 1], v0[N + 1];
    Rng r = rng_stream(99, (uint64_t)step);
    for (size_t i = 0; i <= N; i++) {
        p[i] = 2 * rng_uniform(&r) - 1;
        g[i] = (2 * rng_uniform(&r) - 1) * (i % 3 ? 1.0f : 1e-3f);
        m[i] = step == 1 ? 0.0f : 0.1f * (2 * rng_uniform(&r) - 1);
        v[i] = step == 1 ? 0.0f : 0.01f * rng_uniform(&r);
    }
    memcpy(p0, p, sizeof p); memcpy(m0, m, sizeof m); memcpy(v0, v, sizeof v);
    adam_update(p, g, m, v, N, &h, step);
    ck_assert_msg(p[N] == p0[N] && m[N] == m0[N] && v[N] == v0[N], "adam_update on n = %d parameters changed element "
                  "%d of p, m or v, past the last: the loop runs one element too far", N, N);
    size_t at = 0, unused;
    if (adam_matches(p, m, v, p0, m0, v0, g, N, &h, step, ADAM_RIGHT, &at)) return;
    double rp = p0[at], rm = m0[at], rv = v0[at];
    adam_double(&rp, &rm, &rv, g[at], &h, step, ADAM_RIGHT);
    const char *why = NULL;
    if (!memcmp(p, p0, sizeof p) && !memcmp(m, m0, sizeof m)) why = "p did not move at all: nothing was updated";
    else if (!memcmp(m, m0, sizeof m)) why = "Adam m is as it was: the new moment beta1 m + (1 - beta1) g was never stored";
    else if (!memcmp(v, v0, sizeof v)) why = "Adam v is as it was: the new moment beta2 v + (1 - beta2) g^2 was never stored";
    for (int k = 1; k < ADAM_NVARIANTS && !why; k++)
        if (adam_matches(p, m, v, p0, m0, v0, g, N, &h, step, (AdamVariant)k, &unused)) why = adam_slips[k];
    // None of the slips: the first quantity that is off, of m, v and p.
    char first[200];
    if (!why) {
        double tm = h.beta1 * m0[at] + (1.0 - h.beta1) * g[at], tv = h.beta2 * v0[at] + (1.0 - h.beta2) * g[at] * g[at];
        int m_off = !(fabs(m[at] - tm) <= 1e-6 * (fabs(tm) + 1e-30)), v_off = !(fabs(v[at] - tv) <= 1e-6 * (tv + 1e-30));
        snprintf(first, sizeof first, "%s; compare your arithmetic with the formula in kernels.h",
                 m_off ? "m is off already (m = beta1 m + (1 - beta1) g)" :
                 v_off ? "m is right and v is off (v = beta2 v + (1 - beta2) g^2)" :
                         "m and v are right and p is off: the step or the decay");
        why = first;
    }
    ck_abort_msg("adam_update at step %ld (weight decay %g): p[%zu] = %.9g, m = %.9g, v = %.9g; "
                 "AdamW gives %.9g, %.9g, %.9g: %s", step, weight_decay, at, p[at], m[at], v[at], rp, rm, rv, why);
}

START_TEST(test_adam_step_formula) {
    grade_adam_step(1, 0.0f);
    grade_adam_step(1, 0.1f);
    grade_adam_step(7, 0.1f);
}
END_TEST

START_TEST(test_adam_first_step_is_lr) {
    // Bias correction makes the first step lr * sign(g) whatever the gradient's scale.
    AdamHyper h = { 1e-2f, 0.9f, 0.999f, 1e-12f, 0.0f };
    float p[3] = { 0, 0, 0 }, g[3] = { 1e-3f, -5.0f, 2.0f }, m[3] = { 0 }, v[3] = { 0 };
    adam_update(p, g, m, v, 3, &h, 1);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(fabsf(p[i] + copysignf(1e-2f, g[i])) <= 1e-7f,
                      "the first step moved p[%d] by %g for a gradient of %g; with bias correction every "
                      "parameter moves by lr = 0.01 against its gradient's sign, whatever its scale", i, p[i], g[i]);
}
END_TEST

START_TEST(test_adam_moments_move) {
    // Through the stage: after one step from zero, m = (1 - beta1) g and v = (1 - beta2) g^2.
    Args a = small_args("--weight-decay", "0.1");
    Trainer t;
    trainer_setup(&t, &a);
    Model *m = &t.model;
    size_t n = m->numel;
    float *g1 = mem_alloc(MEM_DATA, n * sizeof(float));
    train_step(&t, 0);
    ck_assert_msg(t.opt.step == 1, "after one train_step the Adam step count is %ld, want 1", t.opt.step);
    Trainer u;
    trainer_setup(&u, &a);
    data_batch(&u.data, 0, a.batch, 0, u.acts.rows, u.acts.ctx, u.acts.targets);
    zero_grad(&u.model);
    forward_backward(&u, a.batch);
    memcpy(g1, u.model.grads, n * sizeof(float));
    // What a moment holds when weight decay went into the gradient (Adam's L2
    // penalty, not AdamW's decoupled decay): (1 - beta) (g + wd p).
    for (size_t i = 0; i < n; i++) {
        float g = g1[i], wm = (1.0f - a.beta1) * g, wv = (1.0f - a.beta2) * g * g;
        float coupled = (1.0f - a.beta1) * (g + a.weight_decay * u.model.params[i]);
        const char *why = fabsf(t.opt.m[i] - coupled) <= 1e-6f * fabsf(coupled) && g != coupled / (1.0f - a.beta1) ?
                              ": that is (1 - beta1)(g + wd p): the weight decay went into the gradient; AdamW "
                              "decays the parameter itself, p *= 1 - lr wd, apart from m and v" :
                          t.opt.m[i] == 0.0f && g != 0.0f ? ": m never moved: the new value was not stored" : "";
        ck_assert_msg(fabsf(t.opt.m[i] - wm) <= 1e-7f * fabsf(g) + 1e-12f, "one train_step of a small run (context 2, "
                      "hidden 6, 2 layers, batch 5, weight decay 0.1) from zero moments leaves Adam's m[%zu] at %g; "
                      "(1 - beta1) g is %g (g = %g)%s. Look first at lc0.1 (adam_update)", i, t.opt.m[i], wm, g, why);
        ck_assert_msg(fabsf(t.opt.v[i] - wv) <= 1e-6f * g * g + 1e-20f, "one train_step of a small run (context 2, "
                      "hidden 6, 2 layers, batch 5, weight decay 0.1) from zero moments leaves Adam's v[%zu] at %g; "
                      "(1 - beta2) g^2 is %g (g = %g)%s. Look first at lc0.1 (adam_update)", i, t.opt.v[i], wv, g,
                      t.opt.v[i] == 0.0f && g != 0.0f ? ": v never moved: the new value was not stored" : "");
    }
    mem_free(g1);
    trainer_teardown(&u);
    trainer_teardown(&t);
}
END_TEST

// lc0.1d: the hand-off to the GPU kernel. A CPU build compiles ON_GPU(...) to
// nothing, so the other checks never see that line; this one runs a copy of
// the file compiled as a CUDA build's, with the device set to CUDA, against a
// stand-in that records what cuda_adam_update was handed (tests/gpu_standin.h).

// 1 if x is v to a few float roundings (the scalars are computed in float or
// double, from float hyperparameters: 1e-5 of each other at most).
static int near(double x, double v) { return fabs(x - v) <= 1e-4 * fabs(v); }

// One scalar cuda_adam_update takes, what it was handed, and the values a
// learner's usual slips give, each with its name.
typedef struct { double value; const char *why; } Slip;
typedef struct {
    const char *name, *formula;
    double want, got;
    Slip slip[8];
} Scalar;

// What is wrong with the scalars handed over ("" if nothing), into out.
static const char *handoff_scalars_why(const AdamHandoff *a, const AdamHyper *h, long t, char *out, size_t size) {
    double lr = h->lr, wd = h->weight_decay, b1 = h->beta1, b2 = h->beta2, eps = h->eps;
    double bc1 = 1 - pow(b1, (double)t), bc2 = 1 - pow(b2, (double)t);
    Scalar s[] = {
        { "decay", "1 - lr wd", 1 - lr * wd, a->decay,
          { { lr * wd, "lr wd: how much p shrinks, where the kernel takes the factor p is multiplied by" },
            { 1, "no weight decay at all" }, { 1 - wd, "1 - wd: the decay without lr" }, { wd, "the weight decay itself" } } },
        { "step_size", "lr / (1 - beta1^step)", lr / bc1, a->step_size,
          { { lr, "lr alone: m's bias correction is missing" },
            { lr * bc1, "lr (1 - beta1^step): multiplied by the correction where it divides" },
            { lr / (1 - pow(b1, t - 1.0)), "the correction of step - 1: the step count is one off" },
            { lr / (1 - pow(b1, t + 1.0)), "the correction of step + 1: the step count is one off" },
            { lr / bc2, "corrected with beta2, where m's correction takes beta1" },
            { 1 / bc1, "lr is missing" } } },
        { "bc2_sqrt", "sqrt(1 - beta2^step)", sqrt(bc2), a->bc2_sqrt,
          { { bc2, "1 - beta2^step without its square root" }, { 1, "no bias correction of v" },
            { sqrt(bc1), "beta1 in place of beta2" }, { 1 / sqrt(bc2), "the reciprocal: 1 / sqrt(1 - beta2^step)" },
            { sqrt(1 - pow(b2, t - 1.0)), "the correction of step - 1: the step count is one off" },
            { sqrt(1 - pow(b2, t + 1.0)), "the correction of step + 1: the step count is one off" } } },
        { "beta1", "beta1", b1, a->beta1, { { 1 - b1, "1 - beta1: the kernel forms 1 - beta1 itself" } } },
        { "beta2", "beta2", b2, a->beta2, { { 1 - b2, "1 - beta2: the kernel forms 1 - beta2 itself" } } },
        { "eps", "eps", eps, a->eps, { { eps * eps, "eps squared" }, { sqrt(eps), "the square root of eps" } } },
    };
    int ns = (int)(sizeof s / sizeof s[0]);
    for (int i = 0; i < ns; i++) {
        if (near(s[i].got, s[i].want)) continue;
        const char *why = NULL;
        for (int k = 0; k < 8 && s[i].slip[k].why && !why; k++)
            if (near(s[i].got, s[i].slip[k].value)) why = s[i].slip[k].why;
        // Another scalar's value in its place: the arguments' order.
        char order[200];
        for (int j = 0; j < ns && !why; j++)
            if (j != i && near(s[i].got, s[j].want) && !near(s[i].want, s[j].want)) {
                snprintf(order, sizeof order, "that is %s's value: the arguments are in another order (decay, step_size, "
                         "bc2_sqrt, beta1, beta2, eps, kernels_cuda.h)", s[j].name);
                why = order;
            }
        snprintf(out, size, "%s = %.9g; the kernel takes %s = %.9g%s%s", s[i].name, s[i].got, s[i].formula, s[i].want,
                 why ? ": " : "", why ? why : " (compare how you compute it with the CPU loop's)");
        return out;
    }
    return "";
}

// The name of the buffer p is (of p, g, m, v), or "another buffer".
static const char *buffer_name(const void *x, const float *p, const float *g, const float *m, const float *v) {
    return x == p ? "p" : x == g ? "g" : x == m ? "m" : x == v ? "v" : "another buffer";
}

START_TEST(test_adam_hands_off_to_gpu) {
    enum { N = 37 };
    AdamHyper h = { 3e-3f, 0.9f, 0.999f, 1e-8f, 0.1f };
    const long step = 3;
    float p[N], g[N], m[N], v[N], p0[N], m0[N], v0[N];
    Rng r = rng_stream(98, 0);
    for (int i = 0; i < N; i++) {
        p[i] = 2 * rng_uniform(&r) - 1, g[i] = 2 * rng_uniform(&r) - 1;
        m[i] = 0.1f * (2 * rng_uniform(&r) - 1), v[i] = 0.01f * rng_uniform(&r);
    }
    memcpy(p0, p, sizeof p); memcpy(m0, m, sizeof m); memcpy(v0, v, sizeof v);
    standin_reset();
    rt.device = DEV_CUDA;  // back before any verdict: a failed check ends here
    gpu_handoff_adam_update(p, g, m, v, N, &h, step);
    rt.device = DEV_CPU;
    AdamHandoff a = standin_adam;
    const char *run = "on a GPU run (--device cuda, here with a stand-in for the GPU that records what it is handed), "
                      "adam_update";
    if (a.calls == 0)
        ck_abort_msg("%s never handed the step to the GPU kernel%s%s: ON_GPU(cuda_adam_update(p, g, m, v, n, decay, "
                     "step_size, bc2_sqrt, beta1, beta2, eps)) belongs after the scalars and before the CPU loop (a CPU "
                     "build compiles that line to nothing: only this check sees it)",
                     run, a.other ? "; it called " : "", a.other ? a.other : "");
    ck_assert_msg(a.calls == 1, "%s handed the step to cuda_adam_update %d times; once, with all n = %d parameters",
                  run, a.calls, N);
    ck_assert_msg(!a.other, "%s called %s too: the step is cuda_adam_update's alone", run, a.other);
    if (a.p != p || a.g != g || a.m != m || a.v != v)
        ck_abort_msg("%s handed cuda_adam_update (%s, %s, %s, %s) where it takes (p, g, m, v)", run,
                     buffer_name(a.p, p, g, m, v), buffer_name(a.g, p, g, m, v), buffer_name(a.m, p, g, m, v),
                     buffer_name(a.v, p, g, m, v));
    ck_assert_msg(a.n == N, "%s handed n = %zu for %d parameters", run, a.n, N);
    char why[600];
    const char *bad = handoff_scalars_why(&a, &h, step, why, sizeof why);
    ck_assert_msg(!*bad, "%s at step %ld (lr %g, beta1 %g, beta2 %g, eps %g, weight decay %g) handed cuda_adam_update %s",
                  run, step, h.lr, h.beta1, h.beta2, h.eps, h.weight_decay, bad);
    ck_assert_msg(!memcmp(p, p0, sizeof p) && !memcmp(m, m0, sizeof m) && !memcmp(v, v0, sizeof v),
                  "%s handed the step to the GPU kernel and then ran the CPU loop too: on a GPU p, g, m and v are the "
                  "device's memory, which the CPU cannot touch. ON_GPU(...) returns from adam_update; it belongs "
                  "before the loop", run);
}
END_TEST

// ----------------------------------------------------------------------------
// lc0.2: zero_grad

START_TEST(test_zero_grad_zeroes) {
    Args a = small_args(NULL, NULL);
    Trainer t;
    trainer_setup(&t, &a);
    Model *m = &t.model;
    fill(m->grads, 3.0f, m->numel);
    zero_grad(m);
    size_t left = 0, first = 0;
    for (size_t i = m->numel; i-- > 0;)
        if (m->grads[i] != 0.0f) left++, first = i;
    ck_assert_msg(left == 0, "after zero_grad %zu of %zu gradients are not zero (grads[%zu] = %g): backward adds "
                  "into them, so the next step would carry this one's gradient", left, m->numel, first,
                  m->grads[first]);
    trainer_teardown(&t);
}
END_TEST

START_TEST(test_each_step_has_its_own_gradient) {
    Args a = small_args(NULL, NULL);
    Trainer t;
    trainer_setup(&t, &a);
    Model *m = &t.model;
    Acts *x = &t.acts;
    // Backward accumulates: two passes without zero_grad give twice the gradient.
    data_batch(&t.data, 0, a.batch, 0, x->rows, x->ctx, x->targets);
    zero_grad(m);
    forward_backward(&t, a.batch);
    float *once = mem_alloc(MEM_DATA, m->numel * sizeof(float));
    memcpy(once, m->grads, m->numel * sizeof(float));
    forward_backward(&t, a.batch);
    for (size_t i = 0; i < m->numel; i++) ck_assert(fabsf(m->grads[i] - 2 * once[i]) <= 1e-6f * fabsf(once[i]));
    // train_step zeroes first: its gradient is the step's own.
    train_step(&t, 0);
    for (size_t i = 0; i < m->numel; i++)
        ck_assert_msg(m->grads[i] == once[i], "after train_step grads[%zu] is %g, the step's own gradient is %g: "
                      "the gradients were not zeroed before backward", i, m->grads[i], once[i]);
    mem_free(once);
    trainer_teardown(&t);
}
END_TEST

// ----------------------------------------------------------------------------
// lc0.3: global-norm clipping

START_TEST(test_clip_grads) {
    Args a = small_args("--hidden", "40");
    Trainer t;
    trainer_setup(&t, &a);
    Model *m = &t.model;
    Rng r = rng_stream(5, 5);
    for (size_t i = 0; i < m->numel; i++) m->grads[i] = (2 * rng_uniform(&r) - 1) * (i % 7 ? 0.01f : 1.0f);
    double sq = 0;
    for (size_t i = 0; i < m->numel; i++) sq += (double)m->grads[i] * m->grads[i];
    double want = sqrt(sq);
    float *before = mem_alloc(MEM_DATA, m->numel * sizeof(float));
    memcpy(before, m->grads, m->numel * sizeof(float));
    for (int k = 0; k < 2; k++) {  // once above the norm (clips), once far below (leaves alone)
        float max_norm = k == 0 ? (float)(want / 4) : (float)(want * 4);
        memcpy(m->grads, before, m->numel * sizeof(float));
        double norm = clip_grads(m, max_norm);
        ck_assert_msg(fabs(norm - want) <= 1e-6 * want, "clip_grads returned %.9g; the L2 norm of all %zu gradients "
                      "together is %.9g", norm, m->numel, want);
        double f = k == 0 ? max_norm / (want + 1e-6) : 1.0, after = 0;
        for (size_t i = 0; i < m->numel; i++) {
            ck_assert_msg(fabs(m->grads[i] - f * before[i]) <= 1e-6 * fabs(before[i]) + 1e-12,
                          "with max_norm %g (the norm is %g) grads[%zu] became %g, want %g: every gradient is "
                          "multiplied by min(1, max_norm / (norm + 1e-6))", max_norm, want, i, m->grads[i],
                          f * before[i]);
            after += (double)m->grads[i] * m->grads[i];
        }
        ck_assert(sqrt(after) <= fmax(max_norm, want) * (1 + 1e-6));
    }
    mem_free(before);
    trainer_teardown(&t);
}
END_TEST

// ----------------------------------------------------------------------------
// training on the default data

START_TEST(test_loss_falls) {
    char *argv[] = { "t", "--hidden", "64", "--steps", "300", "--sample", "0", "--log-every", "0" };
    Args a = args_of("run", 9, argv);
    Trainer t;
    trainer_setup(&t, &a);
    double first = train_step(&t, 0);
    ck_assert_msg(fabs(first - log(27.0)) < 0.1, "initial loss %g is not near ln 27", first);
    double last = 0;
    for (long s = 1; s < a.steps; s++) last += s >= a.steps - 20 ? train_step(&t, s) / 20 : (train_step(&t, s), 0);
    ck_assert_msg(last < 2.6, "loss fell only from %.3f to %.3f in %ld steps", first, last, a.steps);
    trainer_teardown(&t);
}
END_TEST

// ----------------------------------------------------------------------------
// memory and communication

START_TEST(test_model_state_is_16_psi) {
    char *argv[] = { "t", "--context", "4", "--hidden", "37", "--layers", "3", "--batch", "10" };
    Args a = args_of("run", 9, argv);
    size_t H = 37, I = 4 * 27;
    size_t psi = (I * H + H) + 2 * (H * H + H) + (H * 27 + 27);  // Ψ by hand
    MemStats before = mem_stats();
    Trainer t;
    trainer_setup(&t, &a);
    ck_assert_uint_eq(t.model.numel, psi);
    for (long k = 0; k < 3; k++) train_step(&t, k);
    MemStats s = mem_stats();
    size_t cat[MEM_NCAT];
    for (int c = 0; c < MEM_NCAT; c++) cat[c] = s.cur[c] - before.cur[c];
    ck_assert_msg(cat[MEM_PARAMS] == 4 * psi && cat[MEM_GRADS] == 4 * psi && cat[MEM_ADAM_M] == 4 * psi &&
                  cat[MEM_ADAM_V] == 4 * psi && cat[MEM_MASTER_PARAMS] == 0,
                  "mem holds params %zu, grads %zu, adam_m %zu, adam_v %zu bytes; each should be 4Ψ = %zu",
                  cat[MEM_PARAMS], cat[MEM_GRADS], cat[MEM_ADAM_M], cat[MEM_ADAM_V], 4 * psi);
    ck_assert_msg(model_state_formula(&t.model) == 16.0 * psi, "model_state_formula says %.0f bytes; mem "
                  "measured %zu (16Ψ, Ψ = %zu)", model_state_formula(&t.model), 16 * psi, psi);
    trainer_teardown(&t);
}
END_TEST

// ----------------------------------------------------------------------------
// the whole stage (lc0.0): the reference's loss at every step and its final model

START_TEST(test_follows_reference) { grade_follows_lc0(runs, nruns, "", 1e-6, 1e-5); }
END_TEST

START_TEST(test_no_collectives) {
    Args a = small_args(NULL, NULL);
    Trainer t;
    trainer_setup(&t, &a);
    train(&t);
    for (int k = 0; k < COLL_NKIND; k++) ck_assert_uint_eq(t.comm.kind[k].calls, 0);
    ck_assert_double_eq(comm_total_sent_bytes(&t.comm), comm_theory(&t));
    trainer_teardown(&t);
}
END_TEST

// ----------------------------------------------------------------------------
// init and model files

START_TEST(test_init_like_pytorch_and_by_slice) {
    Args a = small_args("--hidden", "40");
    Trainer t;
    trainer_setup(&t, &a);
    Model *m = &t.model;
    for (int l = 0; l < m->nlayers; l++) {
        const Layer *L = &m->layer[l];
        float bound = 1.0f / sqrtf((float)L->in), *seg = m->params + L->off, mx = 0;
        for (size_t i = 0; i < L->numel; i++) mx = fmaxf(mx, fabsf(seg[i]));
        ck_assert_float_le(mx, bound);
        ck_assert_float_gt(mx, 0.9f * bound);  // really spread over the range
        // Any slice drawn on its own equals that slice of the whole (what ZeRO-3 needs).
        float part[64];
        size_t first = L->numel / 3, count = L->numel - first < 64 ? L->numel - first : 64;
        init_segment(part, L, l, a.seed, first, count);
        ck_assert_mem_eq(part, seg + first, count * sizeof(float));
    }
    trainer_teardown(&t);
}
END_TEST

START_TEST(test_save_and_load) {
    char path[] = "/tmp/zc_lc0_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    Args a = small_args(NULL, NULL);
    Trainer t;
    trainer_setup(&t, &a);
    train_step(&t, 0);
    ck_assert_ptr_null(save_params(&t, path));
    Args b = small_args("--init", path);
    Trainer u;
    trainer_setup(&u, &b);
    ck_assert_mem_eq(u.model.params, t.model.params, t.model.numel * sizeof(float));
    // A model of another shape is refused by name and shape.
    Args c = small_args("--hidden", "7");
    Trainer v;
    trainer_setup(&v, &c);
    const char *err = load_params(&v.model, path);
    ck_assert_ptr_nonnull(err);
    ck_assert_ptr_nonnull(strstr(err, "has shape [6,54], expected [7,54]"));
    Args d = small_args("--layers", "3");
    Trainer w;
    trainer_setup(&w, &d);
    ck_assert_ptr_nonnull(strstr(load_params(&w.model, path), "has 6 tensors, this model has 8"));
    trainer_teardown(&w);
    trainer_teardown(&v);
    trainer_teardown(&u);
    trainer_teardown(&t);
    unlink(path);
}
END_TEST

// ----------------------------------------------------------------------------
// sampling (report_samples), with a next-symbol function whose answers are known

typedef struct {
    int T, calls, random;       // random: any letter, then '.' (one-letter words)
    uint8_t seen[16][3];        // the first contexts it was asked about
} FakeModel;

// Not random: after '.' comes 'a', after a 'b', after b 'c', after c '.'.
static void fake_next(void *model, const uint8_t *ctx, float *probs) {
    FakeModel *f = model;
    if (f->calls < 16) memcpy(f->seen[f->calls], ctx, 3);
    f->calls++;
    int last = ctx[f->T - 1];
    for (int c = 0; c < VOCAB; c++)
        probs[c] = f->random ? (last == 0 ? (c > 0 ? 1.0f / (VOCAB - 1) : 0.0f) : (c == 0 ? 1.0f : 0.0f))
                             : (c == (last == 3 ? 0 : last + 1) ? 1.0f : 0.0f);
}

// What report_samples prints with f and this seed, 3 words.
static void samples_of(FakeModel *f, const char *seed, char *buf, size_t cap) {
    char *argv[] = { "t", "--sample", "3", "--seed", (char *)seed, "--context", "3" };
    Args a = args_of("samples", 7, argv);
    fflush(stdout);
    FILE *tmp = tmpfile();
    int saved = dup(1);
    ck_assert(tmp && saved >= 0 && dup2(fileno(tmp), 1) >= 0);
    report_samples(&a, f->T, 0, fake_next, f);
    fflush(stdout);
    ck_assert(dup2(saved, 1) >= 0);
    close(saved);
    rewind(tmp);
    size_t n = fread(buf, 1, cap - 1, tmp);
    buf[n] = '\0';
    fclose(tmp);
}

START_TEST(test_samples) {
    char out[256], again[256], other[256];
    FakeModel f = { .T = 3 };
    samples_of(&f, "5", out, sizeof out);
    ck_assert_str_eq(out, "\nsamples: abc abc abc\n");  // words end at '.'
    ck_assert_int_eq(f.calls, 12);
    // Each context is the one before, shifted left, ending with the symbol drawn;
    // a word starts from dots.
    static const uint8_t want[4][3] = { { 0, 0, 0 }, { 0, 0, 1 }, { 0, 1, 2 }, { 1, 2, 3 } };
    for (int k = 0; k < 12; k++)
        ck_assert_msg(memcmp(f.seen[k], want[k % 4], 3) == 0, "call %d saw context %d %d %d, want %d %d %d", k,
                      f.seen[k][0], f.seen[k][1], f.seen[k][2], want[k % 4][0], want[k % 4][1], want[k % 4][2]);
    // Drawn at random: a seed gives its words, the same each time; another, others.
    FakeModel r = { .T = 3, .random = 1 };
    samples_of(&r, "5", out, sizeof out);
    samples_of(&r, "5", again, sizeof again);
    samples_of(&r, "6", other, sizeof other);
    ck_assert_str_eq(out, again);
    ck_assert_str_ne(out, other);
    ck_assert_msg(strlen(out) == strlen("\nsamples: x y z\n"), "one-letter words, got '%s'", out);
}
END_TEST

START_TEST(test_no_leaks) { ck_assert_uint_eq(mem_live_count(), 0); }
END_TEST

// ----------------------------------------------------------------------------
// the checks: lc0.K the exercises, lc0.0 the whole stage; 0 points: project tests

static int checks(Graded *g) {
    int n = 0;
    g[n++] = (Graded){ "lc0.1a", 10, "1", "adam_update: one AdamW step as the formula, in double", test_adam_step_formula };
    g[n++] = (Graded){ "lc0.1b", 5, "1", "the first Adam step moves each parameter by lr", test_adam_first_step_is_lr };
    g[n++] = (Graded){ "lc0.1c", 5, "1", "after a training step, m = (1-beta1) g and v = (1-beta2) g^2", test_adam_moments_move };
    g[n++] = (Graded){ "lc0.1d", 5, "1", "on a GPU run, adam_update hands the step to the CUDA kernel", test_adam_hands_off_to_gpu };
    g[n++] = (Graded){ "lc0.2a", 5, "1", "zero_grad leaves every gradient at 0", test_zero_grad_zeroes };
    g[n++] = (Graded){ "lc0.2b", 5, "1", "each step's gradient is its own, not added to the last", test_each_step_has_its_own_gradient };
    g[n++] = (Graded){ "lc0.3a", 10, "1", "clip_grads: the global L2 norm, every gradient scaled", test_clip_grads };
    g[n++] = (Graded){ "lc0.4a", 5, "1", "model state: 4Ψ per category, the formula equal to it", test_model_state_is_16_psi };
    g[n++] = (Graded){ "lc0.0a", 10, "1", "the whole stage: the reference lc0's losses and model", test_follows_reference };
    g[n++] = (Graded){ "gradient", 0, "1", "backward against a double reference", test_gradient_matches_double_reference };
    g[n++] = (Graded){ "loss", 0, "1", "the loss falls on the default data", test_loss_falls };
    g[n++] = (Graded){ "no-comm", 0, "1", "no collectives", test_no_collectives };
    g[n++] = (Graded){ "init", 0, "1", "init as PyTorch, by slice", test_init_like_pytorch_and_by_slice };
    g[n++] = (Graded){ "files", 0, "1", "save and load", test_save_and_load };
    g[n++] = (Graded){ "samples", 0, "1", "sampled words: the context shifts, '.' ends a word, a seed its words",
                       test_samples };
    g[n++] = (Graded){ "leaks", 0, "1", "no leaks", test_no_leaks };
    return n;
}

static void load_refs(void) { nruns = ref_load(runs); }

GRADED_MAIN("test_lc0", checks, load_refs)
