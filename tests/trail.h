// trail: a graded run's whole training state after every step, held against
// the reference's. The reference build records it (tests/trails.sh runs the
// end-to-end checks with ZC_TRAIL=record); a graded build compares with it
// (ZC_TRAIL=compare). So a learner's run answers for everything the stage
// keeps, not only its losses and final model: each kind of state it saves in
// a checkpoint (params, m, v; lc5's fp32 master and 16-bit params), the
// scalars saved with them (lc5's loss scale, its run of clean steps, the
// skipped steps, the overflows at the floor) and Adam's step count. The first
// step where the two part is named: the tensor, the element, and what the
// reference did in that step.
//
// Included after the stage's .c (describe_state is the stage's) and
// check_mpi.h. Files, under ZC_REF/trails/STAGE/ (the reference ran at the
// same N): RUN-N<world>-r<rank> holds each rank's slices and scalars, and
// RUN-N<world>-whole the kinds every rank keeps whole, written once by rank 0
// (the reference's replicas are the same bits) and read by every rank.
#ifndef TRAIL_H
#define TRAIL_H

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/checkpoint.h"
#include "../common/dtype.h"
#include "../common/mlp.h"
#include "../common/shards.h"
#include "ref.h"

// How far a tensor may stray, per layer: the relative L2 distance of this
// rank's part of the layer from the reference's. Scalars and Adam's step count
// must be equal. The reference and the graded run are the same stage at the
// same N on the same backend, so the same arithmetic gives the same bits (make
// test holds the reference to its own trail: equal, step for step). The
// tolerance is for a right solution that rounds differently: Adam's bias
// corrections applied to m and v instead of to the step size, the clip factor
// folded into the unscaling (tests/grader/variants). In fp32 such variants stayed
// below 3.1e-7 over 30 steps; the bound, TRAIL_TOL, is 30 times that. In a run
// with 16-bit params they flip a rounding of a param now and then, one unit in
// its last place (2^-11 in fp16, 2^-8 in bf16), which the later steps carry:
// the variants stayed below a quarter of that unit (4.2e-5 in fp16, 9.0e-4 in
// bf16, N = 1..4); the bound is the unit. A wrong rule moves some layer by 1e-3 or
// more in fp32, a whole unit or more in 16 bits; the loss scaler's state and
// the step count, exact, catch the rest.
#define TRAIL_TOL 1e-5
#define TRAIL_TOL_F16 (1.0 / 2048)
#define TRAIL_TOL_BF16 (1.0 / 256)

typedef struct {
    FILE *f, *w;                      // this rank's file; the whole kinds' file (rank 0's, when recording)
    int record;                       // 1: writing the reference's; 0: comparing with it
    char path[1024], whole[1024];
    size_t numel[STATE_MAX_KINDS];    // elements this rank holds of each kind
    void *ref[STATE_MAX_KINDS];       // the reference's, this step
    double value[STATE_MAX_VALUES];   // the reference's scalars after this step, and the step before
    double before[STATE_MAX_VALUES];
    long steps;                       // steps recorded or compared so far
    double tol;                       // the bound for this run (its params' type)
    double worst;                     // the largest relative distance of a layer seen here (ZC_VERBOSE prints it)
    long first;                       // the first step (0-based) where this rank left the reference, or -1
    char why[512];                    // what differed there (as long as a verdict's message)
} Trail;

// "off" (no trail), "record" or "compare", from ZC_TRAIL.
static inline const char *trail_mode(void) {
    const char *m = getenv("ZC_TRAIL");
    if (!m || !*m || strcmp(m, "off") == 0) return "off";
    if (strcmp(m, "record") != 0 && strcmp(m, "compare") != 0)
        fatal("ZC_TRAIL=%s: one of off, record, compare", m);
    return m;
}

// Elements of layer l this rank holds in kind k, and where they start in the
// buffer (*at) and in the layer's segment (*first).
static inline size_t trail_layer(const TrainState *s, const StateKind *k, int l, size_t *at, size_t *first) {
    const Args *a = s->a;
    int out, in;
    *at = 0;
    for (int i = 0; i < l; i++) {
        mlp_shape(a->context, a->hidden, a->layers, i, &out, &in);
        size_t n = mlp_numel(out, in);
        *at += k->sliced ? shard_len(n, rt.world) : n;
    }
    mlp_shape(a->context, a->hidden, a->layers, l, &out, &in);
    Range r = k->sliced ? shard_range(mlp_numel(out, in), rt.rank, rt.world) : (Range){ 0, mlp_numel(out, in) };
    *first = r.first;
    return r.count;
}

// All the elements a rank keeps of kind k (its slots, padding included, if sliced).
static inline size_t trail_kind_numel(const TrainState *s, const StateKind *k) {
    size_t n = 0;
    for (int l = 0; l < mlp_layers(s->a->layers); l++) {
        int out, in;
        mlp_shape(s->a->context, s->a->hidden, s->a->layers, l, &out, &in);
        n += k->sliced ? shard_len(mlp_numel(out, in), rt.world) : mlp_numel(out, in);
    }
    return n;
}

// The folder of the trails: ZC_TRAILS (where tests/trails.sh records a new
// set before it takes the place of the old), else ZC_REF/trails.
static inline const char *trail_dir(void) {
    static char dir[600];
    const char *d = getenv("ZC_TRAILS");
    if (d && *d) return d;
    snprintf(dir, sizeof dir, "%s/trails", ref_dir());
    return dir;
}

// The file of run `key` for this rank: the key's characters kept where a file
// name can hold them.
static inline void trail_path(Trail *tr, const char *key) {
    char name[200];
    size_t j = 0;
    for (const char *c = key; *c && j + 1 < sizeof name; c++)
        name[j++] = (isalnum((unsigned char)*c) || *c == '.' || *c == '-') ? *c : '_';
    name[j] = '\0';
    snprintf(tr->path, sizeof tr->path, "%.600s/%.40s/%.200s-N%d-r%d", trail_dir(), STAGE, name, rt.world, rt.rank);
    snprintf(tr->whole, sizeof tr->whole, "%.600s/%.40s/%.200s-N%d-whole", trail_dir(), STAGE, name, rt.world);
}

// The file a kind's values go to or come from; NULL for a whole kind on a rank
// that records none.
static inline FILE *trail_file(const Trail *tr, const StateKind *k) { return k->sliced ? tr->f : tr->w; }

// A line that says what the state holds, the first line of the file: the
// compare checks that the trail is this run's.
static inline void trail_header(const TrainState *s, const Trail *tr, char *out, size_t len) {
    size_t at = (size_t)snprintf(out, len, "zero-course trail 1: %s N=%d rank %d:", STAGE, rt.world, rt.rank);
    for (int k = 0; k < s->nkinds && at < len; k++)
        at += (size_t)snprintf(out + at, len - at, " %s %s %zu", s->kind[k].name, dtype_name(s->kind[k].dt),
                               tr->numel[k]);
    for (int v = 0; v < s->nvalues && at < len; v++) at += (size_t)snprintf(out + at, len - at, " %s", s->value[v].name);
    if (at < len) snprintf(out + at, len - at, "\n");
}

// Opens run `key`'s trail, to record or to compare as ZC_TRAIL says; with no
// trail, tr->f stays NULL and the other calls do nothing.
static inline void trail_open(Trail *tr, void *trainer, const char *key) {
    memset(tr, 0, sizeof *tr);
    tr->first = -1;
    const char *mode = trail_mode();
    if (strcmp(mode, "off") == 0) return;
    tr->record = strcmp(mode, "record") == 0;
    trail_path(tr, key);
    TrainState s;
    describe_state(trainer, &s);
    tr->tol = TRAIL_TOL;
    for (int k = 0; k < s.nkinds; k++) {
        tr->numel[k] = trail_kind_numel(&s, &s.kind[k]);
        if (s.kind[k].dt == DT_F16) tr->tol = TRAIL_TOL_F16;
        if (s.kind[k].dt == DT_BF16) tr->tol = TRAIL_TOL_BF16;
    }
    char header[600], theirs[600];
    trail_header(&s, tr, header, sizeof header);
    if (tr->record) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", tr->path);
        for (char *c = dir + strlen(trail_dir()) + 1; (c = strchr(c, '/')); *c++ = '/') {
            *c = '\0';
            if (mkdir(dir, 0777) != 0 && errno != EEXIST) fatal("trail: cannot make %s: %s", dir, strerror(errno));
        }
        if (!(tr->f = fopen(tr->path, "wb"))) fatal("trail: cannot write %s: %s", tr->path, strerror(errno));
        if (rt.rank == 0 && !(tr->w = fopen(tr->whole, "wb")))
            fatal("trail: cannot write %s: %s", tr->whole, strerror(errno));
        if (fputs(header, tr->f) == EOF) fatal("trail: cannot write %s", tr->path);
        return;
    }
    if (!(tr->f = fopen(tr->path, "rb")) || !(tr->w = fopen(tr->whole, "rb")))
        fatal("trail: no reference trail %s (%s): tests/trails.sh records them", tr->f ? tr->whole : tr->path,
              strerror(errno));
    if (!fgets(theirs, sizeof theirs, tr->f) || strcmp(header, theirs) != 0)
        fatal("trail: %s was recorded for another state than this run's (tests/trails.sh records it again)",
              tr->path);
    for (int k = 0; k < s.nkinds; k++) tr->ref[k] = mem_alloc(MEM_DATA, tr->numel[k] * dtype_size(s.kind[k].dt) + 1);
    for (int v = 0; v < s.nvalues; v++) tr->value[v] = state_value_get(&s.value[v]);  // the start, as set up
}

// Element i of a buffer of type dt, widened.
static inline double trail_at(const void *buf, DType dt, size_t i) {
    if (dt == DT_F32) return ((const float *)buf)[i];
    uint16_t h = ((const uint16_t *)buf)[i];
    return dt == DT_BF16 ? bf16_to_f32(h) : f16_to_f32(h);
}

// What the reference did in `step`, told by its scalars before and after
// (lc5's loss scale), in words: ", where an overflow skipped it and the scale
// halved from 65536 to 32768". Empty for a stage with no scalars.
static inline void trail_step_did(const TrainState *s, const Trail *tr, char *out, size_t len) {
    int scale = -1, skipped = -1;
    for (int v = 0; v < s->nvalues; v++) {
        if (strcmp(s->value[v].name, "scale") == 0) scale = v;
        if (strcmp(s->value[v].name, "skipped") == 0) skipped = v;
    }
    out[0] = '\0';
    if (scale < 0 || skipped < 0) return;
    double was = tr->before[scale], now = tr->value[scale];
    if (tr->value[skipped] > tr->before[skipped]) {
        if (now < was) snprintf(out, len, ", where the reference's gradient overflowed: the step skipped, the scale "
                                "halved from %g to %g", was, now);
        else snprintf(out, len, ", where the reference's gradient overflowed: the step skipped, the scale stayed "
                      "%g (static, or at its floor)", now);
    } else if (now > was) snprintf(out, len, ", a clean step after which the reference's scale doubled from %g to %g",
                                   was, now);
    else snprintf(out, len, ", a clean step at the scale %g", now);
}

// The element of layer l (segment index g) by its tensor's name and index:
// "layers.1.weight[3, 17]" or "layers.1.bias[5]".
static inline void trail_element(const Args *a, int l, size_t g, char *out, size_t len) {
    int o, in;
    mlp_shape(a->context, a->hidden, a->layers, l, &o, &in);
    if (g < (size_t)o * (size_t)in) snprintf(out, len, "layers.%d.weight[%zu, %zu]", l, g / (size_t)in, g % (size_t)in);
    else snprintf(out, len, "layers.%d.bias[%zu]", l, g - (size_t)o * (size_t)in);
}

// After step `step` (0-based) of the run: records the state, or compares it
// with the reference's and keeps the first difference this rank sees.
static inline void trail_step(Trail *tr, void *trainer, long step) {
    if (!tr->f) return;
    TrainState s;
    describe_state(trainer, &s);
    long adam = *s.adam_step;
    tr->steps = step + 1;
    if (tr->record) {
        int ok = fwrite(&adam, sizeof adam, 1, tr->f) == 1;
        for (int v = 0; v < s.nvalues; v++) {
            double x = state_value_get(&s.value[v]);
            ok &= fwrite(&x, sizeof x, 1, tr->f) == 1;
        }
        for (int k = 0; k < s.nkinds; k++) {
            FILE *f = trail_file(tr, &s.kind[k]);
            if (f) ok &= fwrite(s.kind[k].buf, dtype_size(s.kind[k].dt), tr->numel[k], f) == tr->numel[k];
        }
        if (!ok) fatal("trail: cannot write %s", tr->path);
        return;
    }
    long ref_adam;
    if (fread(&ref_adam, sizeof ref_adam, 1, tr->f) != 1) {  // the reference stopped before this step
        if (tr->first < 0) {
            tr->first = step;
            snprintf(tr->why, sizeof tr->why, "the reference's run stopped after step %ld (the stage stopped training "
                     "there); this one went on to step %ld", step, step + 1);
        }
        return;
    }
    int ok = 1;
    memcpy(tr->before, tr->value, sizeof tr->value);
    for (int v = 0; v < s.nvalues; v++) ok &= fread(&tr->value[v], sizeof(double), 1, tr->f) == 1;
    for (int k = 0; k < s.nkinds; k++)
        ok &= fread(tr->ref[k], dtype_size(s.kind[k].dt), tr->numel[k], trail_file(tr, &s.kind[k])) == tr->numel[k];
    if (!ok) fatal("trail: %s ends before step %ld (tests/trails.sh records it again)", tr->path, step + 1);
    if (tr->first >= 0) return;  // the first difference is the one to tell
    char did[200], what[300] = "";
    trail_step_did(&s, tr, did, sizeof did);
    for (int v = 0; v < s.nvalues && !what[0]; v++) {
        double got = state_value_get(&s.value[v]);
        if (got != tr->value[v])
            snprintf(what, sizeof what, "the loss scaler's %s is %g on rank %d, the reference's %g", s.value[v].name,
                     got, rt.rank, tr->value[v]);
    }
    if (!what[0] && adam != ref_adam)
        snprintf(what, sizeof what, "Adam's step count is %ld on rank %d, the reference's %ld", adam, rt.rank, ref_adam);
    // fp32 kinds first: lc5's 16-bit params are rounded from its master, which
    // shows a difference first and unrounded.
    for (int q = 0; q < 2 * s.nkinds && !what[0]; q++) {
        int k = q % s.nkinds;
        if ((q < s.nkinds) != (s.kind[k].dt == DT_F32)) continue;
        const StateKind *K = &s.kind[k];
        for (int l = 0; l < mlp_layers(s.a->layers) && !what[0]; l++) {
            size_t at, first, n = trail_layer(&s, K, l, &at, &first), worst = 0, nans = 0;
            double d2 = 0, r2 = 0, big = -1;
            for (size_t i = 0; i < n; i++) {
                double x = trail_at(K->buf, K->dt, at + i), r = trail_at(tr->ref[k], K->dt, at + i), d = fabs(x - r);
                if (isnan(d)) {  // the first NaN is the one named; it is no distance
                    if (!nans++) worst = i;
                    continue;
                }
                d2 += d * d;
                r2 += r * r;
                if (!nans && d > big) big = d, worst = i;
            }
            double rel = nans ? INFINITY : r2 > 0 ? sqrt(d2 / r2) : d2 > 0 ? INFINITY : 0;
            if (!(rel <= tr->worst)) tr->worst = rel;
            if (!nans && d2 <= tr->tol * tr->tol * r2) continue;
            char el[80];
            trail_element(s.a, l, first + worst, el, sizeof el);
            const char *part = K->sliced && rt.world > 1 ? "slice" : "values";
            double x = trail_at(K->buf, K->dt, at + worst), r = trail_at(tr->ref[k], K->dt, at + worst);
            if (nans && isnan(x))
                snprintf(what, sizeof what, "%s %s is NaN on rank %d, the reference's %.9g (the first NaN of layer %d's "
                         "%s: %zu of its %zu elements)", K->name, el, rt.rank, r, l, part, nans, n);
            else
                snprintf(what, sizeof what, "%s %s is %.9g on rank %d, the reference's %.9g (layer %d's %s %s by %.2e, "
                         "relative L2, %.2g allowed)", K->name, el, x, rt.rank, r, l, part, r2 > 0 ? "off" : "off zero",
                         r2 > 0 ? sqrt(d2 / r2) : sqrt(d2), tr->tol);
        }
    }
    if (!what[0]) return;
    tr->first = step;
    snprintf(tr->why, sizeof tr->why, "the state leaves the reference's at step %ld%.140s: %s", step + 1, did, what);
}

// Collective: the first step (0-based) at which any rank left the reference,
// or -1, with what the lowest such rank saw in why (512 bytes). A run that
// stopped before the reference's did leaves it at the step it did not take.
static inline long trail_close(Trail *tr, char *why) {
    if (tr->f && !tr->record && tr->first < 0 && fgetc(tr->f) != EOF) {
        tr->first = tr->steps;
        snprintf(tr->why, sizeof tr->why, "the run stopped after step %ld; the reference's went on", tr->steps);
    }
    double worst = tr->worst;
    comm_metric_max(&worst, 1);
    if (getenv("ZC_VERBOSE") && rt.rank == 0 && tr->f && !tr->record)
        printf("  trail %s: largest relative distance of a layer from the reference's %.3g\n", tr->path, worst);
    int first = tr->f && !tr->record && tr->first >= 0 ? (int)tr->first : INT32_MAX;
    comm_agree_min(&first);
    snprintf(why, 512, "%s", tr->why);
    int mine = first != INT32_MAX && tr->first == first;
    agree_verdict(!mine, why);
    if (tr->f && fclose(tr->f) != 0 && tr->record) fatal("trail: cannot write %s", tr->path);
    if (tr->w && fclose(tr->w) != 0 && tr->record) fatal("trail: cannot write %s", tr->whole);
    for (int k = 0; k < STATE_MAX_KINDS; k++)
        if (tr->ref[k]) mem_free(tr->ref[k]);
    tr->f = tr->w = NULL;
    return first == INT32_MAX ? -1 : first;
}

#endif
