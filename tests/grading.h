// grading: what every distributed stage's suite checks against lc0, written once.
// Included after the stage's .c (so Model, Trainer, trainer_setup, train_step are
// that stage's). The suite defines full_params(): the whole model as this rank
// would save it, which a ZeRO-3 stage has to gather first.
#ifndef GRADING_H
#define GRADING_H

// The checks' own code, from here to the end of the test program, at -O0; the
// stage's file, included before this header, keeps the build's -O2, so the
// code graded is compiled as it runs: every function of the stage's file
// compiles to the same instructions here as in the stage's own program
// (tests/test_same_code.sh holds it). A plain "O0" does not: it turns the
// frame pointer back on for the functions above it too, and a learner's
// write one double past a local (the known mistake
// lc1-loss-summed-with-its-neighbour) then crashed the grade where the
// stage's program runs on; hence "omit-frame-pointer". The grader compiles a
// test program for every file it grades, and optimizing the checks was most
// of that compile (user + system, means of five: test_lc0 0.97 s at -O1, 0.67
// here; test_lc2 0.85, 0.53; test_lc5 0.94, 0.65), while the checks' run time
// stayed within the noise (a check's time is the stage's steps; the checks'
// own loops are short). GCC's arithmetic is the same at every level (C11: no
// fused multiply-adds, no reassociation).
#pragma GCC optimize("O0", "omit-frame-pointer")

#include <math.h>

#include "check_mpi.h"
#include "ref.h"
#include "trail.h"

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

// Past the model's last layer the Layer table holds what a loop one layer too
// far reads. Set-up leaves zeros there, with which such a loop does nothing and
// passes; here it finds sizes and offsets no buffer has, and the run stops.
static inline void poison_spare_layers(Model *m) {
    memset(&m->layer[m->nlayers], 0x7f, (MAX_LAYERS - (size_t)m->nlayers) * sizeof m->layer[0]);
}

// Sets t up from options; `what` names the run if they do not parse.
static inline void setup_from(Trainer *t, const char *what, int argc, char **argv) {
    Args a = args_of(what, argc, argv);
    trainer_setup(t, &a);
    poison_spare_layers(&t->model);
}

// Relative L2 distance of params from lc0's final model in path.
static double distance_to_reference(const Model *m, const float *params, const char *path) {
    StFile c;
    const char *err = mlp_open(&c, path, m->nlayers);
    if (err) fatal("%s", err);
    float *ref = mem_alloc(MEM_DATA, m->numel * sizeof(float));
    for (int l = 0; l < m->nlayers && !err; l++) {
        const Layer *L = &m->layer[l];
        err = mlp_read_layer(&c, l, L->out, L->in, 0, L->numel, ref + L->off);
    }
    st_close(&c);
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

// The options of a run in words, for a message: "context 3, hidden 64, 3 layers,
// batch 252, 30 steps, seed 5, 3 micro-batches a step, clipping at 0.5".
static void options_in_words(char *out, size_t len, int argc, char **argv) {
    static const char *words[][2] = {
        { "layers", "%s layers" }, { "steps", "%s steps" }, { "accum", "%s micro-batches a step" },
        { "clip", "clipping at %s" }, { "weight-decay", "weight decay %s" }, { "comm", "the %s backend" },
        { "prefetch", "prefetch %s" }, { "bucket-mb", "buckets of %s MiB" }, { "dtype", "in %s" },
    };
    size_t at = 0;
    out[0] = '\0';
    for (int i = 1; i + 1 < argc && at < len; i += 2) {
        const char *name = argv[i] + (strncmp(argv[i], "--", 2) == 0 ? 2 : 0), *v = argv[i + 1];
        if (strcmp(name, "sample") == 0 || strcmp(name, "log-every") == 0) continue;
        char one[96];
        snprintf(one, sizeof one, "%s %s", name, v);
        for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
            if (strcmp(name, words[w][0]) == 0) snprintf(one, sizeof one, words[w][1], v);
        at += (size_t)snprintf(out + at, len - at, "%s%s", at ? ", " : "", one);
    }
}

// Trains every reference run (with `extra` options appended) step by step and
// checks each step's loss against lc0's (relative) and the final params
// (relative L2), and that every rank ends with the same model; with `trail`,
// also the whole state after every step against the reference build's
// (trail.h). Whichever parts first is told: a loss off lc0's before the state
// left the reference's points at the forward pass or the loss, a state that
// left it first at that step's update.
static inline void follows_lc0(const RefRun *runs, int nruns, const char *extra, double loss_tol,
                               double param_tol, int trail) {
    for (int k = 0; k < nruns; k++) {
        const RefRun *r = &runs[k];
        char *argv[80], text[256];
        int argc = 0;
        for (; argc < r->argc; argc++) argv[argc] = r->argv[argc];
        snprintf(text, sizeof text, "%s", extra);
        for (char *tok = strtok(text, " "); tok && argc < 80; tok = strtok(NULL, " ")) argv[argc++] = tok;
        Args a = args_of(r->name, argc, argv);
        char run[512], words[400];  // the run, its options in words
        options_in_words(words, sizeof words, argc, argv);
        snprintf(run, sizeof run, "the run '%.63s' (%s)", r->name, words);
        Trainer t;
        trainer_setup(&t, &a);
        poison_spare_layers(&t.model);
        Trail tr;
        char key[300], why[512];
        snprintf(key, sizeof key, "%.63s%s%.200s", r->name, *extra ? " " : "", extra);
        if (trail) trail_open(&tr, &t, key);
        double worst = 0, got = 0, want = 0;
        long first = -1;  // the first step whose loss is off
        for (long s = 0; s < a.steps; s++) {
            double loss = train_step(&t, s);
            if (trail) trail_step(&tr, &t, s);
            double d = fabs(loss - r->loss[s]) / r->loss[s];
            if (!(d <= worst)) worst = d;  // a NaN loss stays NaN (fmax would drop it)
            if (first < 0 && !(d <= loss_tol)) first = s, got = loss, want = r->loss[s];
        }
        long left = trail ? trail_close(&tr, why) : -1;
        CK_ALL(r->steps == a.steps, "%s: reference has %ld steps, run has %ld", r->name, r->steps, a.steps);
        CK_ALL(left < 0 || (first >= 0 && first <= left), "%s at N=%d: %s", run, rt.world, why);
        CK_ALL(first < 0, "%s at N=%d: from step %ld on the loss is off lc0's (%.6f where lc0 has %.6f; at worst "
               "%.2e relative, %.0e allowed)%s", run, rt.world, first + 1, got, want, worst, loss_tol,
               first == 0 ? ": already at the first step, before any update: the forward pass, the examples each "
                            "rank takes, or the loss's mean over ranks" :
                            ": the first step's loss matches, so look at what the update did");
        float *p = mem_alloc(MEM_DATA, t.model.numel * sizeof(float));
        full_params(&t, p);
        double dist = distance_to_reference(&t.model, p, r->model);
        if (getenv("ZC_VERBOSE") && rt.rank == 0)
            printf("  %s N=%d: loss %.2e, params %.2e\n", run, rt.world, worst, dist);
        CK_ALL(dist <= param_tol, "%s at N=%d: the final params differ from lc0's by %.2e (relative L2; %.0e "
               "allowed), though every loss matched", run, rt.world, dist, param_tol);
        CK_ALL(replicas_agree(p, t.model.numel), "%s at N=%d: the ranks ended with different models", run, rt.world);
        mem_free(p);
        trainer_teardown(&t);
    }
}

// The graded end-to-end check: follows_lc0 with the whole state held to the
// reference build's.
static inline void grade_follows_lc0(const RefRun *runs, int nruns, const char *extra, double loss_tol,
                                     double param_tol) {
    follows_lc0(runs, nruns, extra, loss_tol, param_tol, 1);
}

// The same over every hand-written backend (after `extra`): other sums in
// another order, so the same tolerances, not the same bits (hier also on
// emulated nodes of two ranks, auto on the same, where its choices differ).
// No trail: the reference records the default backend's.
static inline void grade_follows_lc0_hand_written(const RefRun *runs, int nruns, const char *extra,
                                           double loss_tol, double param_tol) {
    const char *backends[] = { "ring", "naive", "tree", "rd", "rabenseifner", "hier", "auto",
                               "hier --ranks-per-node 2", "auto --ranks-per-node 2" };
    for (int b = 0; b < 9; b++) {
        if (strstr(backends[b], "--ranks-per-node 2") && rt.world % 2) continue;
        char opts[128];
        snprintf(opts, sizeof opts, "%s%s--comm %s", extra, *extra ? " " : "", backends[b]);
        follows_lc0(runs, nruns, opts, loss_tol, param_tol, 0);
    }
}

#endif
