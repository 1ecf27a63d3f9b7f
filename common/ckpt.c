// ckpt: safetensors writing and a strict, bounds-checked reader.
#include "ckpt.h"
#include "mem.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_HEADER (16u << 20)
static char reason[512];

#define REFUSE(...) do { snprintf(reason, sizeof reason, __VA_ARGS__); return reason; } while (0)

static uint64_t numel(const CkptTensor *t) {
    uint64_t n = 1;
    for (int d = 0; d < t->ndim; d++) n *= (uint64_t)t->shape[d];
    return n;
}

static size_t dtype_bytes(const char *dt) {
    static const struct { const char *name; size_t size; } known[] = {
        { "F64", 8 }, { "F32", 4 }, { "F16", 2 }, { "BF16", 2 }, { "I64", 8 }, { "I32", 4 },
        { "I16", 2 }, { "I8", 1 }, { "U8", 1 }, { "BOOL", 1 },
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i].name, dt) == 0) return known[i].size;
    return 0;
}

// ----------------------------------------------------------------------------
// a JSON reader for the header: only what safetensors uses, every read bounded

typedef struct { const char *s, *end; int depth; } Json;

static void ws(Json *j) {
    while (j->s < j->end && (*j->s == ' ' || *j->s == '\t' || *j->s == '\n' || *j->s == '\r')) j->s++;
}

static int eat(Json *j, char c) {
    ws(j);
    if (j->s < j->end && *j->s == c) { j->s++; return 1; }
    return 0;
}

// A string into out (raw, escapes kept as written); 0 if malformed or too long.
static int str(Json *j, char *out, size_t cap) {
    if (!eat(j, '"')) return 0;
    size_t n = 0;
    while (j->s < j->end && *j->s != '"') {
        if (*j->s == '\\') {
            if (j->end - j->s < 2) return 0;
            if (out && n + 1 < cap) out[n++] = *j->s;
            j->s++;
        }
        if ((unsigned char)*j->s < 0x20) return 0;
        if (out) {
            if (n + 1 >= cap) return 0;
            out[n++] = *j->s;
        }
        j->s++;
    }
    if (j->s >= j->end) return 0;
    j->s++;
    if (out) out[n] = '\0';
    return 1;
}

static int uint(Json *j, uint64_t *v) {
    ws(j);
    const char *p = j->s;
    uint64_t x = 0;
    while (j->s < j->end && *j->s >= '0' && *j->s <= '9') {
        unsigned dgt = (unsigned)(*j->s++ - '0');
        if (x > (UINT64_MAX - dgt) / 10) return 0;
        x = x * 10 + dgt;
    }
    *v = x;
    return j->s > p;
}

static int skip_value(Json *j) {
    ws(j);
    if (j->s >= j->end || ++j->depth > 32) return 0;
    int ok = 1;
    if (*j->s == '"') ok = str(j, NULL, 0);
    else if (*j->s == '{' || *j->s == '[') {
        char close = *j->s == '{' ? '}' : ']';
        int obj = close == '}';
        j->s++;
        if (!eat(j, close)) {
            do {
                if (obj && !(str(j, NULL, 0) && eat(j, ':'))) return 0;
                if (!skip_value(j)) return 0;
            } while (eat(j, ','));
            ok = eat(j, close);
        }
    } else {
        const char *p = j->s;
        while (j->s < j->end && (strchr("+-.eE", *j->s) || (*j->s >= '0' && *j->s <= '9') ||
                                 (*j->s >= 'a' && *j->s <= 'z')))
            j->s++;
        ok = j->s > p;
    }
    j->depth--;
    return ok;
}

static int uint_array(Json *j, uint64_t *v, int cap, int *n) {
    *n = 0;
    if (!eat(j, '[')) return 0;
    if (eat(j, ']')) return 1;
    do {
        if (*n >= cap || !uint(j, &v[*n])) return 0;
        (*n)++;
    } while (eat(j, ','));
    return eat(j, ']');
}

static int tensor_entry(Json *j, CkptTensor *t) {
    int have_dtype = 0, have_shape = 0, have_offsets = 0;
    if (!eat(j, '{')) return 0;
    do {
        char key[32];
        if (!str(j, key, sizeof key) || !eat(j, ':')) return 0;
        if (strcmp(key, "dtype") == 0) have_dtype = str(j, t->dtype, sizeof t->dtype);
        else if (strcmp(key, "shape") == 0) {
            uint64_t s[CKPT_MAX_DIMS];
            if (!uint_array(j, s, CKPT_MAX_DIMS, &t->ndim)) return 0;
            for (int d = 0; d < t->ndim; d++) {
                if (s[d] > (1ull << 40)) return 0;
                t->shape[d] = (int64_t)s[d];
            }
            have_shape = 1;
        } else if (strcmp(key, "data_offsets") == 0) {
            uint64_t o[2];
            int n = 0;
            if (!uint_array(j, o, 2, &n) || n != 2) return 0;
            t->begin = o[0];
            t->end = o[1];
            have_offsets = 1;
        } else if (!skip_value(j)) return 0;
    } while (eat(j, ','));
    return eat(j, '}') && have_dtype && have_shape && have_offsets;
}

// ----------------------------------------------------------------------------
// reading

static const char *parse_header(Ckpt *c, const char *h, uint64_t len, uint64_t data_len) {
    Json j = { h, h + len, 0 };
    if (!eat(&j, '{')) REFUSE("%s: header is not a JSON object", c->path);
    if (!eat(&j, '}')) {
        do {
            char name[CKPT_MAX_NAME];
            if (!str(&j, name, sizeof name) || !eat(&j, ':'))
                REFUSE("%s: garbled header (bad or too long tensor name)", c->path);
            if (strcmp(name, "__metadata__") == 0) {
                if (!skip_value(&j)) REFUSE("%s: garbled header (__metadata__)", c->path);
                continue;
            }
            if (c->n == CKPT_MAX_TENSORS) REFUSE("%s: more than %d tensors", c->path, CKPT_MAX_TENSORS);
            CkptTensor *t = &c->t[c->n];
            memset(t, 0, sizeof *t);
            strcpy(t->name, name);
            if (!tensor_entry(&j, t)) REFUSE("%s: garbled header entry for tensor '%s'", c->path, name);
            size_t esz = dtype_bytes(t->dtype);
            if (!esz) REFUSE("%s: tensor '%s' has unknown dtype '%s'", c->path, name, t->dtype);
            if (t->begin > t->end || t->end > data_len)
                REFUSE("%s: tensor '%s' lies outside the file (truncated?)", c->path, name);
            if (t->end - t->begin != numel(t) * esz)
                REFUSE("%s: tensor '%s' byte range does not match its shape", c->path, name);
            for (int k = 0; k < c->n; k++)
                if (strcmp(c->t[k].name, name) == 0) REFUSE("%s: tensor '%s' appears twice", c->path, name);
            c->n++;
        } while (eat(&j, ','));
        if (!eat(&j, '}')) REFUSE("%s: garbled header (expected , or })", c->path);
    }
    ws(&j);
    if (j.s != j.end) REFUSE("%s: garbled header (text after the JSON object)", c->path);
    // The data section must be covered exactly: no overlaps, no holes.
    uint64_t covered = 0;
    for (int k = 0; k < c->n; k++) {
        covered += c->t[k].end - c->t[k].begin;
        for (int m = 0; m < k; m++)
            if (c->t[k].begin < c->t[m].end && c->t[m].begin < c->t[k].end &&
                c->t[k].end > c->t[k].begin)
                REFUSE("%s: tensors '%s' and '%s' overlap", c->path, c->t[m].name, c->t[k].name);
    }
    if (covered != data_len) REFUSE("%s: data section has %llu bytes, tensors cover %llu", c->path,
                                     (unsigned long long)data_len, (unsigned long long)covered);
    return NULL;
}

const char *ckpt_open(Ckpt *c, const char *path) {
    memset(c, 0, sizeof *c);
    c->path = path;
    c->f = fopen(path, "rb");
    if (!c->f) REFUSE("cannot open model file '%s': %s", path, strerror(errno));
    unsigned char len8[8];
    struct stat sb;
    long size = fstat(fileno(c->f), &sb) == 0 && S_ISREG(sb.st_mode) ? (long)sb.st_size : -1;
    const char *err = NULL;
    static char header[MAX_HEADER + 1];  // bookkeeping, not a model buffer
    uint64_t hlen = 0;
    if (size < 0) {
        snprintf(reason, sizeof reason, "%s: not a regular file", path);
        err = reason;
    } else if (size < 8 || fread(len8, 1, 8, c->f) != 8) {
        snprintf(reason, sizeof reason, "%s: too short to be safetensors (truncated?)", path);
        err = reason;
    } else {
        for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | len8[i];
        if (hlen < 2 || hlen > MAX_HEADER || hlen > (uint64_t)size - 8) {
            snprintf(reason, sizeof reason, "%s: header length %llu is impossible for a %ld-byte file",
                     path, (unsigned long long)hlen, size);
            err = reason;
        } else if (fread(header, 1, hlen, c->f) != hlen) {
            snprintf(reason, sizeof reason, "%s: cannot read header", path);
            err = reason;
        } else {
            c->data_start = 8 + hlen;
            err = parse_header(c, header, hlen, (uint64_t)size - c->data_start);
        }
    }
    if (err) ckpt_close(c);
    return err;
}

// fread or fwrite of count floats at buf, which may be GPU memory: that goes
// through a host buffer, a chunk at a time. Returns the count moved.
#define CHUNK ((size_t)1 << 20)

static size_t move_floats(float *buf, size_t count, FILE *f, int writing) {
    if (!mem_is_gpu(buf)) return writing ? fwrite(buf, 4, count, f) : fread(buf, 4, count, f);
    float *tmp = mem_alloc_host(MEM_DATA, (count < CHUNK ? count : CHUNK) * 4);
    size_t done = 0;
    while (done < count) {
        size_t n = count - done < CHUNK ? count - done : CHUNK;
        if (writing) mem_copy(tmp, buf + done, n * 4);
        if ((writing ? fwrite(tmp, 4, n, f) : fread(tmp, 4, n, f)) != n) break;
        if (!writing) mem_copy(buf + done, tmp, n * 4);
        done += n;
    }
    mem_free(tmp);
    return done;
}

const char *ckpt_read(Ckpt *c, const char *name, int ndim, const int64_t *shape,
                      size_t first, size_t count, float *dst) {
    const CkptTensor *t = NULL;
    for (int k = 0; k < c->n && !t; k++)
        if (strcmp(c->t[k].name, name) == 0) t = &c->t[k];
    if (!t) REFUSE("%s: no tensor named '%s'", c->path, name);
    if (strcmp(t->dtype, "F32") != 0) REFUSE("%s: tensor '%s' is %s, expected F32", c->path, name, t->dtype);
    int same = t->ndim == ndim;
    for (int d = 0; d < ndim && same; d++) same = t->shape[d] == shape[d];
    if (!same) {
        char got[96] = "", want[96] = "";
        for (int d = 0; d < t->ndim; d++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? "," : "", (long long)t->shape[d]);
        for (int d = 0; d < ndim; d++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d ? "," : "", (long long)shape[d]);
        REFUSE("%s: tensor '%s' has shape [%s], expected [%s]", c->path, name, got, want);
    }
    if (first > numel(t) || count > numel(t) - first)
        REFUSE("%s: read past the end of tensor '%s'", c->path, name);
    if (fseek(c->f, (long)(c->data_start + t->begin + first * 4), SEEK_SET) != 0 ||
        move_floats(dst, count, c->f, 0) != count)
        REFUSE("%s: cannot read tensor '%s'", c->path, name);
    return NULL;
}

void ckpt_close(Ckpt *c) {
    if (c->f) fclose(c->f);
    c->f = NULL;
}

// ----------------------------------------------------------------------------
// the course's models: Linear layers

void ckpt_linear_specs(CkptTensor specs[2], int l, int out, int in) {
    for (int w = 0; w < 2; w++) {
        CkptTensor *t = &specs[w];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "layers.%d.%s", l, w ? "bias" : "weight");
        strcpy(t->dtype, "F32");
        t->ndim = w ? 1 : 2;
        t->shape[0] = out;
        t->shape[1] = w ? 0 : in;
    }
}

const char *ckpt_open_model(Ckpt *c, const char *path, int nlayers) {
    const char *err = ckpt_open(c, path);
    if (err) return err;
    if (c->n == 2 * nlayers) return NULL;
    ckpt_close(c);
    REFUSE("%s: has %d tensors, this model has %d", path, c->n, 2 * nlayers);
}

const char *ckpt_read_layer(Ckpt *c, int l, int out, int in, size_t first, size_t count,
                            float *dst) {
    CkptTensor t[2];
    ckpt_linear_specs(t, l, out, in);
    size_t nw = (size_t)out * (size_t)in, end = first + count;
    for (int w = 0; w < 2; w++) {
        size_t lo = w ? nw : 0, hi = w ? nw + (size_t)out : nw;  // the tensor's range in the segment
        size_t a = first > lo ? first : lo, b = end < hi ? end : hi;
        if (a >= b) continue;
        const char *err = ckpt_read(c, t[w].name, t[w].ndim, t[w].shape, a - lo, b - a, dst + (a - first));
        if (err) return err;
    }
    return NULL;
}

// ----------------------------------------------------------------------------
// writing

const char *ckpt_create(CkptWriter *w, const char *path, int n, const CkptTensor *specs) {
    static char header[MAX_HEADER];
    size_t len = 0;
    uint64_t off = 0;
    memset(w, 0, sizeof *w);
    w->path = path;
    len += (size_t)snprintf(header + len, sizeof header - len, "{");
    for (int k = 0; k < n && len < sizeof header; k++) {
        uint64_t bytes = numel(&specs[k]) * 4;
        len += (size_t)snprintf(header + len, sizeof header - len, "\"%s\":{\"dtype\":\"F32\",\"shape\":[",
                                specs[k].name);
        for (int d = 0; d < specs[k].ndim && len < sizeof header; d++)
            len += (size_t)snprintf(header + len, sizeof header - len, "%s%lld", d ? "," : "",
                                    (long long)specs[k].shape[d]);
        len += (size_t)snprintf(header + len, sizeof header - len,
                                "],\"data_offsets\":[%llu,%llu]},", (unsigned long long)off,
                                (unsigned long long)(off + bytes));
        off += bytes;
    }
    if (len < sizeof header)
        len += (size_t)snprintf(header + len, sizeof header - len,
                                "\"__metadata__\":{\"format\":\"pt\",\"writer\":\"zero-course\"}}");
    while (len % 8 != 0 && len < sizeof header - 1) header[len++] = ' ';  // align the data
    if (len >= sizeof header - 1) REFUSE("%s: header too large", path);

    w->f = fopen(path, "wb");
    if (!w->f) REFUSE("cannot write model file '%s': %s", path, strerror(errno));
    w->left = off;
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)len >> (8 * i));
    if (fwrite(len8, 1, 8, w->f) != 8 || fwrite(header, 1, len, w->f) != len) {
        fclose(w->f);
        w->f = NULL;
        REFUSE("cannot write model file '%s': %s", path, strerror(errno));
    }
    return NULL;
}

const char *ckpt_append(CkptWriter *w, const float *data, size_t count) {
    if (!w->f) REFUSE("%s: not open for writing", w->path);
    if ((uint64_t)count * 4 > w->left) REFUSE("%s: more data than the header declares", w->path);
    if (move_floats((float *)data, count, w->f, 1) != count) REFUSE("cannot write model file '%s': %s", w->path, strerror(errno));
    w->left -= (uint64_t)count * 4;
    return NULL;
}

const char *ckpt_finish(CkptWriter *w) {
    if (!w->f) REFUSE("%s: not open for writing", w->path);
    int ok = fclose(w->f) == 0;
    w->f = NULL;
    if (!ok) REFUSE("cannot write model file '%s': %s", w->path, strerror(errno));
    if (w->left) REFUSE("%s: %llu bytes of tensor data missing", w->path, (unsigned long long)w->left);
    return NULL;
}

const char *ckpt_write(const char *path, int n, const CkptTensor *specs,
                       const float *const *data) {
    CkptWriter w;
    const char *err = ckpt_create(&w, path, n, specs);
    for (int k = 0; k < n && !err; k++) err = ckpt_append(&w, data[k], (size_t)numel(&specs[k]));
    if (err) {
        if (w.f) fclose(w.f);
        return err;
    }
    return ckpt_finish(&w);
}
