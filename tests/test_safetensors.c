// test_safetensors: the model file format. Round trips, slices, and every
// malformed file refused with a reason and without reading out of bounds (the
// sanitize build checks that); the course's layers by their PyTorch names;
// saves that are atomic, alone or racing.
#include "check_unit.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/safetensors.h"
#include "../common/mlp.h"
#include "../common/file.h"

static char dir[] = "/tmp/zc_safetensors_XXXXXX";

static const char *path_of(const char *name) {
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

// A file made of an 8-byte length, this header text, and `data` bytes.
// hlen_claimed 0: the header's true length.
static const char *raw_file(const char *name, const char *header, size_t hlen_claimed, size_t data) {
    const char *p = path_of(name);
    if (hlen_claimed == 0) hlen_claimed = strlen(header);
    FILE *f = fopen(p, "wb");
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)hlen_claimed >> (8 * i));
    fwrite(len8, 1, 8, f);
    fwrite(header, 1, strlen(header), f);
    for (size_t i = 0; i < data; i++) fputc(i & 0xff, f);
    fclose(f);
    return p;
}

static StTensor spec(const char *name, int ndim, int64_t a, int64_t b) {
    StTensor t = { .ndim = ndim, .shape = { a, b } };
    snprintf(t.name, sizeof t.name, "%s", name);
    strcpy(t.dtype, "F32");
    return t;
}

START_TEST(test_round_trip) {
    float w[7 * 3], b[7], back[7 * 3];
    for (int i = 0; i < 21; i++) w[i] = (float)i * 0.25f - 2.0f;
    for (int i = 0; i < 7; i++) b[i] = -(float)i;
    StTensor s[2] = { spec("layers.0.weight", 2, 7, 3), spec("layers.0.bias", 1, 7, 0) };
    const float *data[2] = { w, b };
    ck_assert_ptr_null(st_write(path_of("m.st"), 2, s, data));
    StFile c;
    ck_assert_ptr_null(st_open(&c, path_of("m.st")));
    ck_assert_int_eq(c.n, 2);
    ck_assert_ptr_null(st_read(&c, "layers.0.weight", 2, (int64_t[]){ 7, 3 }, 0, 21, back));
    ck_assert_mem_eq(back, w, sizeof w);
    ck_assert_ptr_null(st_read(&c, "layers.0.bias", 1, (int64_t[]){ 7 }, 2, 4, back));
    ck_assert_mem_eq(back, b + 2, 4 * sizeof(float));  // a slice, as a ZeRO-3 rank reads it
    // Refusals of a good file read the wrong way.
    ck_assert_ptr_nonnull(strstr(st_read(&c, "layers.1.bias", 1, (int64_t[]){ 7 }, 0, 7, back), "no tensor named"));
    ck_assert_ptr_nonnull(strstr(st_read(&c, "layers.0.weight", 2, (int64_t[]){ 3, 7 }, 0, 21, back),
                                 "has shape [7,3], expected [3,7]"));
    ck_assert_ptr_nonnull(strstr(st_read(&c, "layers.0.bias", 1, (int64_t[]){ 7 }, 5, 3, back), "past the end"));
    st_close(&c);
    // The data starts 8-byte aligned, as the format asks.
    FILE *f = fopen(path_of("m.st"), "rb");
    unsigned char len8[8];
    ck_assert_int_eq(fread(len8, 1, 8, f), 8);
    fclose(f);
    ck_assert_int_eq(len8[0] % 8, 0);
}
END_TEST

START_TEST(test_streaming_writer) {
    // Pieces of any size, in order, give the same file as one st_write.
    float w[5 * 4], b[5];
    for (int i = 0; i < 20; i++) w[i] = (float)i - 9.5f;
    for (int i = 0; i < 5; i++) b[i] = (float)i * 3.0f;
    StTensor s[2] = { spec("layers.0.weight", 2, 5, 4), spec("layers.0.bias", 1, 5, 0) };
    const float *data[2] = { w, b };
    ck_assert_ptr_null(st_write(path_of("whole.st"), 2, s, data));
    StWriter wr;
    ck_assert_ptr_null(st_create(&wr, path_of("pieces.st"), 2, s));
    ck_assert_ptr_null(st_append(&wr, w, 7));
    ck_assert_ptr_null(st_append(&wr, w + 7, 13));
    ck_assert_ptr_null(st_append(&wr, b, 5));
    ck_assert_ptr_nonnull(strstr(st_append(&wr, b, 1), "more data than the header declares"));
    ck_assert_ptr_null(st_finish(&wr));
    char x[512], y[512];
    FILE *f = fopen(path_of("whole.st"), "rb"), *g = fopen(path_of("pieces.st"), "rb");
    size_t nx = fread(x, 1, sizeof x, f), ny = fread(y, 1, sizeof y, g);
    fclose(f);
    fclose(g);
    ck_assert_uint_eq(nx, ny);
    ck_assert_mem_eq(x, y, nx);
    // Too little data: the file is refused when finished, not silently short.
    ck_assert_ptr_null(st_create(&wr, path_of("short.st"), 2, s));
    ck_assert_ptr_null(st_append(&wr, w, 20));
    ck_assert_ptr_nonnull(strstr(st_finish(&wr), "20 bytes of tensor data missing"));
}
END_TEST

START_TEST(test_malformed) {
    struct { const char *name, *header; long claimed; size_t data; const char *says; } cases[] = {
        { "zerolen", "", 1, 0, "impossible" },
        { "hugelen", "{}", 1ll << 40, 0, "over the format's limit" },
        { "overlimit", "{}", 100000001, 0, "over the format's limit of 100000000" },
        { "pastend", "{}", 100, 0, "impossible" },
        { "notobj", "[1,2]   ", -1, 0, "not a JSON object" },
        { "blank", "        ", -1, 0, "not a JSON object" },
        { "dtypenum", "{\"a\":{\"dtype\":5,\"shape\":[1],\"data_offsets\":[0,4]}}", -1, 4, "has a malformed dtype" },
        { "unterminated", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]", -1, 4, "garbled" },
        { "badtoken", "{\"a\":{\"dtype\":F32,\"shape\":[1],\"data_offsets\":[0,4]}}", -1, 4, "garbled" },
        { "trailing", "{} xx", -1, 0, "text after" },
        { "dtype", "{\"a\":{\"dtype\":\"Q7\",\"shape\":[1],\"data_offsets\":[0,4]}}", -1, 4, "unknown dtype" },
        { "truncated", "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", -1, 8, "outside the file" },
        { "mismatch", "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,16]}}", -1, 16, "does not match its shape" },
        { "reversed", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", -1, 4, "outside" },
        { "overlap", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                     "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", -1, 12, "overlap" },
        { "hole", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", -1, 8, "cover" },
        { "dup", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                 "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", -1, 8, "twice" },
        { "missingkey", "{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", -1, 4, "garbled header entry" },
        { "longname", "{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":1}", -1, 0, "garbled" },
        { "deep", "{\"__metadata__\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}", -1, 0, "__metadata__" },
        { "bigdim", "{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,4]}}", -1, 4, "garbled" },
        { "ctrl", "{\"a\x01\":{}}", -1, 0, "garbled" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t hl = strlen(cases[i].header);
        const char *p = raw_file(cases[i].name, cases[i].header,
                                 cases[i].claimed < 0 ? hl : (size_t)cases[i].claimed, cases[i].data);
        StFile c;
        const char *err = st_open(&c, p);
        ck_assert_msg(err != NULL, "case %s accepted", cases[i].name);
        ck_assert_msg(strstr(err, cases[i].says) != NULL, "case %s: '%s' lacks '%s'", cases[i].name,
                      err, cases[i].says);
        ck_assert_ptr_null(c.f);
    }
    StFile c;
    ck_assert_ptr_nonnull(strstr(st_open(&c, path_of("absent")), "cannot read model file"));
    FILE *f = fopen(path_of("tiny"), "wb");
    fputs("abc", f);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(st_open(&c, path_of("tiny")), "too short"));
    // Wrong dtype is refused when read as F32.
    const char *p = raw_file("f16", "{\"a\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 0, 4);
    ck_assert_ptr_null(st_open(&c, p));
    float x[2];
    ck_assert_ptr_nonnull(strstr(st_read(&c, "a", 1, (int64_t[]){ 2 }, 0, 2, x), "is F16, expected F32"));
    st_close(&c);
}
END_TEST

// What the reference reader (the safetensors crate: serde_json, then its
// validate) accepts is accepted here, and what it refuses is refused.
#define F32_ENTRY(n, b, e) "{\"dtype\":\"F32\",\"shape\":[" #n "],\"data_offsets\":[" #b "," #e "]}"

static const char *open_raw(const char *name, const char *header, size_t data) {
    static StFile c;
    const char *err = st_open(&c, raw_file(name, header, 0, data));
    st_close(&c);
    return err;
}

START_TEST(test_reference_rules) {
    static const struct { const char *name, *header; size_t data; } good[] = {
        // any order of entries: the offsets decide; the data tiles exactly
        { "order", "{\"b\":" F32_ENTRY(1, 4, 8) ",\"a\":" F32_ENTRY(1, 0, 4) "}", 8 },
        { "padded", "{\"a\":" F32_ENTRY(1, 0, 4) "}      ", 4 },
        { "nometa", "{\"__metadata__\":null,\"a\":" F32_ENTRY(1, 0, 4) "}", 4 },
        { "meta", "{\"__metadata__\":{\"k\":\"v \\\"q\\\" \\u00e9\",\"\":\"\"},\"a\":" F32_ENTRY(1, 0, 4) "}", 4 },
        { "unknown", "{\"a\":{\"dtype\":\"F32\",\"a_field_name_far_longer_than_any_the_reader_knows_of_which_is_fine\":"
                     "{\"x\":[1,-2.5e3,true,false,null,\"s\"]},\"shape\":[1],\"data_offsets\":[0,4]}}", 4 },
        { "empty", "{\"z\":" F32_ENTRY(0, 4, 4) ",\"a\":" F32_ENTRY(1, 0, 4) ",\"b\":" F32_ENTRY(2, 4, 12) "}", 12 },
        { "dims", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,2],\"data_offsets\":[0,8]}}", 8 },
        { "dtypes", "{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[0,2]},"
                    "\"b\":{\"dtype\":\"U16\",\"shape\":[1],\"data_offsets\":[2,4]}}", 4 },
        { "nothing", "{}", 0 },
        { "pair", "{\"\\ud83d\\ude00\":" F32_ENTRY(1, 0, 4) "}", 4 },
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        const char *err = open_raw(good[i].name, good[i].header, good[i].data);
        ck_assert_msg(err == NULL, "case %s refused: %s", good[i].name, err);
    }
    static const struct { const char *name, *header; size_t data; const char *says; } bad[] = {
        { "metanum", "{\"__metadata__\":{\"k\":1}}", 0, "__metadata__ must be an object of strings" },
        { "metaobj", "{\"__metadata__\":{\"k\":{}}}", 0, "__metadata__ must be an object of strings" },
        { "metastr", "{\"__metadata__\":\"x\"}", 0, "__metadata__ must be an object of strings" },
        { "metatwice", "{\"__metadata__\":{},\"__metadata__\":{}}", 0, "'__metadata__' appears twice" },
        { "fieldtwice", "{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
          "'dtype' appears twice" },
        { "lone", "{\"\\ud800\":" F32_ENTRY(1, 0, 4) "}", 4, "garbled header (invalid Unicode" },
        { "badesc", "{\"\\x41\":" F32_ENTRY(1, 0, 4) "}", 4, "garbled header (invalid escape" },
        { "utf8", "{\"__metadata__\":{\"k\":\"\xff\"}}", 0, "not valid UTF-8" },
        { "overlong", "{\"__metadata__\":{\"k\":\"\xc0\xaf\"}}", 0, "not valid UTF-8" },
        { "lead", " {}", 0, "must start with '{'" },
        { "float", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}", 4, "malformed shape" },
        // -1, not -0: Jansson reads -0 as 0, where serde_json refuses it (safetensors.c says so).
        { "negative", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-1,4]}}", 4, "malformed data_offsets" },
        { "zeros", "{\"a\":{\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]}}", 4, "garbled header (invalid token" },
        { "three", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,4]}}", 4, "malformed data_offsets" },
        { "comma", "{\"a\":" F32_ENTRY(1, 0, 4) ",}", 4, "garbled header" },
        { "inside", "{\"a\":" F32_ENTRY(2, 0, 8) ",\"z\":" F32_ENTRY(0, 4, 4) "}", 8, "overlap" },
        { "gap", "{\"a\":" F32_ENTRY(1, 0, 4) ",\"b\":" F32_ENTRY(1, 8, 12) "}", 12, "bytes 4 to 8 belong to none" },
        { "notentry", "{\"a\":[\"F32\",[1],[0,4]]}", 4, "is not an object" },
        { "nodtype", "{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "lacks field 'dtype'" },
        { "lower", "{\"a\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "unknown dtype 'f32'" },
        { "lit", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"u\":nul}}", 4, "garbled header (invalid token" },
        { "overflow", "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]}}", 4,
          "too large to count" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *err = open_raw(bad[i].name, bad[i].header, bad[i].data);
        ck_assert_msg(err != NULL, "case %s accepted", bad[i].name);
        ck_assert_msg(strstr(err, bad[i].says) != NULL, "case %s: '%s' lacks '%s'", bad[i].name, err, bad[i].says);
    }
}
END_TEST

// Names are compared whole, escapes decoded, however long: a name past the
// table's width is kept apart from one that shares its head.
START_TEST(test_names) {
    static char h[4096], longa[301], longb[301];
    memset(longa, 'n', 300);
    memcpy(longb, longa, 300);
    longb[299] = 'm';
    snprintf(h, sizeof h, "{\"%s\":" F32_ENTRY(1, 0, 4) ",\"%s\":" F32_ENTRY(1, 4, 8) ",\"layers.0.w\\u0065ight\":"
             F32_ENTRY(1, 8, 12) "}", longa, longb);
    StFile c;
    ck_assert_ptr_null(st_open(&c, raw_file("long", h, 0, 12)));
    float x;
    ck_assert_ptr_null(st_read(&c, "layers.0.weight", 1, (int64_t[]){ 1 }, 0, 1, &x));
    unsigned char want[4] = { 8, 9, 10, 11 };
    ck_assert_mem_eq(&x, want, 4);
    ck_assert_ptr_nonnull(strstr(st_read(&c, longa, 1, (int64_t[]){ 1 }, 0, 1, &x), "no tensor named"));
    st_close(&c);
    snprintf(h, sizeof h, "{\"%s\":" F32_ENTRY(1, 0, 4) ",\"%s\":" F32_ENTRY(1, 4, 8) "}", longa, longa);
    ck_assert_ptr_nonnull(strstr(open_raw("longtwice", h, 8), "appears twice"));
    // The writer escapes what JSON must: a name with a quote and a backslash comes back whole.
    float v = 1.5f;
    const float *data[1] = { &v };
    StTensor s = spec("odd\"name\\", 1, 1, 0);
    ck_assert_ptr_null(st_write(path_of("odd.st"), 1, &s, data));
    ck_assert_ptr_null(st_open(&c, path_of("odd.st")));
    ck_assert_ptr_null(st_read(&c, "odd\"name\\", 1, (int64_t[]){ 1 }, 0, 1, &x));
    ck_assert(x == 1.5f);
    st_close(&c);
}
END_TEST

// Headers up to the format's limit (100,000,000 bytes) are read, nesting up to
// serde_json's depth too; past them, refused.
START_TEST(test_large_header) {
    const char *head = "{\"__metadata__\":{\"k\":\"", *tail = "\"}}";
    size_t fill = 100000000 - strlen(head) - strlen(tail);
    char *h = malloc(100000001);
    ck_assert_ptr_nonnull(h);
    memcpy(h, head, strlen(head));
    memset(h + strlen(head), 'x', fill);
    strcpy(h + strlen(head) + fill, tail);
    ck_assert_uint_eq(strlen(h), 100000000);
    ck_assert_ptr_null(open_raw("big", h, 0));
    unlink(path_of("big"));
    // Nesting: serde_json takes 127 levels and refuses the 128th; the header
    // object and the entry are two, so 125 in an unknown field are fine, 126 not.
    for (int depth = 125; depth <= 126; depth++) {
        int n = snprintf(h, 1000, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"u\":");
        for (int i = 0; i < depth; i++) h[n++] = '[';
        for (int i = 0; i < depth; i++) h[n++] = ']';
        strcpy(h + n, "}}");
        const char *err = open_raw("nest", h, 4);
        if (depth == 125) ck_assert_msg(err == NULL, "125 levels refused: %s", err);
        else ck_assert_msg(err && strstr(err, "nested 128 levels deep"), "126 levels: %s", err ? err : "accepted");
    }
    free(h);
}
END_TEST

// Bytes of a whole file (up to cap), for comparing before and after.
static size_t slurp(const char *p, char *buf, size_t cap) {
    FILE *f = fopen(p, "rb");
    if (!f) return 0;
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

// 1 if the test directory holds a temporary file (a save's leftovers).
static int has_debris(void) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) found = 1;
    if (d) closedir(d);
    return found;
}

// A save that fails (a value not finite, a write error, a special file)
// leaves the previous file as it was and nothing beside it.
START_TEST(test_atomic_save) {
    enum { N = 4096 };
    static float w[N], before[N + 64], after[N + 64];
    for (int i = 0; i < N; i++) w[i] = (float)i;
    StTensor s = spec("layers.0.weight", 2, 64, 64);
    const float *data[1] = { w };
    const char *p = path_of("keep.st");
    ck_assert_ptr_null(st_write(p, 1, &s, data));
    size_t n = slurp(p, (char *)before, sizeof before);
    ck_assert_uint_gt(n, 4 * N);

    w[1234] = NAN;  // not finite: named, refused, nothing written
    const char *err = st_write(p, 1, &s, data);
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err, "layers.0.weight holds nan at element 1234") != NULL, "%s", err);
    w[1234] = 1234.0f;
    w[0] = -1.0f;  // a different model, so a partial write would show
    struct rlimit old, small;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    small = old;
    small.rlim_cur = 1000;  // a full disk, as far as this process can tell
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    err = st_write(p, 1, &s, data);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err, "File too large") != NULL, "%s", err);
    ck_assert_uint_eq(slurp(p, (char *)after, sizeof after), n);
    ck_assert_mem_eq(before, after, n);
    ck_assert(!has_debris());

    err = st_write("/dev/null", 1, &s, data);  // never replaced, never written to
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err, "not a regular file") != NULL, "%s", err);
    struct stat sb;
    ck_assert_int_eq(stat("/dev/null", &sb), 0);
    ck_assert(S_ISCHR(sb.st_mode));
    // Through a link: the file it names is replaced, the link stays.
    ck_assert_int_eq(symlink("keep.st", path_of("link.st")), 0);
    ck_assert_ptr_null(st_write(path_of("link.st"), 1, &s, data));
    ck_assert_int_eq(lstat(path_of("link.st"), &sb), 0);
    ck_assert(S_ISLNK(sb.st_mode));
    ck_assert_uint_eq(slurp(p, (char *)after, sizeof after), n);
    ck_assert_mem_ne(before, after, n);
    ck_assert(!has_debris());
}
END_TEST

// Two processes saving to one path over and over: the file is always one
// whole save or the other, never a mix.
START_TEST(test_concurrent_saves) {
    enum { N = 1 << 16, ROUNDS = 40 };
    static float w[N], got[N + 64];
    StTensor s = spec("layers.0.weight", 1, N, 0);
    const float *data[1] = { w };
    const char *p = path_of("both.st");
    for (int i = 0; i < N; i++) w[i] = 1.0f;
    ck_assert_ptr_null(st_write(p, 1, &s, data));
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        ck_assert_int_ge(kids[k], 0);
        if (kids[k] == 0) {
            for (int i = 0; i < N; i++) w[i] = (float)(k + 2);
            for (int r = 0; r < ROUNDS; r++)
                if (st_write(p, 1, &s, data)) _exit(1);
            _exit(0);
        }
    }
    int mixed = 0, reads = 0, running = 2;
    while (running) {
        StFile c;
        if (!st_open(&c, p)) {
            ck_assert_ptr_null(st_read(&c, "layers.0.weight", 1, (int64_t[]){ N }, 0, N, got));
            for (int i = 1; i < N; i++) mixed |= got[i] != got[0];
            reads++;
            st_close(&c);
        }
        for (int k = 0; k < 2; k++) {
            int st;
            if (kids[k] > 0 && waitpid(kids[k], &st, WNOHANG) == kids[k]) {
                ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
                kids[k] = 0;
                running--;
            }
        }
    }
    ck_assert_int_gt(reads, 0);
    ck_assert(!mixed);
    ck_assert(!has_debris());
}
END_TEST

// A model file holding a value that is not finite is refused where it is read,
// naming the tensor and the element (a slice that misses it reads fine).
START_TEST(test_read_nonfinite) {
    float w[6] = { 1, 2, 3, 4, 5, 6 }, back[6];
    StTensor s = spec("layers.0.weight", 2, 2, 3);
    const float *data[1] = { w };
    ck_assert_ptr_null(st_write(path_of("inf.st"), 1, &s, data));
    StFile c;
    ck_assert_ptr_null(st_open(&c, path_of("inf.st")));
    uint64_t data_start = c.data_start;
    st_close(&c);
    FILE *f = fopen(path_of("inf.st"), "r+b");
    ck_assert_ptr_nonnull(f);
    float inf = INFINITY;
    ck_assert_int_eq(fseek(f, (long)(data_start + 4 * 4), SEEK_SET), 0);
    ck_assert_uint_eq(fwrite(&inf, 4, 1, f), 1);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_ptr_null(st_open(&c, path_of("inf.st")));
    const char *err = st_read(&c, "layers.0.weight", 2, (int64_t[]){ 2, 3 }, 0, 6, back);
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err, "tensor 'layers.0.weight' holds inf at element 4") != NULL, "%s", err);
    ck_assert_ptr_null(st_read(&c, "layers.0.weight", 2, (int64_t[]){ 2, 3 }, 0, 4, back));
    err = st_read(&c, "layers.0.weight", 2, (int64_t[]){ 2, 3 }, 3, 3, back);
    ck_assert_msg(err && strstr(err, "holds inf at element 4") != NULL, "%s", err);
    st_close(&c);
}
END_TEST

// The course's layers: nn.Linear names, a segment read across weight and bias
// in any slice, and a file with the wrong number of tensors refused.
START_TEST(test_linear_layers) {
    enum { OUT = 5, IN = 3, NUMEL = OUT * IN + OUT };
    float seg[2][NUMEL], back[NUMEL];
    StTensor s[4];
    const float *data[4];
    for (int l = 0; l < 2; l++) {
        for (int i = 0; i < NUMEL; i++) seg[l][i] = (float)(100 * l + i);
        mlp_specs(s + 2 * l, l, OUT, IN);
        data[2 * l] = seg[l];
        data[2 * l + 1] = seg[l] + OUT * IN;
    }
    ck_assert_str_eq(s[2].name, "layers.1.weight");
    ck_assert_str_eq(s[3].name, "layers.1.bias");
    ck_assert_int_eq(s[3].ndim, 1);
    ck_assert_ptr_null(st_write(path_of("linear.st"), 4, s, data));
    StFile c;
    ck_assert_ptr_nonnull(strstr(mlp_open(&c, path_of("linear.st"), 3), "has 4 tensors, this model has 6"));
    ck_assert_ptr_null(c.f);
    ck_assert_ptr_null(mlp_open(&c, path_of("linear.st"), 2));
    // Every slice of layer 1's segment: inside the weight, across the seam, inside the bias.
    for (size_t first = 0; first <= NUMEL; first++)
        for (size_t count = 0; first + count <= NUMEL; count++) {
            memset(back, 0xff, sizeof back);
            ck_assert_ptr_null(mlp_read_layer(&c, 1, OUT, IN, first, count, back));
            ck_assert_mem_eq(back, seg[1] + first, count * sizeof(float));
            unsigned char untouched[sizeof(float)];
            memset(untouched, 0xff, sizeof untouched);
            if (count < NUMEL) ck_assert_mem_eq(&back[count], untouched, sizeof untouched);  // nothing past it
        }
    ck_assert_ptr_nonnull(strstr(mlp_read_layer(&c, 1, OUT, IN + 1, 0, 2, back), "has shape [5,3], expected [5,4]"));
    st_close(&c);
    st_close(&c);  // again: harmless
}
END_TEST

static Suite *suite(void) {
    unit_temp_dir(dir);
    Suite *s = suite_create("safetensors");
    TCase *tc = tcase_create("safetensors");
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_streaming_writer);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_reference_rules);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_large_header);
    tcase_add_test(tc, test_atomic_save);
    tcase_add_test(tc, test_concurrent_saves);
    tcase_add_test(tc, test_read_nonfinite);
    tcase_add_test(tc, test_linear_layers);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN("test_safetensors", suite)
