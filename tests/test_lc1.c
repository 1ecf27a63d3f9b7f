// test_lc1: grades lc1_distributed_adam at whatever N the runner launches it
// with (1-4): it follows lc0's loss curve and ends with lc0's params, replicas
// stay identical, model state is 16Ψ, and communication is one all-reduce of Ψ
// per step, 2(N-1)/N x 4Ψ bytes per rank, exactly.
#include "check_mpi.h"

#include "../lc1_distributed_adam/distributed_adam.c"
#include "grading.h"

// Tolerances. Ranks sum gradients in another order than lc0 does, so results
// differ by float32 rounding (~6e-8 per operation), which 30 Adam steps amplify:
// measured at N = 2..4, accum 1 and 3, the worst was 7e-7 (params, relative L2)
// and 1.2e-8 (loss). The bounds leave a 10x margin and still catch any real
// error (a missing or doubled gradient share moves params by ~lr = 3e-3 per step).
#define PARAM_TOL 1e-5
#define LOSS_TOL 1e-6

static RefRun runs[REF_MAX];
static int nruns;

static void full_params(Trainer *t, float *dst) { copy(dst, t->model.params, t->model.numel); }

// ----------------------------------------------------------------------------
// against lc0

START_TEST(test_follows_lc0) { grade_follows_lc0(runs, nruns, "", LOSS_TOL, PARAM_TOL); }
END_TEST

START_TEST(test_clipping_engaged) {
    // The clip run must differ from the plain one, or it tests nothing.
    CK_ALL(nruns >= 2 && runs[1].loss[runs[1].steps - 1] != runs[0].loss[runs[0].steps - 1],
           "reference runs do not differ");
}
END_TEST

START_TEST(test_follows_lc0_hand_written_collectives) {
    grade_follows_lc0_hand_written(runs, nruns, "", LOSS_TOL, PARAM_TOL);
}
END_TEST

// ----------------------------------------------------------------------------
// the gradient of one step, against what it should be and what the usual
// mistakes make of it

// Relative L2 distance of x from y over all ranks' n elements.
static double rel_l2(const float *x, const float *y, size_t n) {
    double d[2] = { 0, 0 };
    for (size_t i = 0; i < n; i++) {
        d[0] += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
        d[1] += (double)y[i] * y[i];
    }
    comm_metric_sum(d, 2);
    return d[1] > 0 ? sqrt(d[0] / d[1]) : sqrt(d[0]);
}

START_TEST(test_step_gradient) {
    // Three micro-batches per rank, so accumulation mistakes show; no clipping,
    // so after train_step the gradients are what the update used.
    char *argv[] = { "t", "--context", "3", "--hidden", "16", "--layers", "2", "--batch", "252",
                     "--accum", "3", "--sample", "0", "--log-every", "0" };
    Args a = args_of("gradient run", 15, argv);
    Trainer t, u;
    trainer_setup(&t, &a);
    trainer_setup(&u, &a);
    double loss = train_step(&t, 0);
    // What every rank should hold: the gradient of the mean loss over all B
    // examples, computed here alone from every rank's share; and what the
    // mistakes give instead.
    size_t n = u.model.numel;
    int B = a.batch, per_rank = B / rt.world, K = a.accum, rows = u.acts.rows;
    enum { ALL, MINE, LAST, FIRST_K, NCAND };
    float *cand[NCAND];
    double want_loss = 0;
    for (int c = 0; c < NCAND; c++) {
        zero_grad(&u.model);
        for (int r = 0; r < rt.world; r++)
            for (int k = 0; k < K; k++) {
                if ((c == MINE && r != rt.rank) || (c == LAST && k != K - 1)) continue;
                int kk = c == FIRST_K ? 0 : k;
                data_batch(&u.data, 0, B, r * per_rank + kk * rows, rows, u.acts.ctx, u.acts.targets);
                double l = forward_backward(&u, B);
                if (c == ALL) want_loss += l;
            }
        cand[c] = mem_alloc(MEM_DATA, n * sizeof(float));
        copy(cand[c], u.model.grads, n);
    }
    want_loss /= B;
    float *scaled = mem_alloc(MEM_DATA, n * sizeof(float));
    double dist = rel_l2(t.model.grads, cand[ALL], n);
    const char *why = "";
    if (dist > 1e-5) {
        double zero = 0;
        for (size_t i = 0; i < n; i++) zero += fabsf(t.model.grads[i]);
        comm_metric_sum(&zero, 1);
        copy(scaled, cand[ALL], n);
        scale(scaled, (float)(rt.world * K), n);
        double times_nk = rel_l2(t.model.grads, scaled, n);
        copy(scaled, cand[ALL], n);
        scale(scaled, (float)rt.world, n);
        double times_n = rel_l2(t.model.grads, scaled, n);
        why = zero == 0 ? "every gradient is zero: no backward ran, or its result was lost" :
              rel_l2(t.model.grads, cand[MINE], n) <= 1e-5 ?
                  "each rank kept the gradient of its own examples: sum them over ranks (comm_all_reduce)" :
              rt.world > 1 && times_n <= 1e-5 ? "it is N times the mean: a sum over ranks of means of each rank's "
                                                "share; scale by the global batch B" :
              times_nk <= 1e-5 ? "it is N x accum times the mean: each micro-batch was scaled as a mean of its own "
                                 "rows; give forward_backward the global B" :
              rel_l2(t.model.grads, cand[LAST], n) <= 1e-5 ?
                  "only the last micro-batch is in it: the earlier ones were overwritten, not added" :
              rel_l2(t.model.grads, cand[FIRST_K], n) <= 1e-5 ?
                  "the first micro-batch counted accum times: each micro-batch must read its own examples "
                  "(first = rank x B/N + k x rows)" :
                  "it is none of the usual mistakes: compare with the instructions of lc1.1";
    }
    ck_all_msg(dist <= 1e-5, "after train_step at N=%d with accum 3, the gradient is %.3g (relative L2) away from "
               "the gradient of the mean loss over the global batch: %s", rt.world, dist, why);
    ck_all_msg(fabs(loss - want_loss) <= 1e-6 * want_loss, "train_step returned a loss of %.7g; the mean over the "
               "global batch is %.7g%s", loss, want_loss,
               rt.world > 1 && fabs(loss * rt.world - want_loss) < 0.3 * want_loss ?
                   ": sum the loss over ranks (comm_metric_sum)" : "");
    for (int c = 0; c < NCAND; c++) mem_free(cand[c]);
    mem_free(scaled);
    trainer_teardown(&u);
    trainer_teardown(&t);
}
END_TEST

// ----------------------------------------------------------------------------
// memory and communication against the formulas

START_TEST(test_model_state_and_comm_exact) {
    const char *sizes[][2] = { { "64", "3" }, { "37", "2" } };  // 37: nothing divides by 3
    for (int z = 0; z < 2; z++) {
        for (int accum = 1; accum <= 3; accum += 2) {
            char acc[12];
            snprintf(acc, sizeof acc, "%d", accum);
            char *argv[] = { "t", "--hidden", (char *)sizes[z][0], "--layers", (char *)sizes[z][1],
                             "--batch", "252", "--steps", "4", "--accum", acc, "--sample", "0",
                             "--log-every", "0" };
            Args a = args_of("exact-bytes run", 15, argv);
            MemStats before = mem_stats();
            Trainer t;
            trainer_setup(&t, &a);
            train(&t);
            MemStats s = mem_stats();
            uint64_t psi = t.model.numel, N = (uint64_t)rt.world, steps = (uint64_t)a.steps;
            CK_ALL(mem_model_state_bytes(&s) - mem_model_state_bytes(&before) == 16 * psi,
                   "model state is not 16Ψ");
            const CommCount *ar = &t.comm.kind[COLL_ALL_REDUCE];
            // One all-reduce per step, whatever accum: communication after the last micro-batch.
            CK_ALL(ar->calls == steps, "%llu all-reduces in %llu steps (accum %d)",
                   (unsigned long long)ar->calls, (unsigned long long)steps, accum);
            CK_ALL(ar->payload == steps * 4 * psi, "all-reduce payload is not 4Ψ per step");
            CK_ALL(ar->sent_xn == steps * 2 * (N - 1) * 4 * psi, "sent bytes are not 2(N-1)/N x 4Ψ");
            uint64_t others = 0;
            for (int k = 0; k < COLL_NKIND; k++) others += k == COLL_ALL_REDUCE ? 0 : t.comm.kind[k].calls;
            CK_ALL(others == 0, "collectives other than all-reduce during training");
            // The loss, summed for the log: one double a step. Summing more than
            // the one variable reads, and writes back, whatever lies beside it.
            const CommCount *mt = &t.comm.metrics;
            CK_ALL(mt->calls == steps && mt->payload == steps * 8, "the loss was summed over ranks as %llu bytes "
                   "in %llu calls over %llu steps: comm_metric_sum of the one double, once a step",
                   (unsigned long long)mt->payload, (unsigned long long)mt->calls, (unsigned long long)steps);
            trainer_teardown(&t);
        }
    }
}
END_TEST

START_TEST(test_comm_theory) {
    const char *sizes[][2] = { { "64", "3" }, { "37", "2" } };
    for (int z = 0; z < 2; z++)
        for (int accum = 1; accum <= 3; accum += 2) {
            char acc[12];
            snprintf(acc, sizeof acc, "%d", accum);
            char *argv[] = { "t", "--hidden", (char *)sizes[z][0], "--layers", (char *)sizes[z][1], "--batch",
                             "252", "--steps", "2", "--accum", acc, "--sample", "0", "--log-every", "0" };
            Args a = args_of("theory run", 15, argv);
            Trainer t;
            trainer_setup(&t, &a);
            train(&t);
            double per_step = comm_total_sent_bytes(&t.comm) / (double)a.steps, N = rt.world;
            double want = 2 * (N - 1) / N * 4 * (double)t.model.numel;  // one all-reduce of Ψ floats
            ck_all_msg(fabs(want - comm_theory(&t)) <= 1e-9 * want, "comm_theory says %.1f bytes per step for Ψ = %zu "
                       "at N=%d (accum %d); one all-reduce of Ψ floats sends 2(N-1)/N x 4Ψ = %.1f", comm_theory(&t),
                       t.model.numel, rt.world, accum, want);
            ck_all_msg(fabs(per_step - comm_theory(&t)) <= 1e-9 * per_step + 1e-9, "comm_theory says %.1f bytes per "
                       "step for Ψ = %zu at N=%d (accum %d); the ring model of what was sent gives %.1f", comm_theory(&t),
                       t.model.numel, rt.world, accum, per_step);
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
    g[n++] = (Graded){ "lc1.1a", 10, "1 2 3 4", "the whole stage: lc0's losses and model, every rank alike", test_follows_lc0 };
    g[n++] = (Graded){ "lc1.1b", 10, "1 2 3 4", "one step's gradient: the mean over the global batch, accum 3", test_step_gradient };
    g[n++] = (Graded){ "lc1.1c", 5, "1 2 3 4", "one all-reduce of 4Ψ per step whatever accum, the loss one double; model state 16Ψ", test_model_state_and_comm_exact };
    g[n++] = (Graded){ "lc1.5a", 5, "2 3 4", "comm_theory: the ring model's bytes, equal to what was sent", test_comm_theory };
    g[n++] = (Graded){ "clipping-engaged", 0, "", "clipping-engaged", test_clipping_engaged };
    g[n++] = (Graded){ "follows-lc0-hand-written-collectives", 0, "", "follows-lc0-hand-written-collectives", test_follows_lc0_hand_written_collectives };
    g[n++] = (Graded){ "no-leaks", 0, "", "no-leaks", test_no_leaks };
    return n;
}

static void load_refs(void) { nruns = ref_load(runs); }

GRADED_MAIN("test_lc1", checks, load_refs)
