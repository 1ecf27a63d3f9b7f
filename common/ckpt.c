// ckpt: safetensors writing and a strict, bounds-checked reader that follows
// the reference implementation (the safetensors crate, serde_json underneath):
// it reads what that library writes and reads, and refuses what it refuses.
#include "ckpt.h"
#include "mem.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_HEADER 100000000u  // the reference's limit on the JSON header
#define MAX_DEPTH 128          // serde_json's nesting limit
static char reason[1024];

#define REFUSE(...) do { snprintf(reason, sizeof reason, __VA_ARGS__); return reason; } while (0)

static uint64_t numel(const CkptTensor *t) {
    uint64_t n = 1;
    for (int d = 0; d < t->ndim; d++) n *= (uint64_t)t->shape[d];
    return n;
}

size_t ckpt_dtype_bytes(const char *dt) {
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
// a JSON reader for the header: every read bounded, strings decoded

typedef struct { const char *s, *end; int depth; } Json;

// A decoded string: its first cap-1 bytes kept in buf, its length and a hash
// of all of it (two names are compared whole however long they are).
typedef struct { char *buf; size_t cap, len; uint64_t hash; } Str;

static void ws(Json *j) {
    while (j->s < j->end && (*j->s == ' ' || *j->s == '\t' || *j->s == '\n' || *j->s == '\r')) j->s++;
}

static int eat(Json *j, char c) {
    ws(j);
    if (j->s < j->end && *j->s == c) { j->s++; return 1; }
    return 0;
}

static void put_byte(Str *o, unsigned char b) {
    if (!o) return;
    if (o->len + 1 < o->cap) o->buf[o->len] = (char)b;
    o->len++;
    o->hash = (o->hash ^ b) * 0x100000001b3ull;  // FNV-1a
}

static void put_code_point(Str *o, uint32_t cp) {
    if (cp < 0x80) put_byte(o, (unsigned char)cp);
    else if (cp < 0x800) put_byte(o, (unsigned char)(0xC0 | cp >> 6)), put_byte(o, (unsigned char)(0x80 | (cp & 0x3F)));
    else if (cp < 0x10000) {
        put_byte(o, (unsigned char)(0xE0 | cp >> 12));
        put_byte(o, (unsigned char)(0x80 | (cp >> 6 & 0x3F)));
        put_byte(o, (unsigned char)(0x80 | (cp & 0x3F)));
    } else {
        put_byte(o, (unsigned char)(0xF0 | cp >> 18));
        put_byte(o, (unsigned char)(0x80 | (cp >> 12 & 0x3F)));
        put_byte(o, (unsigned char)(0x80 | (cp >> 6 & 0x3F)));
        put_byte(o, (unsigned char)(0x80 | (cp & 0x3F)));
    }
}

static int hex4(Json *j, uint32_t *v) {
    if (j->end - j->s < 4) return 0;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *j->s++;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return 0;
        *v = *v << 4 | (uint32_t)d;
    }
    return 1;
}

// The code point of a \u escape (after the u), a surrogate pair whole; 0 if malformed.
static int escaped_code_point(Json *j, uint32_t *cp) {
    if (!hex4(j, cp) || (*cp >= 0xDC00 && *cp <= 0xDFFF)) return 0;
    if (*cp < 0xD800 || *cp > 0xDBFF) return 1;
    uint32_t low;
    if (j->end - j->s < 2 || j->s[0] != '\\' || j->s[1] != 'u') return 0;
    j->s += 2;
    if (!hex4(j, &low) || low < 0xDC00 || low > 0xDFFF) return 0;
    *cp = 0x10000 + ((*cp - 0xD800) << 10) + (low - 0xDC00);
    return 1;
}

// A string, decoded into out (NULL: checked and skipped); 0 if malformed.
static int str(Json *j, Str *out) {
    if (out) out->len = 0, out->hash = 0xcbf29ce484222325ull;
    if (!eat(j, '"')) return 0;
    while (j->s < j->end) {
        unsigned char c = (unsigned char)*j->s++;
        if (c == '"') {
            if (out) out->buf[out->len < out->cap ? out->len : out->cap - 1] = '\0';
            return 1;
        }
        if (c < 0x20) return 0;
        if (c != '\\') { put_byte(out, c); continue; }
        if (j->s >= j->end) return 0;
        uint32_t cp;
        switch (*j->s++) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u': if (!escaped_code_point(j, &cp)) return 0; break;
        default: return 0;
        }
        put_code_point(out, cp);
    }
    return 0;
}

static int is_digit(const Json *j) { return j->s < j->end && *j->s >= '0' && *j->s <= '9'; }

// A number as JSON writes it; *integer says whether it is a non-negative
// integer that fits in 64 bits (then its value is in *v).
static int number(Json *j, uint64_t *v, int *integer) {
    ws(j);
    int neg = j->s < j->end && *j->s == '-', whole = 1;
    j->s += neg;
    if (!is_digit(j)) return 0;
    uint64_t x = 0;
    if (*j->s == '0') j->s++;
    else
        while (is_digit(j)) {
            unsigned d = (unsigned)(*j->s++ - '0');
            if (x > (UINT64_MAX - d) / 10) whole = 0;
            x = x * 10 + d;
        }
    if (j->s < j->end && *j->s == '.') {
        j->s++, whole = 0;
        if (!is_digit(j)) return 0;
        while (is_digit(j)) j->s++;
    }
    if (j->s < j->end && (*j->s == 'e' || *j->s == 'E')) {
        j->s++, whole = 0;
        if (j->s < j->end && (*j->s == '+' || *j->s == '-')) j->s++;
        if (!is_digit(j)) return 0;
        while (is_digit(j)) j->s++;
    }
    *integer = whole && !neg;
    *v = x;
    return 1;
}

// A size: what the reference reads as usize (a non-negative integer, no fraction or exponent).
static int uint(Json *j, uint64_t *v) {
    int integer;
    return number(j, v, &integer) && integer;
}

static int literal(Json *j, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(j->end - j->s) < n || memcmp(j->s, word, n) != 0) return 0;
    j->s += n;
    return 1;
}

// Any JSON value, checked and skipped.
static int skip_value(Json *j) {
    ws(j);
    if (j->s >= j->end || ++j->depth > MAX_DEPTH) return 0;
    int ok;
    if (*j->s == '"') ok = str(j, NULL);
    else if (*j->s == '{' || *j->s == '[') {
        char close = *j->s == '{' ? '}' : ']';
        j->s++;
        ok = 1;
        if (!eat(j, close)) {
            do {
                if (close == '}' && !(str(j, NULL) && eat(j, ':'))) return 0;
                if (!skip_value(j)) return 0;
            } while (eat(j, ','));
            ok = eat(j, close);
        }
    } else if (*j->s == 't' || *j->s == 'f' || *j->s == 'n') {
        ok = literal(j, "true") || literal(j, "false") || literal(j, "null");
    } else {
        uint64_t v;
        int integer;
        ok = number(j, &v, &integer);
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

// "__metadata__": null, or an object whose values are all strings.
static int metadata(Json *j) {
    ws(j);
    if (literal(j, "null")) return 1;
    if (!eat(j, '{')) return 0;
    if (eat(j, '}')) return 1;
    do {
        if (!str(j, NULL) || !eat(j, ':') || !str(j, NULL)) return 0;
    } while (eat(j, ','));
    return eat(j, '}');
}

// One tensor's entry: dtype, shape and data_offsets once each, other fields
// skipped. NULL or what is wrong with it.
static const char *tensor_entry(Json *j, CkptTensor *t) {
    static const char *const fields[] = { "dtype", "shape", "data_offsets" };
    int seen[3] = { 0, 0, 0 };
    char kb[16];
    Str key = { kb, sizeof kb, 0, 0 }, dtype = { t->dtype, sizeof t->dtype, 0, 0 };
    if (!eat(j, '{')) return "is not an object";
    if (!eat(j, '}')) do {
        if (!str(j, &key) || !eat(j, ':')) return "has a malformed field name";
        int f = 0;
        while (f < 3 && (key.len >= key.cap || strcmp(kb, fields[f]) != 0)) f++;
        if (f < 3 && seen[f]++) {
            static char twice[64];
            snprintf(twice, sizeof twice, "has field '%s' twice", fields[f]);
            return twice;
        }
        if (f == 0) {
            if (!str(j, &dtype)) return "has a malformed dtype";
            if (dtype.len >= dtype.cap) t->dtype[0] = '?', t->dtype[1] = '\0';  // no dtype is that long
        } else if (f == 1) {
            uint64_t s[CKPT_MAX_DIMS];
            if (!uint_array(j, s, CKPT_MAX_DIMS, &t->ndim)) return "has a malformed shape (or more than " CKPT_MAX_DIMS_TEXT " dimensions)";
            for (int d = 0; d < t->ndim; d++) {
                if (s[d] > INT64_MAX) return "has a shape too large to count";
                t->shape[d] = (int64_t)s[d];
            }
        } else if (f == 2) {
            uint64_t o[2];
            int n = 0;
            if (!uint_array(j, o, 2, &n) || n != 2) return "has malformed data_offsets (two sizes)";
            t->begin = o[0];
            t->end = o[1];
        } else if (!skip_value(j)) return "has a malformed value";
    } while (eat(j, ','));
    if (!eat(j, '}')) return "is not closed";
    for (int f = 0; f < 3; f++)
        if (!seen[f]) {
            static char lacks[64];
            snprintf(lacks, sizeof lacks, "lacks field '%s'", fields[f]);
            return lacks;
        }
    return NULL;
}

// ----------------------------------------------------------------------------
// reading

// The tensors sorted by their byte ranges must tile the data section exactly,
// each range as long as its shape says (the reference's rule).
static const char *check_offsets(Ckpt *c, uint64_t data_len) {
    int order[CKPT_MAX_TENSORS];
    for (int k = 0; k < c->n; k++) {
        const CkptTensor *t = &c->t[k];
        if (t->begin > t->end || t->end > data_len)
            REFUSE("%s: tensor '%s' lies outside the file (truncated?)", c->shown, t->name);
        uint64_t n = 1, bytes;
        for (int d = 0; d < t->ndim; d++)
            if (__builtin_mul_overflow(n, (uint64_t)t->shape[d], &n))
                REFUSE("%s: tensor '%s' has a shape too large to count", c->shown, t->name);
        if (__builtin_mul_overflow(n, ckpt_dtype_bytes(t->dtype), &bytes) || t->end - t->begin != bytes)
            REFUSE("%s: tensor '%s' byte range does not match its shape", c->shown, t->name);
        int i = k;  // insertion sort by (begin, end)
        for (; i > 0 && (c->t[order[i - 1]].begin > t->begin ||
                         (c->t[order[i - 1]].begin == t->begin && c->t[order[i - 1]].end > t->end)); i--)
            order[i] = order[i - 1];
        order[i] = k;
    }
    uint64_t at = 0;
    for (int i = 0; i < c->n; i++) {
        const CkptTensor *t = &c->t[order[i]];
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

static const char *parse_header(Ckpt *c, const char *h, uint64_t len, uint64_t data_len) {
    Json j = { h, h + len, 0 };
    if (!utf8_valid((const unsigned char *)h, len)) REFUSE("%s: header is not valid UTF-8", c->shown);
    if (len == 0 || h[0] != '{') REFUSE("%s: header is not a JSON object (it must start with '{')", c->shown);
    j.s++;
    int have_metadata = 0;
    if (!eat(&j, '}')) {
        do {
            char nb[CKPT_MAX_NAME];
            Str name = { nb, sizeof nb, 0, 0 };
            if (!str(&j, &name) || !eat(&j, ':')) REFUSE("%s: garbled header (a malformed tensor name)", c->shown);
            if (name.len < name.cap && strcmp(nb, "__metadata__") == 0) {
                if (have_metadata++) REFUSE("%s: __metadata__ appears twice", c->shown);
                if (!metadata(&j)) REFUSE("%s: __metadata__ must be an object of strings", c->shown);
                continue;
            }
            if (c->n == CKPT_MAX_TENSORS) REFUSE("%s: more than %d tensors", c->shown, CKPT_MAX_TENSORS);
            CkptTensor *t = &c->t[c->n];
            memset(t, 0, sizeof *t);
            memcpy(t->name, nb, sizeof nb);
            c->name_len[c->n] = name.len;
            c->name_hash[c->n] = name.hash;
            const char *bad = tensor_entry(&j, t);
            if (bad) REFUSE("%s: garbled header entry for tensor '%s': it %s", c->shown, t->name, bad);
            if (!ckpt_dtype_bytes(t->dtype))
                REFUSE("%s: tensor '%s' has unknown dtype '%s'", c->shown, t->name, t->dtype);
            for (int k = 0; k < c->n; k++)
                if (c->name_len[k] == name.len && c->name_hash[k] == name.hash && strcmp(c->t[k].name, nb) == 0)
                    REFUSE("%s: tensor '%s' appears twice", c->shown, t->name);
            c->n++;
        } while (eat(&j, ','));
        if (!eat(&j, '}')) REFUSE("%s: garbled header (expected , or })", c->shown);
    }
    ws(&j);
    if (j.s != j.end) REFUSE("%s: garbled header (text after the JSON object)", c->shown);
    return check_offsets(c, data_len);
}

// The header's length, then the header itself into a buffer of mem's, parsed.
static const char *read_header(Ckpt *c, uint64_t size) {
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

const char *ckpt_open(Ckpt *c, const char *path) {
    memset(c, 0, sizeof *c);
    c->path = path;
    snprintf(c->shown, sizeof c->shown, "%s", file_shown(path));
    const char *err = file_check_input(path, "model file");  // before open: a FIFO would block it
    if (err) return err;
    c->f = fopen(path, "rb");
    struct stat sb;
    if (!c->f || fstat(fileno(c->f), &sb) != 0) {
        int e = errno;
        ckpt_close(c);
        REFUSE("cannot read model file '%s': %s", c->shown, strerror(e));
    }
    err = read_header(c, (uint64_t)sb.st_size);
    if (err) ckpt_close(c);
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

const char *ckpt_read_dtype(Ckpt *c, const char *name, const char *dtype, int ndim, const int64_t *shape,
                            size_t first, size_t count, void *dst) {
    const CkptTensor *t = NULL;
    for (int k = 0; k < c->n && !t; k++)
        if (c->name_len[k] < CKPT_MAX_NAME && strcmp(c->t[k].name, name) == 0) t = &c->t[k];
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
    size_t size = ckpt_dtype_bytes(dtype), bad = count;
    float value = 0;
    if (fseek(c->f, (long)(c->data_start + t->begin + first * size), SEEK_SET) != 0 ||
        read_elems(dst, count, size, strcmp(dtype, "F32") == 0, c->f, &bad, &value) != count)
        REFUSE("%s: cannot read tensor '%s'", c->shown, name);
    if (bad < count)  // a model is finite: training from this one would be nan from the start
        REFUSE("%s: tensor '%s' holds %g at element %llu: the model is not finite", c->shown, name,
               (double)value, (unsigned long long)(first + bad));
    return NULL;
}

const char *ckpt_read(Ckpt *c, const char *name, int ndim, const int64_t *shape,
                      size_t first, size_t count, float *dst) {
    return ckpt_read_dtype(c, name, "F32", ndim, shape, first, count, dst);
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
    REFUSE("%s: has %d tensors, this model has %d", c->shown, c->n, 2 * nlayers);
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

// name as a JSON string's contents: quotes, backslashes and control
// characters escaped.
static const char *json_escaped(const char *name) {
    static char out[6 * CKPT_MAX_NAME];
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if (*p == '"' || *p == '\\') out[n++] = '\\', out[n++] = (char)*p;
        else if (*p < 0x20) n += (size_t)snprintf(out + n, sizeof out - n, "\\u%04x", *p);
        else out[n++] = (char)*p;
    }
    out[n] = '\0';
    return out;
}

const char *ckpt_create(CkptWriter *w, const char *path, int n, const CkptTensor *specs) {
    static char header[CKPT_MAX_TENSORS * (6 * CKPT_MAX_NAME + 256)];
    size_t len = 0;
    uint64_t off = 0;
    memset(w, 0, sizeof *w);
    if (n > CKPT_MAX_TENSORS) REFUSE("%s: more than %d tensors", file_shown(path), CKPT_MAX_TENSORS);
    len += (size_t)snprintf(header + len, sizeof header - len, "{");
    for (int k = 0; k < n && len < sizeof header; k++) {
        w->t[k] = specs[k];
        if (!w->t[k].dtype[0]) strcpy(w->t[k].dtype, "F32");
        size_t size = ckpt_dtype_bytes(w->t[k].dtype);
        if (!size) REFUSE("%s: tensor '%s' has no dtype safetensors knows: %s", file_shown(path), specs[k].name,
                          w->t[k].dtype);
        uint64_t bytes = numel(&specs[k]) * size;
        w->t[k].begin = off;
        w->t[k].end = off + bytes;
        len += (size_t)snprintf(header + len, sizeof header - len, "\"%s\":{\"dtype\":\"%s\",\"shape\":[",
                                json_escaped(specs[k].name), w->t[k].dtype);
        for (int d = 0; d < specs[k].ndim && len < sizeof header; d++)
            len += (size_t)snprintf(header + len, sizeof header - len, "%s%lld", d ? "," : "",
                                    (long long)specs[k].shape[d]);
        len += (size_t)snprintf(header + len, sizeof header - len,
                                "],\"data_offsets\":[%llu,%llu]},", (unsigned long long)off,
                                (unsigned long long)(off + bytes));
        off += bytes;
    }
    w->n = n;
    if (len < sizeof header)
        len += (size_t)snprintf(header + len, sizeof header - len,
                                "\"__metadata__\":{\"format\":\"pt\",\"writer\":\"zero-course\"}}");
    while (len % 8 != 0 && len < sizeof header - 1) header[len++] = ' ';  // align the data
    if (len >= sizeof header - 1) REFUSE("%s: header too large", file_shown(path));

    const char *err = file_begin(&w->out, path, "model file");
    if (err) return err;
    w->left = off;
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)len >> (8 * i));
    if (fwrite(len8, 1, 8, w->out.f) != 8 || fwrite(header, 1, len, w->out.f) != len)
        return file_fail(&w->out, errno);
    w->hash = file_hash(file_hash(FILE_HASH_START, len8, 8), header, len);
    w->size = 8 + len + off;
    return NULL;
}

// A reason if x[0..n) (at data byte `at` of the file) holds a value that is not
// finite, naming the tensor and the element.
static const char *check_finite(const CkptWriter *w, const float *x, size_t n, uint64_t at) {
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
static const char *append(CkptWriter *w, const void *data, size_t count, size_t size, int floats) {
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
        if (!err) w->hash = file_hash(w->hash, src, k * size);
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

const char *ckpt_append(CkptWriter *w, const float *data, size_t count) { return append(w, data, count, 4, 1); }

const char *ckpt_append_bytes(CkptWriter *w, const void *data, size_t bytes) { return append(w, data, bytes, 1, 0); }

const char *ckpt_finish(CkptWriter *w) {
    if (!w->out.f) REFUSE("%s: not open for writing", file_shown(w->out.path));
    if (w->left) {
        file_abandon(&w->out);
        REFUSE("%s: %llu bytes of tensor data missing", file_shown(w->out.path), (unsigned long long)w->left);
    }
    return file_commit(&w->out);
}

const char *ckpt_write(const char *path, int n, const CkptTensor *specs,
                       const float *const *data) {
    static CkptWriter w;  // large: the tensors' names
    const char *err = ckpt_create(&w, path, n, specs);
    for (int k = 0; k < n && !err; k++) err = ckpt_append(&w, data[k], (size_t)numel(&specs[k]));
    return err ? err : ckpt_finish(&w);
}
