// manifest: the layout of a training checkpoint, its manifest, and reading any
// range of a layer from the files that hold it.
#include "manifest.h"
#include "mlp.h"
#include "data.h"
#include "file.h"
#include "base.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

static char reason[1024];

#define REFUSE(...) do { snprintf(reason, sizeof reason, __VA_ARGS__); return reason; } while (0)

// ----------------------------------------------------------------------------
// the layout

int manifest_nlayers(const Manifest *m) { return mlp_layers(m->layers); }

void manifest_layer(const Manifest *m, int l, int *out, int *in) {
    mlp_shape(m->context, m->hidden, m->layers, l, out, in);
}

size_t manifest_layer_numel(const Manifest *m, int l) {
    int out, in;
    manifest_layer(m, l, &out, &in);
    return mlp_numel(out, in);
}

// What rank r's file holds of layer l of kind k.
static Range piece(const Manifest *m, int k, int r, int l) {
    int n = m->kind[k].ranks;
    if (n == 1) return r == 0 ? (Range){ 0, manifest_layer_numel(m, l) } : (Range){ 0, 0 };
    return shard_range(manifest_layer_numel(m, l), r, n);
}

size_t manifest_piece_at(const Manifest *m, int k, int r, int l) {
    size_t at = 0;
    for (int i = 0; i < l; i++) at += piece(m, k, r, i).count;
    return at;
}

size_t manifest_tensor_len(const Manifest *m, int k, int r) {
    return manifest_piece_at(m, k, r, manifest_nlayers(m));
}

int manifest_kind(const Manifest *m, const char *name) {
    for (int k = 0; k < m->nkinds; k++)
        if (strcmp(m->kind[k].name, name) == 0) return k;
    return -1;
}

void manifest_rank_file(char *buf, size_t cap, const char *dir, int r) {
    snprintf(buf, cap, "%s/rank-%05d.safetensors", dir, r);
}

void manifest_file(char *buf, size_t cap, const char *dir) { snprintf(buf, cap, "%s/%s", dir, MANIFEST_MANIFEST); }

int manifest_specs(const Manifest *m, int r, StTensor *specs) {
    int n = 0;
    for (int k = 0; k < m->nkinds; k++) {
        if (m->kind[k].ranks == 1 && r != 0) continue;
        StTensor *t = &specs[n++];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "%s", m->kind[k].name);
        snprintf(t->dtype, sizeof t->dtype, "%s", m->kind[k].dtype);
        t->ndim = 1;
        t->shape[0] = (int64_t)manifest_tensor_len(m, k, r);
    }
    return n;
}

// ----------------------------------------------------------------------------
// the manifest: text, one fact per line, so a learner can read it

// 3: the data's fingerprint, and the manifest's own checksum on its last line.
#define MAGIC "zero-course training checkpoint 3"
#define PADDING "segment-padded-to-a-multiple-of-ranks"

// Appends a line to the manifest's text; 0 if it did not fit.
static int put(char *text, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int put(char *text, size_t cap, size_t *len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap - *len) return 0;
    *len += (size_t)n;
    return 1;
}

// The manifest's text, up to its last line, "end" and the checksum of every
// byte before it: a manifest edited by hand (a step, a file's checksum) is
// refused as corrupt, not resumed from a place that does not exist.
static int manifest_text(const Manifest *m, char *t, size_t cap, size_t *n) {
    int ok = put(t, cap, n, "%s\n# written last, after every rank's file: a folder without it is incomplete\n"
                 "stage %s\nranks %d\nstep %ld\nadam_step %ld\nseed %" PRIu64 "\nbatch %d\nexamples %zu\n"
                 "data %016" PRIx64 "\nmodel context %d hidden %d layers %d\n"
                 "# a layer's segment is its weight [out, in] row-major, then its bias; padded to a\n"
                 "# multiple of the ranks that keep a kind, rank r holds slice r\npadding %s\n",
                 MAGIC, m->stage, m->ranks, m->step, m->adam_step, m->seed, m->batch, m->examples, m->data,
                 m->context, m->hidden, m->layers, PADDING);
    size_t psi = 0;
    for (int l = 0; l < manifest_nlayers(m); l++) {
        int out, in;
        manifest_layer(m, l, &out, &in);
        ok &= put(t, cap, n, "layer %d weight %d %d bias %d\n", l, out, in, out);
        psi += manifest_layer_numel(m, l);
    }
    ok &= put(t, cap, n, "psi %zu\n", psi);
    for (int k = 0; k < m->nkinds; k++)
        ok &= put(t, cap, n, "kind %s %s %d\n", m->kind[k].name, m->kind[k].dtype, m->kind[k].ranks);
    for (int v = 0; v < m->nvalues; v++) ok &= put(t, cap, n, "value %s %.17g\n", m->value_name[v], m->value[v]);
    ok &= put(t, cap, n, "# each rank's file: its bytes and its XXH3-64 checksum; then the manifest's own\n");
    for (int r = 0; r < m->ranks; r++)
        ok &= put(t, cap, n, "file rank-%05d.safetensors %" PRIu64 " %016" PRIx64 "\n", r, m->file_size[r],
                  m->file_hash[r]);
    return ok && put(t, cap, n, "end %016" PRIx64 "\n", (uint64_t)XXH3_64bits(t, *n));
}

#define MANIFEST_MAX_BYTES (2048 + 80 * (MANIFEST_MAX_LAYERS + MANIFEST_MAX_RANKS + MANIFEST_MAX_KINDS + MANIFEST_MAX_VALUES))

const char *manifest_write(const Manifest *m, const char *path) {
    static char text[MANIFEST_MAX_BYTES];
    size_t n = 0;
    if (!manifest_text(m, text, sizeof text, &n)) fatal("manifest_write: more than %d bytes", MANIFEST_MAX_BYTES);
    AtomicFile w;
    const char *err = file_begin(&w, path, "checkpoint manifest");
    if (err) return err;
    if (fwrite(text, 1, n, w.f) != n) return file_fail(&w, errno);
    return file_commit(&w);
}

// What the lines read so far said beyond their values: the keys seen (each
// line that names one must come exactly once), the shape's lines (checked
// against the model line), and the checksum of the text before "end".
enum { K_STAGE, K_RANKS, K_STEP, K_ADAM_STEP, K_SEED, K_BATCH, K_EXAMPLES, K_DATA, K_MODEL, K_PADDING, NKEYS };
static const char *const key_name[NKEYS] = { "stage", "ranks", "step", "adam_step", "seed", "batch", "examples",
                                             "data", "model", "padding" };
typedef struct { int files, ended, layers, keys[NKEYS]; size_t psi; FileHash text; uint64_t end; } Seen;

// A line "layer l weight out in bias out" or "psi N": 1 if it agrees with the
// shape given by the model line before it.
static int shape_line(const Manifest *m, const char *s, Seen *seen) {
    int l, out, in, bout, n = 0;
    size_t psi;
    if (sscanf(s, "layer %d weight %d %d bias %d %n", &l, &out, &in, &bout, &n) == 4 && !s[n]) {
        int o, i;
        if (m->context == 0 || l != seen->layers || l >= manifest_nlayers(m)) return 0;
        manifest_layer(m, l, &o, &i);
        seen->layers++;
        return out == o && in == i && bout == o;
    }
    if (sscanf(s, "psi %zu %n", &psi, &n) == 1 && !s[n]) {
        size_t want = 0;
        for (int i = 0; i < manifest_nlayers(m); i++) want += manifest_layer_numel(m, i);
        seen->psi = psi;
        return m->context != 0 && psi == want;
    }
    return -1;
}

// A line "KEY value": its key's index, or -1. A key seen before makes it bad.
static int key_line(const char *s, Seen *seen, int *bad) {
    for (int k = 0; k < NKEYS; k++) {
        size_t n = strlen(key_name[k]);
        if (strncmp(s, key_name[k], n) == 0 && s[n] == ' ') {
            *bad = seen->keys[k]++ > 0;
            return k;
        }
    }
    return -1;
}

// A keyed line's value, parsed into m and range-checked; 0 if it is not one.
static int keyed_line(Manifest *m, const char *s, int key) {
    char a[64], h[32];
    int n = 0;
    switch (key) {
    case K_STAGE: return sscanf(s, "stage %31s %n", m->stage, &n) == 1 && !s[n];
    case K_RANKS: return sscanf(s, "ranks %d %n", &m->ranks, &n) == 1 && !s[n] && m->ranks >= 1 &&
                         m->ranks <= MANIFEST_MAX_RANKS;
    case K_STEP: return sscanf(s, "step %ld %n", &m->step, &n) == 1 && !s[n] && m->step >= 1 &&
                        m->step <= MANIFEST_MAX_STEPS;
    case K_ADAM_STEP: return sscanf(s, "adam_step %ld %n", &m->adam_step, &n) == 1 && !s[n] && m->adam_step >= 0;
    case K_SEED: return sscanf(s, "seed %" SCNu64 " %n", &m->seed, &n) == 1 && !s[n];
    case K_BATCH: return sscanf(s, "batch %d %n", &m->batch, &n) == 1 && !s[n] && m->batch > 0;
    case K_EXAMPLES: return sscanf(s, "examples %zu %n", &m->examples, &n) == 1 && !s[n] && m->examples > 0;
    case K_DATA: return sscanf(s, "data %16[0-9a-f] %n", h, &n) == 1 && !s[n] && strlen(h) == 16 &&
                        (m->data = strtoull(h, NULL, 16), 1);
    case K_MODEL:
        return sscanf(s, "model context %d hidden %d layers %d %n", &m->context, &m->hidden, &m->layers, &n) == 3 &&
               !s[n] && m->context >= 1 && m->context <= 32 && m->hidden >= 1 && m->layers >= 0 &&
               m->layers < MANIFEST_MAX_LAYERS;
    case K_PADDING: return sscanf(s, "padding %63s %n", a, &n) == 1 && !s[n] && strcmp(a, PADDING) == 0;
    }
    return 0;
}

// One line of the manifest, parsed into m; 0 if it is not one.
static int manifest_line(Manifest *m, const char *s, Seen *seen) {
    char b[64];
    int n = 0, r, dup = 0;
    unsigned long long size;
    int key = key_line(s, seen, &dup);
    if (key >= 0) return !dup && keyed_line(m, s, key);
    int shape = shape_line(m, s, seen);
    if (shape >= 0) return shape;
    if (strncmp(s, "kind ", 5) == 0) {
        if (m->nkinds == MANIFEST_MAX_KINDS) return 0;
        ManifestKind *k = &m->kind[m->nkinds];
        if (sscanf(s, "kind %15s %7s %d %n", k->name, k->dtype, &k->ranks, &n) != 3 || s[n] || k->ranks < 1) return 0;
        for (int j = 0; j < m->nkinds; j++)
            if (strcmp(m->kind[j].name, k->name) == 0) return 0;
        m->nkinds++;
        return strcmp(k->dtype, "F32") == 0 || strcmp(k->dtype, "BF16") == 0 || strcmp(k->dtype, "F16") == 0;
    }
    if (strncmp(s, "value ", 6) == 0) {
        if (m->nvalues == MANIFEST_MAX_VALUES) return 0;
        if (sscanf(s, "value %31s %lf %n", m->value_name[m->nvalues], &m->value[m->nvalues], &n) != 2 || s[n])
            return 0;
        for (int j = 0; j < m->nvalues; j++)
            if (strcmp(m->value_name[j], m->value_name[m->nvalues]) == 0) return 0;
        m->nvalues++;
        return 1;
    }
    if (sscanf(s, "file rank-%d.safetensors %llu %16s %n", &r, &size, b, &n) == 3 && !s[n]) {
        if (r != seen->files || r >= MANIFEST_MAX_RANKS || strlen(b) != 16) return 0;
        char *end;
        m->file_hash[r] = strtoull(b, &end, 16);
        m->file_size[r] = size;
        seen->files++;
        return *end == '\0';
    }
    if (sscanf(s, "end %16s %n", b, &n) == 1 && !s[n] && strlen(b) == 16) {
        char *end;
        seen->end = strtoull(b, &end, 16);
        return (seen->ended = 1) && *end == '\0';
    }
    return 0;
}

// The first key with no line, or NULL.
static const char *missing_key(const Seen *seen) {
    for (int k = 0; k < NKEYS; k++)
        if (!seen->keys[k]) return key_name[k];
    return NULL;
}

const char *manifest_read(Manifest *m, const char *path) {
    const char *err = file_check_input(path, "checkpoint manifest");
    if (err) return err;
    FILE *f = fopen(path, "r");
    if (!f) REFUSE("cannot read checkpoint manifest '%s': %s", file_shown(path), strerror(errno));
    memset(m, 0, sizeof *m);
    m->ranks = -1;
    char line[512], older[64] = "";
    int lines = 0, bad = 0;
    static Seen seen;
    static char text[MANIFEST_MAX_BYTES], canon[MANIFEST_MAX_BYTES];  // as read; as this version writes it
    size_t len = 0;
    memset(&seen, 0, sizeof seen);
    file_hash_begin(&seen.text);
    while (!bad && !seen.ended && fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        lines++;
        if (len + n < sizeof text) memcpy(text + len, line, n + 1), len += n;
        else bad = 1;
        if (n == 0 || line[n - 1] != '\n') bad = 1;
        else if (strncmp(line, "end ", 4) != 0) file_hash_add(&seen.text, line, n);
        if (!bad) line[n - 1] = '\0';
        if (bad || (lines > 1 && line[0] == '#')) continue;
        if (lines == 1 && strncmp(line, MAGIC, strlen(MAGIC) - 1) == 0 && strcmp(line, MAGIC) != 0)
            snprintf(older, sizeof older, "%.*s", (int)sizeof older - 1, line);
        bad = lines == 1 ? strcmp(line, MAGIC) != 0 : !manifest_line(m, line, &seen);
    }
    fclose(f);
    if (older[0])
        REFUSE("checkpoint manifest '%s' is from another version of the course ('%s'; this one reads '%s'): "
               "resume with that version, or start again", file_shown(path), file_shown(older), MAGIC);
    if (bad) REFUSE("checkpoint manifest '%s' is corrupt at line %d", file_shown(path), lines);
    if (!seen.ended) REFUSE("checkpoint manifest '%s' is incomplete: it has no 'end' line", file_shown(path));
    if (seen.end != file_hash_value(&seen.text))
        REFUSE("checkpoint manifest '%s' is corrupt: its lines do not match the checksum on its 'end' line (edited "
               "by hand, or damaged)", file_shown(path));
    if (missing_key(&seen))
        REFUSE("checkpoint manifest '%s' is incomplete: it has no '%s' line", file_shown(path), missing_key(&seen));
    if (seen.files != m->ranks || m->nkinds == 0 || seen.layers != manifest_nlayers(m) || seen.psi == 0)
        REFUSE("checkpoint manifest '%s' is incomplete: %d file lines for %d ranks, %d kinds, %d of %d layers",
               file_shown(path), seen.files, m->ranks, m->nkinds, seen.layers, manifest_nlayers(m));
    if (m->adam_step > m->step)
        REFUSE("checkpoint manifest '%s' is corrupt: Adam's step %ld is past the step %ld (a step takes at most one)",
               file_shown(path), m->adam_step, m->step);
    for (int k = 0; k < m->nkinds; k++)
        if (m->kind[k].ranks != 1 && m->kind[k].ranks != m->ranks)
            REFUSE("checkpoint manifest '%s' is corrupt: kind %s over %d ranks of %d", file_shown(path),
                   m->kind[k].name, m->kind[k].ranks, m->ranks);
    // Every line as this version writes it, byte for byte: a number scanf
    // took but did not write (+4, 04, one past the int range that wrapped
    // into it), a space or a carriage return more, a line moved, is refused
    // even with the checksum signed again over it.
    size_t clen = 0;
    if (!manifest_text(m, canon, sizeof canon, &clen) || clen != len || memcmp(canon, text, len) != 0) {
        size_t at = 0;
        int line_no = 1;
        while (at < len && at < clen && text[at] == canon[at]) line_no += text[at++] == '\n';
        size_t from = at;
        while (from > 0 && text[from - 1] != '\n') from--;
        size_t to = from;
        while (to < len && text[to] != '\n') to++;
        char got[128];
        snprintf(got, sizeof got, "%.*s", (int)(to - from < sizeof got ? to - from : sizeof got - 1), text + from);
        REFUSE("checkpoint manifest '%s' is corrupt at line %d: '%s' is not as this version writes it", file_shown(path),
               line_no, file_shown(got));
    }
    return NULL;
}

// ----------------------------------------------------------------------------
// finding a checkpoint

static int exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

long manifest_folder_step(const char *name) {
    char *end;
    if (strlen(name) != 13 || strncmp(name, "step-", 5) != 0 || name[5] < '0' || name[5] > '9') return -1;
    long s = strtol(name + 5, &end, 10);
    return *end == '\0' ? s : -1;
}

int manifest_complete(const char *save_dir, const char *name) {
    char path[4300];
    snprintf(path, sizeof path, "%s/%s/%s", save_dir, name, MANIFEST_MANIFEST);
    return exists(path);
}

// What the step folders of save dir path hold: how many there are, and the
// newest with a manifest (its step, -1 if none is complete). *other counts
// what a save leaves behind besides them: a temporary of the `latest` file.
static long newest_complete(const char *path, int *folders, int *other) {
    long newest = -1;
    *folders = *other = 0;
    DIR *d = opendir(path);
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long s = manifest_folder_step(e->d_name);
        if (s < 0) {
            *other += strncmp(e->d_name, MANIFEST_LATEST ".tmp.", sizeof MANIFEST_LATEST + 4) == 0;
            continue;
        }
        (*folders)++;
        if (manifest_complete(path, e->d_name) && s > newest) newest = s;
    }
    closedir(d);
    return newest;
}

// What the folder at path holds of a checkpoint, looked for in the order a
// resume reads it: its manifest, else its files (then it is incomplete), else
// a 'latest' (even one that points nowhere: that is broken, not absent), else
// step folders or a save's temporaries without a 'latest' (a run whose pointer
// was lost, or that stopped before its first save completed).
typedef enum { HOLDS_MANIFEST, HOLDS_RANK_FILE, HOLDS_LATEST, HOLDS_STEPS, HOLDS_NOTHING } Holds;

static Holds holds(const char *path) {
    char file[4200];
    struct stat sb;
    manifest_file(file, sizeof file, path);
    if (exists(file)) return HOLDS_MANIFEST;
    manifest_rank_file(file, sizeof file, path, 0);
    if (exists(file)) return HOLDS_RANK_FILE;
    snprintf(file, sizeof file, "%s/%s", path, MANIFEST_LATEST);
    if (lstat(file, &sb) == 0 || errno != ENOENT) return HOLDS_LATEST;
    int folders, other;
    newest_complete(path, &folders, &other);
    return folders || other ? HOLDS_STEPS : HOLDS_NOTHING;
}

int manifest_none(const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0) return errno == ENOENT;
    return S_ISDIR(sb.st_mode) && holds(path) == HOLDS_NOTHING;
}

// A save dir without its `latest` file: the newest complete checkpoint there,
// into dir; the refusal names what is there when none is complete.
static const char *locate_newest(const char *path, char *dir, size_t cap) {
    int folders, other;
    long newest = newest_complete(path, &folders, &other);
    if (newest < 0 && folders)
        REFUSE("no complete checkpoint in '%s': its %d step folder%s no manifest (a run stopped while saving) "
               "and there is no '%s' file; move them away to start afresh there", file_shown(path), folders,
               folders == 1 ? " has" : "s have", MANIFEST_LATEST);
    if (newest < 0)
        REFUSE("no checkpoint in '%s', only a temporary file of a save that stopped ('%s.tmp.*'); remove it to "
               "start afresh there", file_shown(path), MANIFEST_LATEST);
    if (snprintf(dir, cap, "%s/step-%08ld", path, newest) >= (int)cap) REFUSE("checkpoint path too long");
    return NULL;
}

const char *manifest_locate(const char *path, char *dir, size_t cap) {
    char file[4200];
    struct stat sb;
    if (stat(path, &sb) != 0) REFUSE("cannot read checkpoint '%s': %s", file_shown(path), strerror(errno));
    if (!S_ISDIR(sb.st_mode)) REFUSE("cannot read checkpoint '%s': not a folder", file_shown(path));
    switch (holds(path)) {
    case HOLDS_MANIFEST: return snprintf(dir, cap, "%s", path) >= (int)cap ? "checkpoint path too long" : NULL;
    case HOLDS_RANK_FILE:
        REFUSE("checkpoint '%s' is incomplete: it has no manifest (the run stopped while saving it), so it is "
               "never loaded", file_shown(path));
    case HOLDS_NOTHING:
        REFUSE("no checkpoint in '%s' (neither a manifest nor a '%s' file)", file_shown(path), MANIFEST_LATEST);
    case HOLDS_STEPS: return locate_newest(path, dir, cap);
    case HOLDS_LATEST: break;
    }
    snprintf(file, sizeof file, "%s/%s", path, MANIFEST_LATEST);
    const char *err = file_check_input(file, "checkpoint pointer");  // before open: a FIFO would block it
    if (err) return err;
    FILE *f = fopen(file, "r");
    if (!f) REFUSE("cannot read checkpoint pointer '%s': %s", file_shown(file), strerror(errno));
    char name[64] = "";
    int ok = fscanf(f, "%63s", name) == 1 && strncmp(name, "step-", 5) == 0 && !strchr(name, '/');
    fclose(f);
    if (!ok) REFUSE("no checkpoint in '%s': its '%s' file is corrupt", file_shown(path), MANIFEST_LATEST);
    if (snprintf(dir, cap, "%s/%s", path, name) >= (int)cap) REFUSE("checkpoint path too long");
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        REFUSE("no checkpoint in '%s': its '%s' file names %s, which is not a folder there", file_shown(path),
               MANIFEST_LATEST, name);
    manifest_file(file, sizeof file, dir);
    if (!exists(file))
        REFUSE("checkpoint '%s' is incomplete: it has no manifest, so it is never loaded", file_shown(dir));
    return NULL;
}

// ----------------------------------------------------------------------------
// reading

void manifest_reader(ManifestReader *r, const Manifest *m, const char *dir) {
    memset(r, 0, sizeof *r);
    r->m = m;
    r->dir = dir;
    r->open = -1;
}

// Opens rank s's file, checked against the manifest the first time.
static const char *open_file(ManifestReader *r, int s) {
    if (r->open == s) return NULL;
    manifest_reader_close(r);
    char path[4200];
    manifest_rank_file(path, sizeof path, r->dir, s);
    if (!r->checked[s]) {
        uint64_t size, hash;
        const char *err = file_digest(path, "checkpoint file", &size, &hash);
        if (err) return err;
        if (size != r->m->file_size[s] || hash != r->m->file_hash[s])
            REFUSE("checkpoint file '%s' is corrupt: %" PRIu64 " bytes with checksum %016" PRIx64 ", the manifest "
                   "says %" PRIu64 " bytes, %016" PRIx64, file_shown(path), size, hash, r->m->file_size[s],
                   r->m->file_hash[s]);
        r->checked[s] = 1;
    }
    const char *err = st_open(&r->c, path);
    if (err) return err;
    r->open = s;
    return NULL;
}

const char *manifest_reader_read(ManifestReader *r, int k, int l, size_t first, size_t count, void *dst) {
    const Manifest *m = r->m;
    const ManifestKind *K = &m->kind[k];
    size_t size = st_dtype_bytes(K->dtype), end = first + count;
    for (int s = 0; s < K->ranks; s++) {
        Range p = piece(m, k, s, l);
        size_t a = first > p.first ? first : p.first, b = end < p.first + p.count ? end : p.first + p.count;
        if (a >= b) continue;
        const char *err = open_file(r, s);
        if (err) return err;
        int64_t len = (int64_t)manifest_tensor_len(m, k, s);
        err = st_read_dtype(&r->c, K->name, K->dtype, 1, &len, manifest_piece_at(m, k, s, l) + (a - p.first),
                              b - a, (char *)dst + (a - first) * size);
        if (err) return err;
    }
    return NULL;
}

void manifest_reader_close(ManifestReader *r) {
    if (r->open >= 0) st_close(&r->c);
    r->open = -1;
}
