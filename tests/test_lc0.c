// test_lc0: grades lc0_adam through its own functions (the stage is included
// with LECTURE_TEST, so its main is left out).
#include "check_mpi.h"

#include <unistd.h>

#include "../lc0_adam/adam.c"

static Args args_of(int argc, char **argv) {
    Args a;
    char err[512];
    if (args_parse(&a, argc, argv, OPTIONS, 1, err, sizeof err) != ARGS_OK) fatal("%s", err);
    return a;
}

// A small model, so the tests run in seconds on a laptop; up to two more options.
static Args small_args(const char *extra1, const char *extra2) {
    char *argv[20] = { "test", "--context", "2", "--hidden", "6", "--layers", "2", "--batch", "5",
                       "--steps", "3", "--sample", "0", "--log-every", "0" };
    int argc = 15;
    if (extra1) argv[argc++] = (char *)extra1;
    if (extra2) argv[argc++] = (char *)extra2;
    return args_of(argc, argv);
}

// ----------------------------------------------------------------------------
// a double-precision reference of the whole model

// Loss (mean over B) and its gradient for rows examples, everything in double.
static double ref_loss_grad(const Model *m, const double *p, const uint8_t *ctx, const int *tg,
                            int rows, int B, double *grad) {
    enum { W = 128 };
    double act[MAX_LAYERS + 1][W], d[W], dn[W], loss = 0;
    for (size_t i = 0; i < m->numel && grad; i++) grad[i] = 0;
    for (int r = 0; r < rows; r++) {
        for (int i = 0; i < m->layer[0].in; i++) act[0][i] = 0;
        for (int t = 0; t < m->T; t++) act[0][t * VOCAB + ctx[r * m->T + t]] = 1;
        for (int l = 0; l < m->nlayers; l++) {
            const Layer *L = &m->layer[l];
            for (int o = 0; o < L->out; o++) {
                double z = p[L->off + (size_t)L->out * L->in + o];
                for (int i = 0; i < L->in; i++) z += p[L->off + (size_t)o * L->in + i] * act[l][i];
                act[l + 1][o] = (l < m->nlayers - 1 && z <= 0) ? 0 : z;
            }
        }
        double *z = act[m->nlayers], mx = z[0], sum = 0;
        for (int c = 1; c < VOCAB; c++) mx = fmax(mx, z[c]);
        for (int c = 0; c < VOCAB; c++) sum += exp(z[c] - mx);
        loss += (log(sum) - (z[tg[r]] - mx)) / B;
        if (!grad) continue;
        for (int c = 0; c < VOCAB; c++) d[c] = (exp(z[c] - mx) / sum - (c == tg[r])) / B;
        for (int l = m->nlayers - 1; l >= 0; l--) {
            const Layer *L = &m->layer[l];
            for (int o = 0; o < L->out; o++) {
                grad[L->off + (size_t)L->out * L->in + o] += d[o];
                for (int i = 0; i < L->in; i++) grad[L->off + (size_t)o * L->in + i] += d[o] * act[l][i];
            }
            for (int i = 0; i < L->in; i++) {
                dn[i] = 0;
                for (int o = 0; o < L->out; o++) dn[i] += d[o] * p[L->off + (size_t)o * L->in + i];
                dn[i] = act[l][i] > 0 ? dn[i] : 0;
            }
            memcpy(d, dn, sizeof d);
        }
    }
    return loss;
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
// the optimizer

START_TEST(test_adam_moments_move) {
    Args a = small_args("--weight-decay", "0.1");
    Trainer t;
    trainer_setup(&t, &a);
    Model *m = &t.model;
    size_t n = m->numel;
    float *g1 = mem_alloc(MEM_DATA, n * sizeof(float)), *m1 = mem_alloc(MEM_DATA, n * sizeof(float));
    train_step(&t, 0);
    ck_assert_int_eq(t.opt.step, 1);
    // After one step from zero, m = (1 - beta1) g and v = (1 - beta2) g^2: recompute g.
    zero_grad(m);
    Trainer u;
    trainer_setup(&u, &a);
    data_batch(&u.data, 0, a.batch, 0, u.acts.rows, u.acts.ctx, u.acts.targets);
    forward_backward(&u, a.batch);
    memcpy(g1, u.model.grads, n * sizeof(float));
    size_t nonzero = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_float_eq_tol(t.opt.m[i], (1.0f - a.beta1) * g1[i], 1e-7f * fabsf(g1[i]) + 1e-12f);
        ck_assert_float_eq_tol(t.opt.v[i], (1.0f - a.beta2) * g1[i] * g1[i], 1e-6f * g1[i] * g1[i] + 1e-20f);
        nonzero += g1[i] != 0.0f;
    }
    ck_assert_uint_gt(nonzero, n / 4);
    memcpy(m1, t.opt.m, n * sizeof(float));
    train_step(&t, 1);
    size_t moved = 0;
    for (size_t i = 0; i < n; i++) moved += t.opt.m[i] != m1[i];
    ck_assert_uint_gt(moved, n / 4);
    mem_free(g1);
    mem_free(m1);
    trainer_teardown(&u);
    trainer_teardown(&t);
}
END_TEST

START_TEST(test_zero_grad_zeroes) {
    Args a = small_args(NULL, NULL);
    Trainer t;
    trainer_setup(&t, &a);
    Model *m = &t.model;
    Acts *x = &t.acts;
    fill(m->grads, 3.0f, m->numel);
    zero_grad(m);
    for (size_t i = 0; i < m->numel; i++) ck_assert_float_eq(m->grads[i], 0.0f);
    // Backward accumulates: two passes without zero_grad give twice the gradient.
    data_batch(&t.data, 0, a.batch, 0, x->rows, x->ctx, x->targets);
    forward_backward(&t, a.batch);
    float *once = mem_alloc(MEM_DATA, m->numel * sizeof(float));
    memcpy(once, m->grads, m->numel * sizeof(float));
    forward_backward(&t, a.batch);
    for (size_t i = 0; i < m->numel; i++) ck_assert(fabsf(m->grads[i] - 2 * once[i]) <= 1e-6f * fabsf(once[i]));
    // train_step zeroes first: its gradient is the step's own.
    train_step(&t, 0);
    for (size_t i = 0; i < m->numel; i++) ck_assert_float_eq(m->grads[i], once[i]);
    mem_free(once);
    trainer_teardown(&t);
}
END_TEST

// ----------------------------------------------------------------------------
// training on the default data

START_TEST(test_loss_falls) {
    char *argv[] = { "t", "--hidden", "64", "--steps", "300", "--sample", "0", "--log-every", "0" };
    Args a = args_of(9, argv);
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
    Args a = args_of(9, argv);
    size_t H = 37, I = 4 * 27;
    size_t psi = (I * H + H) + 2 * (H * H + H) + (H * 27 + 27);  // Ψ by hand
    MemStats before = mem_stats();
    Trainer t;
    trainer_setup(&t, &a);
    ck_assert_uint_eq(t.model.numel, psi);
    MemStats s = mem_stats();
    ck_assert_uint_eq(mem_model_state_bytes(&s) - mem_model_state_bytes(&before), 16 * psi);
    ck_assert_double_eq(model_state_formula(&t.model), 16.0 * psi);
    for (long k = 0; k < 3; k++) train_step(&t, k);
    s = mem_stats();
    ck_assert_uint_eq(mem_model_state_bytes(&s) - mem_model_state_bytes(&before), 16 * psi);
    trainer_teardown(&t);
}
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

START_TEST(test_no_leaks) { ck_assert_uint_eq(mem_live_count(), 0); }
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("lc0_adam");
    TCase *tc = tcase_create("grading");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, test_gradient_matches_double_reference);
    tcase_add_test(tc, test_adam_moments_move);
    tcase_add_test(tc, test_zero_grad_zeroes);
    tcase_add_test(tc, test_loss_falls);
    tcase_add_test(tc, test_model_state_is_16_psi);
    tcase_add_test(tc, test_no_collectives);
    tcase_add_test(tc, test_init_like_pytorch_and_by_slice);
    tcase_add_test(tc, test_save_and_load);
    tcase_add_test(tc, test_no_leaks);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN("test_lc0", suite)
