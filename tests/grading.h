// grading: what every distributed stage's suite checks against lc0, written once.
// Included after the stage's .c (so Model, Trainer, trainer_setup, train_step are
// that stage's). The suite defines full_params(): the whole model as this rank
// would save it, which a ZeRO-3 stage has to gather first.
#ifndef GRADING_H
#define GRADING_H

#include <math.h>

#include "check_mpi.h"
#include "ref.h"

// Copies this rank's view of all Ψ params into dst.
static void full_params(Trainer *t, float *dst);

// Options for a run; `what` names it if they do not parse.
static Args args_of(const char *what, int argc, char **argv) {
    Args a;
    char err[512];
    if (args_parse(&a, argc, argv, OPTIONS, rt.world, err, sizeof err) != ARGS_OK)
        fatal("%s: %s", what, err);
    return a;
}

// Sets t up from options; `what` names the run if they do not parse.
static inline void setup_from(Trainer *t, const char *what, int argc, char **argv) {
    Args a = args_of(what, argc, argv);
    trainer_setup(t, &a);
}

// Relative L2 distance of params from lc0's final model in path.
static double distance_to_reference(const Model *m, const float *params, const char *path) {
    Ckpt c;
    const char *err = ckpt_open_model(&c, path, m->nlayers);
    if (err) fatal("%s", err);
    float *ref = mem_alloc(MEM_DATA, m->numel * sizeof(float));
    for (int l = 0; l < m->nlayers && !err; l++) {
        const Layer *L = &m->layer[l];
        err = ckpt_read_layer(&c, l, L->out, L->in, 0, L->numel, ref + L->off);
    }
    ckpt_close(&c);
    if (err) fatal("%s", err);
    double num = 0, den = 0;
    for (size_t i = 0; i < m->numel; i++) {
        double d = (double)params[i] - ref[i];
        num += d * d;
        den += (double)ref[i] * ref[i];
    }
    mem_free(ref);
    return sqrt(num / den);
}

// 1 on every rank if all ranks hold the same n floats, bit for bit.
static int replicas_agree(const float *x, size_t n) {
    double lo[1] = { 0 }, hi[1];
    for (size_t i = 0; i < n; i++) lo[0] += x[i] * (double)(i % 97 + 1);
    hi[0] = -lo[0];
    comm_metric_max(lo, 1);
    comm_metric_max(hi, 1);
    return lo[0] == -hi[0];
}

// Trains every reference run (with `extra` options appended) step by step and
// checks each step's loss against lc0's (relative) and the final params
// (relative L2), and that every rank ends with the same model.
static inline void grade_follows_lc0(const RefRun *runs, int nruns, const char *extra, double loss_tol,
                              double param_tol) {
    for (int k = 0; k < nruns; k++) {
        const RefRun *r = &runs[k];
        char *argv[80], text[256];
        int argc = 0;
        for (; argc < r->argc; argc++) argv[argc] = r->argv[argc];
        snprintf(text, sizeof text, "%s", extra);
        for (char *tok = strtok(text, " "); tok && argc < 80; tok = strtok(NULL, " ")) argv[argc++] = tok;
        Args a = args_of(r->name, argc, argv);
        char run[192];  // the run's name, with its extra options if any
        snprintf(run, sizeof run, "%.63s%s%.120s", r->name, *extra ? " " : "", extra);
        Trainer t;
        trainer_setup(&t, &a);
        double worst = 0;
        for (long s = 0; s < a.steps; s++) {
            double loss = train_step(&t, s);
            worst = fmax(worst, fabs(loss - r->loss[s]) / r->loss[s]);
        }
        CK_ALL(r->steps == a.steps, "%s: reference has %ld steps, run has %ld", r->name, r->steps, a.steps);
        CK_ALL(worst <= loss_tol, "%s at N=%d: loss differs from lc0 by %.2e (relative)", run, rt.world, worst);
        float *p = mem_alloc(MEM_DATA, t.model.numel * sizeof(float));
        full_params(&t, p);
        double dist = distance_to_reference(&t.model, p, r->model);
        if (getenv("ZC_VERBOSE") && rt.rank == 0)
            printf("  %s N=%d: loss %.2e, params %.2e\n", run, rt.world, worst, dist);
        CK_ALL(dist <= param_tol, "%s at N=%d: params differ from lc0 by %.2e (relative L2)", run, rt.world, dist);
        CK_ALL(replicas_agree(p, t.model.numel), "%s: ranks ended with different models", run);
        mem_free(p);
        trainer_teardown(&t);
    }
}

// The same over the hand-written ring and naive backends (after `extra`): other
// sums in another order, the same tolerances.
static inline void grade_follows_lc0_hand_written(const RefRun *runs, int nruns, const char *extra,
                                           double loss_tol, double param_tol) {
    const char *backends[] = { "ring", "naive" };
    for (int b = 0; b < 2; b++) {
        char opts[128];
        snprintf(opts, sizeof opts, "%s%s--comm %s", extra, *extra ? " " : "", backends[b]);
        grade_follows_lc0(runs, nruns, opts, loss_tol, param_tol);
    }
}

#endif
