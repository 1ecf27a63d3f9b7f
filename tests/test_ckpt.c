// test_ckpt: safetensors round trips, slices, and every malformed file refused
// with a reason and without reading out of bounds (the sanitize build checks that).
#include "check_unit.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/ckpt.h"

static char dir[] = "/tmp/zc_ckpt_XXXXXX";

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

static CkptTensor spec(const char *name, int ndim, int64_t a, int64_t b) {
    CkptTensor t = { .ndim = ndim, .shape = { a, b } };
    snprintf(t.name, sizeof t.name, "%s", name);
    strcpy(t.dtype, "F32");
    return t;
}

START_TEST(test_round_trip) {
    float w[7 * 3], b[7], back[7 * 3];
    for (int i = 0; i < 21; i++) w[i] = (float)i * 0.25f - 2.0f;
    for (int i = 0; i < 7; i++) b[i] = -(float)i;
    CkptTensor s[2] = { spec("layers.0.weight", 2, 7, 3), spec("layers.0.bias", 1, 7, 0) };
    const float *data[2] = { w, b };
    ck_assert_ptr_null(ckpt_write(path_of("m.st"), 2, s, data));
    Ckpt c;
    ck_assert_ptr_null(ckpt_open(&c, path_of("m.st")));
    ck_assert_int_eq(c.n, 2);
    ck_assert_ptr_null(ckpt_read(&c, "layers.0.weight", 2, (int64_t[]){ 7, 3 }, 0, 21, back));
    ck_assert_mem_eq(back, w, sizeof w);
    ck_assert_ptr_null(ckpt_read(&c, "layers.0.bias", 1, (int64_t[]){ 7 }, 2, 4, back));
    ck_assert_mem_eq(back, b + 2, 4 * sizeof(float));  // a slice, as a ZeRO-3 rank reads it
    // Refusals of a good file read the wrong way.
    ck_assert_ptr_nonnull(strstr(ckpt_read(&c, "layers.1.bias", 1, (int64_t[]){ 7 }, 0, 7, back), "no tensor named"));
    ck_assert_ptr_nonnull(strstr(ckpt_read(&c, "layers.0.weight", 2, (int64_t[]){ 3, 7 }, 0, 21, back),
                                 "has shape [7,3], expected [3,7]"));
    ck_assert_ptr_nonnull(strstr(ckpt_read(&c, "layers.0.bias", 1, (int64_t[]){ 7 }, 5, 3, back), "past the end"));
    ckpt_close(&c);
    // The data starts 8-byte aligned, as the format asks.
    FILE *f = fopen(path_of("m.st"), "rb");
    unsigned char len8[8];
    ck_assert_int_eq(fread(len8, 1, 8, f), 8);
    fclose(f);
    ck_assert_int_eq(len8[0] % 8, 0);
}
END_TEST

START_TEST(test_streaming_writer) {
    // Pieces of any size, in order, give the same file as one ckpt_write.
    float w[5 * 4], b[5];
    for (int i = 0; i < 20; i++) w[i] = (float)i - 9.5f;
    for (int i = 0; i < 5; i++) b[i] = (float)i * 3.0f;
    CkptTensor s[2] = { spec("layers.0.weight", 2, 5, 4), spec("layers.0.bias", 1, 5, 0) };
    const float *data[2] = { w, b };
    ck_assert_ptr_null(ckpt_write(path_of("whole.st"), 2, s, data));
    CkptWriter wr;
    ck_assert_ptr_null(ckpt_create(&wr, path_of("pieces.st"), 2, s));
    ck_assert_ptr_null(ckpt_append(&wr, w, 7));
    ck_assert_ptr_null(ckpt_append(&wr, w + 7, 13));
    ck_assert_ptr_null(ckpt_append(&wr, b, 5));
    ck_assert_ptr_nonnull(strstr(ckpt_append(&wr, b, 1), "more data than the header declares"));
    ck_assert_ptr_null(ckpt_finish(&wr));
    char x[512], y[512];
    FILE *f = fopen(path_of("whole.st"), "rb"), *g = fopen(path_of("pieces.st"), "rb");
    size_t nx = fread(x, 1, sizeof x, f), ny = fread(y, 1, sizeof y, g);
    fclose(f);
    fclose(g);
    ck_assert_uint_eq(nx, ny);
    ck_assert_mem_eq(x, y, nx);
    // Too little data: the file is refused when finished, not silently short.
    ck_assert_ptr_null(ckpt_create(&wr, path_of("short.st"), 2, s));
    ck_assert_ptr_null(ckpt_append(&wr, w, 20));
    ck_assert_ptr_nonnull(strstr(ckpt_finish(&wr), "20 bytes of tensor data missing"));
}
END_TEST

START_TEST(test_malformed) {
    struct { const char *name, *header; long claimed; size_t data; const char *says; } cases[] = {
        { "zerolen", "", 1, 0, "impossible" },
        { "hugelen", "{}", 1ll << 40, 0, "impossible" },
        { "pastend", "{}", 100, 0, "impossible" },
        { "notobj", "[1,2]   ", -1, 0, "not a JSON object" },
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
        Ckpt c;
        const char *err = ckpt_open(&c, p);
        ck_assert_msg(err != NULL, "case %s accepted", cases[i].name);
        ck_assert_msg(strstr(err, cases[i].says) != NULL, "case %s: '%s' lacks '%s'", cases[i].name,
                      err, cases[i].says);
        ck_assert_ptr_null(c.f);
    }
    Ckpt c;
    ck_assert_ptr_nonnull(strstr(ckpt_open(&c, path_of("absent")), "cannot open model file"));
    FILE *f = fopen(path_of("tiny"), "wb");
    fputs("abc", f);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(ckpt_open(&c, path_of("tiny")), "too short"));
    // Wrong dtype is refused when read as F32.
    const char *p = raw_file("f16", "{\"a\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 0, 4);
    ck_assert_ptr_null(ckpt_open(&c, p));
    float x[2];
    ck_assert_ptr_nonnull(strstr(ckpt_read(&c, "a", 1, (int64_t[]){ 2 }, 0, 2, x), "is F16, expected F32"));
    ckpt_close(&c);
}
END_TEST

// The course's layers: nn.Linear names, a segment read across weight and bias
// in any slice, and a file with the wrong number of tensors refused.
START_TEST(test_linear_layers) {
    enum { OUT = 5, IN = 3, NUMEL = OUT * IN + OUT };
    float seg[2][NUMEL], back[NUMEL];
    CkptTensor s[4];
    const float *data[4];
    for (int l = 0; l < 2; l++) {
        for (int i = 0; i < NUMEL; i++) seg[l][i] = (float)(100 * l + i);
        ckpt_linear_specs(s + 2 * l, l, OUT, IN);
        data[2 * l] = seg[l];
        data[2 * l + 1] = seg[l] + OUT * IN;
    }
    ck_assert_str_eq(s[2].name, "layers.1.weight");
    ck_assert_str_eq(s[3].name, "layers.1.bias");
    ck_assert_int_eq(s[3].ndim, 1);
    ck_assert_ptr_null(ckpt_write(path_of("linear.st"), 4, s, data));
    Ckpt c;
    ck_assert_ptr_nonnull(strstr(ckpt_open_model(&c, path_of("linear.st"), 3), "has 4 tensors, this model has 6"));
    ck_assert_ptr_null(c.f);
    ck_assert_ptr_null(ckpt_open_model(&c, path_of("linear.st"), 2));
    // Every slice of layer 1's segment: inside the weight, across the seam, inside the bias.
    for (size_t first = 0; first <= NUMEL; first++)
        for (size_t count = 0; first + count <= NUMEL; count++) {
            memset(back, 0xff, sizeof back);
            ck_assert_ptr_null(ckpt_read_layer(&c, 1, OUT, IN, first, count, back));
            ck_assert_mem_eq(back, seg[1] + first, count * sizeof(float));
            unsigned char untouched[sizeof(float)];
            memset(untouched, 0xff, sizeof untouched);
            if (count < NUMEL) ck_assert_mem_eq(&back[count], untouched, sizeof untouched);  // nothing past it
        }
    ck_assert_ptr_nonnull(strstr(ckpt_read_layer(&c, 1, OUT, IN + 1, 0, 2, back), "has shape [5,3], expected [5,4]"));
    ckpt_close(&c);
    ckpt_close(&c);  // again: harmless
}
END_TEST

static Suite *suite(void) {
    if (!mkdtemp(dir)) fatal("mkdtemp %s failed", dir);
    Suite *s = suite_create("ckpt");
    TCase *tc = tcase_create("safetensors");
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_streaming_writer);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_linear_layers);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN("test_ckpt", suite)
