// checkpoint: saving and resuming a stage's training state, on every rank.
#include "checkpoint.h"
#include "base.h"
#include "clock.h"
#include "comm.h"
#include "env.h"
#include "file.h"
#include "print.h"
#include "rt.h"
#include "manifest.h"
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char reason[1024];

#define REFUSE(...) do { snprintf(reason, sizeof reason, __VA_ARGS__); return reason; } while (0)

// ----------------------------------------------------------------------------
// describing the state

void state_begin(TrainState *s, const char *stage, const Args *a, const Data *data, long *adam_step) {
    memset(s, 0, sizeof *s);
    s->stage = stage;
    s->a = a;
    s->data = data;
    s->adam_step = adam_step;
}

void state_add(TrainState *s, const char *name, void *buf, DType dt, int sliced) {
    if (s->nkinds == STATE_MAX_KINDS) fatal("state_add: more than %d kinds of state", STATE_MAX_KINDS);
    s->kind[s->nkinds++] = (StateKind){ name, buf, dt, sliced };
}

void state_value_at(TrainState *s, const char *name, void *p, StateValueType type, double lo, double hi) {
    if (s->nvalues == STATE_MAX_VALUES) fatal("state_value: more than %d values", STATE_MAX_VALUES);
    s->value[s->nvalues++] = (StateValue){ name, p, type, lo, hi };
}

double state_value_get(const StateValue *v) {
    return v->type == SV_INT ? *(int *)v->p : v->type == SV_LONG ? (double)*(long *)v->p : *(float *)v->p;
}

static void value_set(const StateValue *v, double x) {
    if (v->type == SV_INT) *(int *)v->p = (int)x;
    else if (v->type == SV_LONG) *(long *)v->p = (long)x;
    else *(float *)v->p = (float)x;
}

static const char *st_dtype(DType dt) { return dt == DT_BF16 ? "BF16" : dt == DT_F16 ? "F16" : "F32"; }

// The manifest that describes s at this N (files not yet filled in).
static void manifest_of(const TrainState *s, Manifest *m) {
    memset(m, 0, sizeof *m);
    snprintf(m->stage, sizeof m->stage, "%s", s->stage);
    m->ranks = rt.world;
    m->step = s->step;
    m->adam_step = *s->adam_step;
    m->seed = s->a->seed;
    m->batch = s->a->batch;
    m->examples = s->data->n;
    m->data = s->data->fingerprint;
    m->context = s->a->context;
    m->hidden = s->a->hidden;
    m->layers = s->a->layers;
    m->nkinds = s->nkinds;
    for (int k = 0; k < s->nkinds; k++) {
        snprintf(m->kind[k].name, sizeof m->kind[k].name, "%s", s->kind[k].name);
        snprintf(m->kind[k].dtype, sizeof m->kind[k].dtype, "%s", st_dtype(s->kind[k].dt));
        m->kind[k].ranks = s->kind[k].sliced ? rt.world : 1;
    }
    m->nvalues = s->nvalues;
    for (int v = 0; v < s->nvalues; v++) {
        snprintf(m->value_name[v], sizeof m->value_name[0], "%s", s->value[v].name);
        m->value[v] = state_value_get(&s->value[v]);
    }
}

// What this rank holds of layer l of kind k, and where in its buffer
// (elements): the layer whole at the sum of the segments before it, or this
// rank's slice at the sum of the slices before it.
static Range own_range(const Manifest *m, const StateKind *K, int l, size_t *at) {
    *at = 0;
    for (int i = 0; i < l; i++) {
        size_t n = manifest_layer_numel(m, i);
        *at += K->sliced ? shard_len(n, rt.world) : n;
    }
    size_t n = manifest_layer_numel(m, l);
    return K->sliced ? shard_range(n, rt.rank, rt.world) : (Range){ 0, n };
}

// ----------------------------------------------------------------------------
// saving

static struct {
    int saves;
    double seconds;          // all saves, this rank
    uint64_t bytes;          // this rank's file, the last save
    char kinds[256];         // what a rank saves, in Ψ
} stats;

static int checkpoint_due(const Args *a, long done) {
    return a->save_dir && ((a->save_every > 0 && done % a->save_every == 0) || done == a->steps);
}

static const char *make_folder(const char *path) {
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        REFUSE("cannot create checkpoint folder '%s': %s", file_shown(path), strerror(errno));
    return NULL;
}

// 1 if path is a folder itself, not a link to one.
static int plain_folder(const char *path) {
    struct stat sb;
    return lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

// Removes the temporary files in folder dir that a write of one of its files
// left when its process was killed (`latest.tmp.PID.N`, `rank-00000.safetensors.tmp.PID.N`).
static void remove_temporaries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[4600];
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        int ours = file_is_temporary(n, MANIFEST_LATEST) || file_is_temporary(n, MANIFEST_MANIFEST) ||
                   (strncmp(n, "rank-", 5) == 0 && strstr(n, ".safetensors.tmp."));
        if (ours && snprintf(path, sizeof path, "%s/%s", dir, n) < (int)sizeof path) unlink(path);
    }
    closedir(d);
}

// Rank 0, before any rank writes: the folders exist (the step's a folder of
// the save dir, not a link out of it), a manifest left from an earlier save of
// the same step is gone (its files are about to change), and so are the
// temporary files of saves that were killed.
static const char *prepare(const char *save_dir, const char *dir) {
    const char *err = make_folder(save_dir);
    if (!err) err = make_folder(dir);
    if (err) return err;
    if (!plain_folder(dir))
        REFUSE("cannot write checkpoint folder '%s': not a folder (a link or a file; a save never writes outside "
               "--save-dir)", file_shown(dir));
    remove_temporaries(save_dir);
    remove_temporaries(dir);
    char path[4300];
    manifest_file(path, sizeof path, dir);
    if (unlink(path) != 0 && errno != ENOENT)
        REFUSE("cannot replace checkpoint manifest '%s': %s", file_shown(path), strerror(errno));
    return NULL;
}

// This rank's file: its pieces of every kind, layer by layer.
static const char *write_own(const TrainState *s, const Manifest *m, const char *dir, StWriter *w) {
    static StTensor specs[STATE_MAX_KINDS];
    char path[4300];
    manifest_rank_file(path, sizeof path, dir, rt.rank);
    const char *err = st_create(w, path, manifest_specs(m, rt.rank, specs), specs);
    for (int k = 0; k < s->nkinds && !err; k++) {
        const StateKind *K = &s->kind[k];
        if (!K->sliced && rt.rank != 0) continue;
        size_t size = dtype_size(K->dt);
        for (int l = 0; l < manifest_nlayers(m) && !err; l++) {
            size_t at;
            Range own = own_range(m, K, l, &at);
            const void *src = (const char *)K->buf + at * size;
            err = K->dt == DT_F32 ? st_append(w, src, own.count) : st_append_bytes(w, src, own.count * size);
        }
    }
    return err ? err : st_finish(w);
}

// Removes one checkpoint folder: the files a save writes, then the folder (a
// folder holding anything else is left, with a note).
static void remove_folder(const char *save_dir, const char *name) {
    char dir[4300], path[4600];
    snprintf(dir, sizeof dir, "%s/%s", save_dir, name);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, MANIFEST_MANIFEST) == 0 || strstr(e->d_name, ".tmp.") ||
            (strncmp(e->d_name, "rank-", 5) == 0 && strstr(e->d_name, ".safetensors"))) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    if (rmdir(dir) != 0) fprintf(stderr, "%s: note: kept '%s': %s\n", rt.prog, file_shown(dir), strerror(errno));
}

// The step of a checkpoint folder of save_dir: a folder named step-NNNNNNNN,
// not a link (pruning never follows one out of the save dir); -1 otherwise.
static long own_folder_step(const char *save_dir, const char *name) {
    char path[4300];
    long s = manifest_folder_step(name);
    snprintf(path, sizeof path, "%s/%s", save_dir, name);
    return s >= 0 && plain_folder(path) ? s : -1;
}

// Keeps the checkpoint just saved and the newest complete one before it;
// removes every older folder, complete or not. Later steps (another run's) are
// left alone.
static void prune(const char *save_dir, long step) {
    DIR *d = opendir(save_dir);
    if (!d) return;
    long prev = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long s = own_folder_step(save_dir, e->d_name);
        if (s >= 0 && s < step && s > prev && manifest_complete(save_dir, e->d_name)) prev = s;
    }
    rewinddir(d);
    char doomed[64][16];
    int n = 0;
    while ((e = readdir(d)) != NULL && n < 64) {
        long s = own_folder_step(save_dir, e->d_name);
        if (s >= 0 && s < step && s != prev) memcpy(doomed[n++], e->d_name, 14);  // 13 characters and a NUL
    }
    closedir(d);
    for (int i = 0; i < n; i++) {
        if (!manifest_complete(save_dir, doomed[i]))  // never without a word: it was a run's, once
            fprintf(stderr, "%s: note: removed '%s/%s', an incomplete checkpoint (no manifest) older than the "
                    "one just saved\n", rt.prog, file_shown(save_dir), doomed[i]);
        remove_folder(save_dir, doomed[i]);
    }
    char kept[4300];
    if (prev >= 0 && snprintf(kept, sizeof kept, "%s/step-%08ld", save_dir, prev) < (int)sizeof kept)
        remove_temporaries(kept);  // a kill while it was saved left them
}

// Rank 0, once every file is written: the manifest, then `latest`.
static const char *commit(Manifest *m, const char *save_dir, const char *dir, const char *name) {
    char path[4300];
    manifest_file(path, sizeof path, dir);
    const char *err = manifest_write(m, path);
    if (err) return err;
    snprintf(path, sizeof path, "%s/%s", save_dir, MANIFEST_LATEST);
    AtomicFile w;
    if ((err = file_begin_here(&w, path, "checkpoint pointer")) != NULL) return err;  // a link there is replaced
    if (fprintf(w.f, "%s\n", name) < 0) return file_fail(&w, errno);
    return file_commit(&w);
}

// Collective: if any rank failed to write its part of checkpoint `name` (err:
// this rank's reason), rank 0 removes the folder, which no manifest makes
// loadable, and every rank stops (exit 1) with the first reason. The previous
// checkpoint and `latest` stay as they were.
static void failed_save(const char *save_dir, const char *name, const char *err) {
    double failed = err != NULL;
    comm_metric_max(&failed, 1);
    if (failed && rt.rank == 0) remove_folder(save_dir, name);
    agree_exit(err, 1);
}

// What a rank saves, per kind, as a multiple of Ψ: "params 4Ψ (rank 0), m 4Ψ/N".
static void describe_kinds(const TrainState *s) {
    size_t len = 0;
    stats.kinds[0] = '\0';
    for (int k = 0; k < s->nkinds && len < sizeof stats.kinds; k++)
        len += (size_t)snprintf(stats.kinds + len, sizeof stats.kinds - len, "%s%s %zuΨ%s", k ? ", " : "",
                                s->kind[k].name, dtype_size(s->kind[k].dt),
                                s->kind[k].sliced ? "/N" : " (rank 0)");
}

// ZC_CKPT_KILL_AT=STEP (for the tests): rank 0 dies of SIGKILL when the files
// of that step's checkpoint are complete and its manifest is not yet written,
// the moment a crash would leave an incomplete checkpoint behind.
static void killed_here(long step) {
    if (rt.rank == 0 && env_number("ZC_CKPT_KILL_AT", -1) == step) raise(SIGKILL);
}

static void checkpoint_save(const TrainState *s) {
    static Manifest m;
    static StWriter w;
    static double files[3 * MANIFEST_MAX_RANKS];  // per rank: size, checksum's high and low 32 bits
    if (rt.world > MANIFEST_MAX_RANKS) fatal("checkpoints: more than %d ranks", MANIFEST_MAX_RANKS);
    double t0 = now_s();
    const char *save_dir = s->a->save_dir;
    char name[32], dir[4200];
    snprintf(name, sizeof name, "step-%08ld", s->step);
    snprintf(dir, sizeof dir, "%s/%s", save_dir, name);
    manifest_of(s, &m);
    agree_exit(rt.rank == 0 ? prepare(save_dir, dir) : NULL, 1);
    failed_save(save_dir, name, write_own(s, &m, dir, &w));
    memset(files, 0, sizeof(double) * 3 * (size_t)rt.world);
    files[3 * rt.rank] = (double)w.size;
    uint64_t hash = file_hash_value(&w.hash);
    files[3 * rt.rank + 1] = (double)(hash >> 32);
    files[3 * rt.rank + 2] = (double)(hash & 0xffffffffu);
    comm_metric_sum(files, 3 * rt.world);  // every file is complete: the manifest may say so
    for (int r = 0; r < rt.world; r++) {
        m.file_size[r] = (uint64_t)files[3 * r];
        m.file_hash[r] = (uint64_t)files[3 * r + 1] << 32 | (uint64_t)files[3 * r + 2];
    }
    killed_here(s->step);
    failed_save(save_dir, name, rt.rank == 0 ? commit(&m, save_dir, dir, name) : NULL);
    if (rt.rank == 0) prune(save_dir, s->step);
    double dt = now_s() - t0;
    stats.saves++;
    stats.seconds += dt;
    stats.bytes = w.size;
    describe_kinds(s);
    print0("checkpoint %s: %d file%s and a manifest, %s on rank 0, %.1f ms\n", dir, rt.world,
           rt.world > 1 ? "s" : "", human_bytes((double)w.size), 1e3 * dt);
}

void checkpoint_save_if_due(const Args *a, long done, DescribeState describe, void *trainer) {
    if (!checkpoint_due(a, done)) return;
    TrainState s;
    describe(trainer, &s);
    s.step = done;
    checkpoint_save(&s);
    progress_checkpointed(done);
}

void checkpoint_report(void) {
    double v[3] = { (double)stats.saves, (double)stats.bytes, stats.saves ? stats.seconds / stats.saves : 0 };
    double total = (double)stats.bytes;
    comm_metric_max(v, 3);
    comm_metric_sum(&total, 1);
    if (v[0] == 0) return;
    print0("checkpoints: %.0f saved | %s per rank at most, %s in all: %s | %.1f ms per save (slowest rank)\n",
           v[0], human_bytes(v[1]), human_bytes(total), stats.kinds, 1e3 * v[2]);
}

// ----------------------------------------------------------------------------
// resuming

// Why this run cannot continue from the checkpoint in dir, or NULL.
static const char *incompatible(const Manifest *m, const TrainState *s, const char *dir) {
    const Args *a = s->a;
    const char *shown = file_shown(dir);
    if (m->context != a->context || m->hidden != a->hidden || m->layers != a->layers)
        REFUSE("checkpoint '%s' is of another model: --context %d --hidden %d --layers %d (this run: %d, %d, %d)",
               shown, m->context, m->hidden, m->layers, a->context, a->hidden, a->layers);
    if (m->examples != s->data->n || m->data != s->data->fingerprint)
        REFUSE("checkpoint '%s' was trained on another data set (%zu examples, fingerprint %016" PRIx64 "; --data "
               "gives %zu, %016" PRIx64 "): the data order would not continue", shown, m->examples, m->data,
               s->data->n, s->data->fingerprint);
    if (m->seed != a->seed)
        REFUSE("checkpoint '%s' was saved with --seed %" PRIu64 "; this run has %" PRIu64 ": the data order would "
               "not continue", shown, m->seed, a->seed);
    if (m->batch != a->batch)
        REFUSE("checkpoint '%s' was saved with --batch %d; this run has %d: the data order would not continue",
               shown, m->batch, a->batch);
    for (int k = 0; k < s->nkinds; k++) {
        int i = manifest_kind(m, s->kind[k].name);
        char held[128] = "";
        for (int j = 0; j < m->nkinds; j++)
            snprintf(held + strlen(held), sizeof held - strlen(held), "%s%s", j ? ", " : "", m->kind[j].name);
        if (i < 0)
            REFUSE("checkpoint '%s' was saved by %s and holds %s, not '%s': %s cannot resume it (consolidate it and "
                   "start from the model with --init)", shown, m->stage, held, s->kind[k].name, s->stage);
        if (strcmp(m->kind[i].dtype, st_dtype(s->kind[k].dt)) != 0)
            REFUSE("checkpoint '%s' holds '%s' as %s; this run keeps it as %s (--dtype): %s cannot resume it",
                   shown, s->kind[k].name, m->kind[i].dtype, st_dtype(s->kind[k].dt), s->stage);
    }
    for (int v = 0; v < s->nvalues; v++) {
        const StateValue *V = &s->value[v];
        int j = 0;
        while (j < m->nvalues && strcmp(m->value_name[j], V->name) != 0) j++;
        if (j == m->nvalues)
            REFUSE("checkpoint '%s' was saved by %s, which keeps no '%s': %s cannot resume it", shown, m->stage,
                   V->name, s->stage);
        double x = m->value[j];
        if (!(x >= V->lo && x <= V->hi) || (V->type != SV_FLOAT && x != floor(x)))
            REFUSE("checkpoint '%s' holds %s %.17g: this run accepts %s %sin [%.17g, %.17g]", shown, V->name, x,
                   V->name, V->type == SV_FLOAT ? "" : "a whole number ", V->lo, V->hi);
    }
    if (m->step >= a->steps)
        REFUSE("checkpoint '%s' is at step %ld: --steps %ld leaves nothing to train", shown, m->step, a->steps);
    return NULL;
}

// Every rank reads its range of every layer of every kind.
static const char *read_own(const Manifest *m, const TrainState *s, const char *dir) {
    static ManifestReader r;
    manifest_reader(&r, m, dir);
    const char *err = NULL;
    for (int k = 0; k < s->nkinds && !err; k++) {
        const StateKind *K = &s->kind[k];
        for (int l = 0; l < manifest_nlayers(m) && !err; l++) {
            size_t at;
            Range own = own_range(m, K, l, &at);
            err = manifest_reader_read(&r, manifest_kind(m, K->name), l, own.first, own.count,
                              (char *)K->buf + at * dtype_size(K->dt));
        }
    }
    manifest_reader_close(&r);
    return err;
}

long checkpoint_resume(DescribeState describe, void *trainer) {
    static Manifest m;
    static char dir[4200];
    char path[4300];
    TrainState s;
    describe(trainer, &s);
    const char *err = manifest_locate(s.a->resume, dir, sizeof dir);
    if (!err) {
        manifest_file(path, sizeof path, dir);
        err = manifest_read(&m, path);
    }
    if (!err) err = incompatible(&m, &s, dir);
    agree_input(err);
    agree_input(read_own(&m, &s, dir));
    *s.adam_step = m.adam_step;
    for (int v = 0; v < s.nvalues; v++)
        for (int j = 0; j < m.nvalues; j++)
            if (strcmp(m.value_name[j], s.value[v].name) == 0) value_set(&s.value[v], m.value[j]);
    print0("resumed from %s: saved by %s at %d rank%s, step %ld%s\n", dir, m.stage, m.ranks, m.ranks > 1 ? "s" : "",
           m.step, m.ranks != rt.world ? " (resharded: every rank read its new slices from the files that hold them)"
                                       : "");
    return m.step;
}
