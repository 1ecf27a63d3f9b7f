// safetensors: safetensors writing and a strict, bounds-checked reader that follows
// the reference implementation (the safetensors crate, serde_json underneath):
// it reads what that library writes and reads, and refuses what it refuses.
#include "safetensors.h"
#include "mem.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_HEADER 100000000u  // the reference's limit on the JSON header
#define MAX_DEPTH 128          // serde_json refuses the 128th level of nesting
static char reason[1024];

#define REFUSE(...) do { snprintf(reason, sizeof reason, __VA_ARGS__); return reason; } while (0)

static uint64_t numel(const StTensor *t) {
    uint64_t n = 1;
    for (int d = 0; d < t->ndim; d++) n *= (uint64_t)t->shape[d];
    return n;
}

size_t st_dtype_bytes(const char *dt) {
    static const struct { const char *name; size_t size; } known[] = {
        { "BOOL", 1 }, { "U8", 1 }, { "I8", 1 }, { "F8_E5M2", 1 }, { "F8_E4M3", 1 }, { "I16", 2 },
        { "U16", 2 }, { "F16", 2 }, { "BF16", 2 }, { "I32", 4 }, { "U32", 4 }, { "F32", 4 },
        { "F64", 8 }, { "I64", 8 }, { "U64", 8 },
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i].name, dt) == 0) return known[i].size;
    return 0;
}

// 1 if s[0..n) is well-formed UTF-8 (no overlong forms, no surrogates).
static int utf8_valid(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c < 0x80) { i++; continue; }
        int k;
        uint32_t cp, min;
        if ((c & 0xE0) == 0xC0) k = 1, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0) k = 2, cp = c & 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0) k = 3, cp = c & 0x07, min = 0x10000;
        else return 0;
        if (n - i <= (size_t)k) return 0;
        for (int m = 1; m <= k; m++) {
            if ((s[i + m] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (s[i + m] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += (size_t)k + 1;
    }
    return 1;
}

// ----------------------------------------------------------------------------
// the header's JSON, parsed by Jansson into an arena of mem's
//
// Jansson allocates every value on its own; an arena takes them all from a few
// large blocks of mem's and gives them back at once, so a hostile header of
// millions of tiny values costs time in proportion to its size. Only one
// header is parsed at a time (no thread parses another), as the allocator
// Jansson uses is the process's.

#define ARENA_CHUNK ((size_t)1 << 20)

typedef struct Chunk { struct Chunk *next; size_t used, cap; max_align_t data[]; } Chunk;
static Chunk *arena;

static void *arena_alloc(size_t n) {
    if (n > (SIZE_MAX >> 2)) return NULL;
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (!arena || arena->cap - arena->used < n) {
        size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        Chunk *c = mem_alloc_host(MEM_DATA, sizeof *c + cap);
        *c = (Chunk){ arena, 0, cap };
        arena = c;
    }
    void *p = (char *)arena->data + arena->used;
    arena->used += n;
    return p;
}

static void arena_free(void *p) { (void)p; }  // the arena goes whole, in arena_release

static void arena_release(void) {
    while (arena) {
        Chunk *c = arena;
        arena = c->next;
        mem_free(c);
    }
}

// Nesting depth of v, counting v: serde_json's limit applies to the whole
// header. Jansson's own limit (2048) bounds the recursion.
static int depth(const json_t *v) {
    int most = 0;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) { int d = depth(x); most = d > most ? d : most; }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) { int d = depth(x); most = d > most ? d : most; }
    } else return 0;
    return most + 1;
}

// A size: what the reference reads as usize (a non-negative integer; no
// fraction, no exponent). Jansson reads "-0" as 0, which serde_json refuses:
// the one header this reader takes that the reference does not.
static int size_of(const json_t *v, uint64_t *out) {
    if (!json_is_integer(v) || json_integer_value(v) < 0) return 0;
    *out = (uint64_t)json_integer_value(v);
    return 1;
}

static int sizes(const json_t *a, uint64_t *v, int cap, int *n) {
    size_t i;
    json_t *x;
    if (!json_is_array(a) || json_array_size(a) > (size_t)cap) return 0;
    json_array_foreach(a, i, x) if (!size_of(x, &v[i])) return 0;
    *n = (int)json_array_size(a);
    return 1;
}

// "__metadata__": null, or an object whose values are all strings.
static int metadata_ok(const json_t *v) {
    const char *k;
    json_t *x;
    if (json_is_null(v)) return 1;
    if (!json_is_object(v)) return 0;
    json_object_foreach((json_t *)v, k, x) if (!json_is_string(x)) return 0;
    return 1;
}

// One tensor's entry: dtype, shape and data_offsets (duplicates are refused by
// the parser), other fields ignored. NULL or what is wrong with it.
static const char *tensor_entry(const json_t *e, StTensor *t) {
    static char why[96];
    static const char *const fields[] = { "dtype", "shape", "data_offsets" };
    if (!json_is_object(e)) return "is not an object";
    for (int f = 0; f < 3; f++)
        if (!json_object_get(e, fields[f])) return snprintf(why, sizeof why, "lacks field '%s'", fields[f]), why;
    const json_t *dt = json_object_get(e, "dtype");
    if (!json_is_string(dt)) return "has a malformed dtype";
    snprintf(t->dtype, sizeof t->dtype, "%s", json_string_value(dt));
    if (!st_dtype_bytes(json_string_value(dt)))
        return snprintf(why, sizeof why, "has unknown dtype '%.20s%s'", json_string_value(dt),
                        strlen(json_string_value(dt)) > 20 ? "..." : ""), why;
    uint64_t s[ST_MAX_DIMS], o[2];
    int n = 0;
    if (!sizes(json_object_get(e, "shape"), s, ST_MAX_DIMS, &t->ndim))
        return "has a malformed shape (or more than " ST_MAX_DIMS_TEXT " dimensions)";
    for (int d = 0; d < t->ndim; d++) t->shape[d] = (int64_t)s[d];  // Jansson's integers fit
    if (!sizes(json_object_get(e, "data_offsets"), o, 2, &n) || n != 2) return "has malformed data_offsets (two sizes)";
    t->begin = o[0];
    t->end = o[1];
    return NULL;
}

// Why Jansson refused the header. A duplicate key is named: the parser stops
// just past its closing quote.
static const char *parse_refusal(const StFile *c, const char *h, const json_error_t *e) {
    if (json_error_code(e) == json_error_end_of_input_expected)
        REFUSE("%s: garbled header (text after the JSON object)", c->shown);
    if (json_error_code(e) == json_error_duplicate_key && e->position >= 2 && h[e->position - 1] == '"') {
        int end = e->position - 1, at = end;
        while (at > 0 && !(h[at - 1] == '"' && (at < 2 || h[at - 2] != '\\'))) at--;
        REFUSE("%s: '%.*s' appears twice in one object of the header", c->shown,
               end - at > 60 ? 60 : end - at, h + at);
    }
    REFUSE("%s: garbled header (%s, at byte %d)", c->shown, e->text, e->position);
}

// The tensors of the parsed header into c. NULL or why not.
static const char *header_tensors(StFile *c, json_t *root) {
    const char *key;
    json_t *v;
    if (depth(root) >= MAX_DEPTH) REFUSE("%s: header nested %d levels deep or more", c->shown, MAX_DEPTH);
    json_object_foreach(root, key, v) {
        if (strcmp(key, "__metadata__") == 0) {
            if (!metadata_ok(v)) REFUSE("%s: __metadata__ must be an object of strings", c->shown);
            continue;
        }
        if (c->n == ST_MAX_TENSORS) REFUSE("%s: more than %d tensors", c->shown, ST_MAX_TENSORS);
        StTensor *t = &c->t[c->n];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "%s", key);
        c->name_len[c->n] = strlen(key);
        const char *bad = tensor_entry(v, t);
        if (bad) REFUSE("%s: garbled header entry for tensor '%s': it %s", c->shown, t->name, bad);
        c->n++;
    }
    return NULL;
}

// ----------------------------------------------------------------------------
// reading

// The tensors sorted by their byte ranges must tile the data section exactly,
// each range as long as its shape says (the reference's rule).
static const char *check_offsets(StFile *c, uint64_t data_len) {
    int order[ST_MAX_TENSORS];
    for (int k = 0; k < c->n; k++) {
        const StTensor *t = &c->t[k];
        if (t->begin > t->end || t->end > data_len)
            REFUSE("%s: tensor '%s' lies outside the file (truncated?)", c->shown, t->name);
        uint64_t n = 1, bytes;
        for (int d = 0; d < t->ndim; d++)
            if (__builtin_mul_overflow(n, (uint64_t)t->shape[d], &n))
                REFUSE("%s: tensor '%s' has a shape too large to count", c->shown, t->name);
        if (__builtin_mul_overflow(n, st_dtype_bytes(t->dtype), &bytes) || t->end - t->begin != bytes)
            REFUSE("%s: tensor '%s' byte range does not match its shape", c->shown, t->name);
        int i = k;  // insertion sort by (begin, end)
        for (; i > 0 && (c->t[order[i - 1]].begin > t->begin ||
                         (c->t[order[i - 1]].begin == t->begin && c->t[order[i - 1]].end > t->end)); i--)
            order[i] = order[i - 1];
        order[i] = k;
    }
    uint64_t at = 0;
    for (int i = 0; i < c->n; i++) {
        const StTensor *t = &c->t[order[i]];
        if (t->begin < at)
            REFUSE("%s: tensors '%s' and '%s' overlap", c->shown, c->t[order[i - 1]].name, t->name);
        if (t->begin > at)
            REFUSE("%s: the tensors do not cover the data section: bytes %llu to %llu belong to none", c->shown,
                   (unsigned long long)at, (unsigned long long)t->begin);
        at = t->end;
    }
    if (at != data_len) REFUSE("%s: data section has %llu bytes, tensors cover %llu", c->shown,
                               (unsigned long long)data_len, (unsigned long long)at);
    return NULL;
}

static const char *parse_header(StFile *c, const char *h, uint64_t len, uint64_t data_len) {
    if (!utf8_valid((const unsigned char *)h, len)) REFUSE("%s: header is not valid UTF-8", c->shown);
    if (len == 0 || h[0] != '{') REFUSE("%s: header is not a JSON object (it must start with '{')", c->shown);
    json_set_alloc_funcs(arena_alloc, arena_free);
    json_error_t e;
    json_t *root = json_loadb(h, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &e);
    const char *err = root ? header_tensors(c, root) : parse_refusal(c, h, &e);
    arena_release();  // root with it
    return err ? err : check_offsets(c, data_len);
}

// The header's length, then the header itself into a buffer of mem's, parsed.
static const char *read_header(StFile *c, uint64_t size) {
    unsigned char len8[8];
    uint64_t hlen = 0;
    if (size < 8 || fread(len8, 1, 8, c->f) != 8) REFUSE("%s: too short to be safetensors (truncated?)", c->shown);
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | len8[i];
    if (hlen > MAX_HEADER)
        REFUSE("%s: header length %llu is over the format's limit of %u bytes", c->shown, (unsigned long long)hlen,
               MAX_HEADER);
    if (hlen < 2 || hlen > size - 8)
        REFUSE("%s: header length %llu is impossible for a %llu-byte file", c->shown, (unsigned long long)hlen,
               (unsigned long long)size);
    char *header = mem_alloc_host(MEM_DATA, hlen);
    const char *err = NULL;
    if (fread(header, 1, hlen, c->f) != hlen) {
        snprintf(reason, sizeof reason, "%s: cannot read header", c->shown);
        err = reason;
    } else {
        c->data_start = 8 + hlen;
        err = parse_header(c, header, hlen, size - c->data_start);
    }
    mem_free(header);
    return err;
}

const char *st_open(StFile *c, const char *path) {
    memset(c, 0, sizeof *c);
    c->path = path;
    snprintf(c->shown, sizeof c->shown, "%s", file_shown(path));
    const char *err = file_check_input(path, "model file");  // before open: a FIFO would block it
    if (err) return err;
    c->f = fopen(path, "rb");
    struct stat sb;
    if (!c->f || fstat(fileno(c->f), &sb) != 0) {
        int e = errno;
        st_close(c);
        REFUSE("cannot read model file '%s': %s", c->shown, strerror(e));
    }
    err = read_header(c, (uint64_t)sb.st_size);
    if (err) st_close(c);
    return err;
}

// fread of count elements of size bytes into dst, which may be GPU memory:
// that goes through a host buffer, a chunk at a time. Returns the count read.
// With floats set (F32 data), *bad is the index of the first value that is not
// finite (*value), or count.
#define CHUNK ((size_t)1 << 20)

static size_t first_nonfinite(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return i;
    return n;
}

static size_t read_elems(void *dst, size_t count, size_t size, int floats, FILE *f, size_t *bad, float *value) {
    *bad = count;
    int gpu = mem_is_gpu(dst);
    unsigned char *tmp = gpu ? mem_alloc_host(MEM_DATA, (count < CHUNK ? count : CHUNK) * size) : NULL;
    size_t done = 0;
    while (done < count) {
        size_t n = gpu && count - done > CHUNK ? CHUNK : count - done;  // the host reads all at once
        unsigned char *at = gpu ? tmp : (unsigned char *)dst + done * size;
        size_t got = fread(at, size, n, f), k = floats ? first_nonfinite((const float *)at, got) : got;
        if (k < got && *bad == count) *bad = done + k, *value = ((const float *)at)[k];
        if (gpu) mem_copy((unsigned char *)dst + done * size, tmp, got * size);
        done += got;
        if (got != n) break;
    }
    if (tmp) mem_free(tmp);
    return done;
}

const char *st_read_dtype(StFile *c, const char *name, const char *dtype, int ndim, const int64_t *shape,
                            size_t first, size_t count, void *dst) {
    const StTensor *t = NULL;
    for (int k = 0; k < c->n && !t; k++)
        if (c->name_len[k] < ST_MAX_NAME && strcmp(c->t[k].name, name) == 0) t = &c->t[k];
    if (!t) REFUSE("%s: no tensor named '%s'", c->shown, name);
    if (strcmp(t->dtype, dtype) != 0) REFUSE("%s: tensor '%s' is %s, expected %s", c->shown, name, t->dtype, dtype);
    int same = t->ndim == ndim;
    for (int d = 0; d < ndim && same; d++) same = t->shape[d] == shape[d];
    if (!same) {
        char got[96] = "", want[96] = "";
        for (int d = 0; d < t->ndim; d++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? "," : "", (long long)t->shape[d]);
        for (int d = 0; d < ndim; d++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d ? "," : "", (long long)shape[d]);
        REFUSE("%s: tensor '%s' has shape [%s], expected [%s]", c->shown, name, got, want);
    }
    if (first > numel(t) || count > numel(t) - first)
        REFUSE("%s: read past the end of tensor '%s'", c->shown, name);
    size_t size = st_dtype_bytes(dtype), bad = count;
    float value = 0;
    if (fseek(c->f, (long)(c->data_start + t->begin + first * size), SEEK_SET) != 0 ||
        read_elems(dst, count, size, strcmp(dtype, "F32") == 0, c->f, &bad, &value) != count)
        REFUSE("%s: cannot read tensor '%s'", c->shown, name);
    if (bad < count)  // a model is finite: training from this one would be nan from the start
        REFUSE("%s: tensor '%s' holds %g at element %llu: the model is not finite", c->shown, name,
               (double)value, (unsigned long long)(first + bad));
    return NULL;
}

const char *st_read(StFile *c, const char *name, int ndim, const int64_t *shape,
                      size_t first, size_t count, float *dst) {
    return st_read_dtype(c, name, "F32", ndim, shape, first, count, dst);
}

void st_close(StFile *c) {
    if (c->f) fclose(c->f);
    c->f = NULL;
}

// ----------------------------------------------------------------------------
// writing

// The header for w's tensors: JSON (Jansson writes it, escaping names),
// padded with spaces so the data starts 8-byte aligned. Into mem's memory, or
// NULL if a name is not UTF-8.
static char *header_text(const StWriter *w, size_t *len) {
    json_set_alloc_funcs(arena_alloc, arena_free);
    json_t *root = json_object();
    int ok = 1;
    for (int k = 0; k < w->n && ok; k++) {
        const StTensor *t = &w->t[k];
        json_t *shape = json_array();
        for (int d = 0; d < t->ndim; d++) json_array_append_new(shape, json_integer(t->shape[d]));
        json_t *entry = json_pack("{s:s, s:o, s:[I,I]}", "dtype", t->dtype, "shape", shape, "data_offsets",
                                  (json_int_t)t->begin, (json_int_t)t->end);
        ok = entry && json_object_set_new(root, t->name, entry) == 0;
    }
    json_object_set_new(root, "__metadata__", json_pack("{s:s, s:s}", "format", "pt", "writer", "zero-course"));
    size_t n = ok ? json_dumpb(root, NULL, 0, JSON_COMPACT) : 0;
    char *text = n ? mem_alloc_host(MEM_DATA, n + 8) : NULL;
    if (text) {
        json_dumpb(root, text, n, JSON_COMPACT);
        while (n % 8 != 0) text[n++] = ' ';
    }
    arena_release();
    *len = n;
    return text;
}

const char *st_create(StWriter *w, const char *path, int n, const StTensor *specs) {
    uint64_t off = 0;
    memset(w, 0, sizeof *w);
    if (n > ST_MAX_TENSORS) REFUSE("%s: more than %d tensors", file_shown(path), ST_MAX_TENSORS);
    for (int k = 0; k < n; k++) {
        w->t[k] = specs[k];
        if (!w->t[k].dtype[0]) strcpy(w->t[k].dtype, "F32");
        size_t size = st_dtype_bytes(w->t[k].dtype);
        if (!size) REFUSE("%s: tensor '%s' has no dtype safetensors knows: %s", file_shown(path), specs[k].name,
                          w->t[k].dtype);
        w->t[k].begin = off;
        w->t[k].end = off += numel(&specs[k]) * size;
    }
    w->n = n;
    size_t len;
    char *header = header_text(w, &len);
    if (!header) REFUSE("%s: a tensor's name is not UTF-8", file_shown(path));
    const char *err = file_begin(&w->out, path, "model file");
    if (!err) {
        w->left = off;
        unsigned char len8[8];
        for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)len >> (8 * i));
        if (fwrite(len8, 1, 8, w->out.f) != 8 || fwrite(header, 1, len, w->out.f) != len)
            err = file_fail(&w->out, errno);
        file_hash_begin(&w->hash);
        file_hash_add(&w->hash, len8, 8);
        file_hash_add(&w->hash, header, len);
        w->size = 8 + len + off;
    }
    mem_free(header);
    return err;
}

// A reason if x[0..n) (at data byte `at` of the file) holds a value that is not
// finite, naming the tensor and the element.
static const char *check_finite(const StWriter *w, const float *x, size_t n, uint64_t at) {
    for (size_t i = 0; i < n; i++) {
        if (isfinite(x[i])) continue;
        uint64_t byte = at + 4 * i;
        int k = 0;
        while (k + 1 < w->n && byte >= w->t[k].end) k++;
        REFUSE("%s: %s holds %g at element %llu: the model is not finite, so it is not saved", file_shown(w->out.path),
               w->t[k].name, (double)x[i], (unsigned long long)((byte - w->t[k].begin) / 4));
    }
    return NULL;
}

// Appends count elements of size bytes (host or GPU memory; the GPU's through a
// host chunk, checked there), checking floats for values that are not finite.
static const char *append(StWriter *w, const void *data, size_t count, size_t size, int floats) {
    if (!w->out.f) REFUSE("%s: not open for writing", file_shown(w->out.path));
    if ((uint64_t)count * size > w->left) REFUSE("%s: more data than the header declares", file_shown(w->out.path));
    static const char write_failed[] = "write";
    const char *err = NULL;
    int gpu = mem_is_gpu(data);
    unsigned char *tmp = gpu ? mem_alloc_host(MEM_DATA, (count < CHUNK ? count : CHUNK) * size) : NULL;
    for (size_t done = 0; done < count && !err;) {
        size_t k = gpu && count - done > CHUNK ? CHUNK : count - done;  // the host writes all at once
        const unsigned char *src = (const unsigned char *)data + done * size;
        if (gpu) mem_copy(tmp, src, k * size), src = tmp;
        if (floats) err = check_finite(w, (const float *)src, k, w->done + size * done);
        if (!err && fwrite(src, size, k, w->out.f) != k) err = write_failed;
        if (!err) file_hash_add(&w->hash, src, k * size);
        done += k;
    }
    if (tmp) mem_free(tmp);
    if (err == write_failed) return file_fail(&w->out, errno);
    if (err) {
        file_abandon(&w->out);
        return err;
    }
    w->left -= (uint64_t)count * size;
    w->done += (uint64_t)count * size;
    return NULL;
}

const char *st_append(StWriter *w, const float *data, size_t count) { return append(w, data, count, 4, 1); }

const char *st_append_bytes(StWriter *w, const void *data, size_t bytes) { return append(w, data, bytes, 1, 0); }

const char *st_finish(StWriter *w) {
    if (!w->out.f) REFUSE("%s: not open for writing", file_shown(w->out.path));
    if (w->left) {
        file_abandon(&w->out);
        REFUSE("%s: %llu bytes of tensor data missing", file_shown(w->out.path), (unsigned long long)w->left);
    }
    return file_commit(&w->out);
}

const char *st_write(const char *path, int n, const StTensor *specs,
                       const float *const *data) {
    static StWriter w;  // large: the tensors' names
    const char *err = st_create(&w, path, n, specs);
    for (int k = 0; k < n && !err; k++) err = st_append(&w, data[k], (size_t)numel(&specs[k]));
    return err ? err : st_finish(&w);
}
