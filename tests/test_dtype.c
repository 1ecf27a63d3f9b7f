// test_dtype: the fp32 -> bf16 / fp16 conversions against a reference that
// knows nothing of bit tricks: decode every 16-bit code to a double with ldexp,
// and round by searching for the nearest one (ties to the even code, overflow
// to infinity as the next value past the largest). Every code, every tie, the
// subnormals, the overflow edge, NaN and signed zero; then the array kernels
// and the 16-bit matrix product.
#include "check_unit.h"

#include <math.h>
#include <string.h>

#include "../common/kernels.h"
#include "../common/mem.h"
#include "../common/rng.h"

typedef struct {
    DType dt;
    int mant;          // mantissa bits
    int bias;
    uint16_t inf;      // the code of +infinity
} Fmt;

static const Fmt BF16 = { DT_BF16, 7, 127, 0x7f80 }, F16 = { DT_F16, 10, 15, 0x7c00 };

// Value of a non-negative code up to and including inf, which is taken to be
// the value one step past the largest finite number.
static double ref_value(const Fmt *f, uint32_t c) {
    uint32_t e = c >> f->mant, m = c & ((1u << f->mant) - 1);
    if (e == 0) return ldexp((double)m, 1 - f->bias - f->mant);
    return ldexp(1.0 + ldexp((double)m, -f->mant), (int)e - f->bias);
}

static uint16_t ref_round(const Fmt *f, float x) {
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs((double)x);
    uint32_t lo = 0, hi = f->inf;
    if (a >= ref_value(f, f->inf)) return sign | f->inf;
    while (hi - lo > 1) {  // ref_value(lo) <= a < ref_value(hi)
        uint32_t mid = (lo + hi) / 2;
        if (ref_value(f, mid) <= a) lo = mid; else hi = mid;
    }
    double dl = a - ref_value(f, lo), dh = ref_value(f, hi) - a;
    uint32_t c = dl < dh ? lo : dh < dl ? hi : ((lo & 1) ? hi : lo);
    return (uint16_t)(sign | c);
}

static uint16_t to16(const Fmt *f, float x) { return f->dt == DT_BF16 ? f32_to_bf16(x) : f32_to_f16(x); }
static float from16(const Fmt *f, uint16_t h) { return f->dt == DT_BF16 ? bf16_to_f32(h) : f16_to_f32(h); }

static void check_fmt(const Fmt *f) {
    const char *name = dtype_name(f->dt);
    // Every finite code decodes to the reference value and encodes back to itself.
    for (uint32_t c = 0; c <= f->inf; c++)
        for (uint32_t s = 0; s <= 0x8000; s += 0x8000) {
            float v = from16(f, (uint16_t)(c | s));
            double want = c == f->inf ? INFINITY : ref_value(f, c);
            CK_EXPECT((double)fabsf(v) == want && (signbit(v) != 0) == (s != 0),
                      "%s code %04x decodes to %g", name, c | s, (double)v);
            CK_EXPECT(to16(f, v) == (c | s), "%s code %04x does not round-trip", name, c | s);
        }
    // Every midpoint between neighbours is a tie (to the even code), and the
    // floats just beside it round to the nearer side.
    for (uint32_t c = 0; c < f->inf; c++) {
        double mid = (ref_value(f, c) + ref_value(f, c + 1)) / 2;
        float x = (float)mid;
        if ((double)x != mid) continue;  // not representable in fp32: no tie to test
        CK_EXPECT(to16(f, x) == ref_round(f, x), "%s tie above %04x: got %04x want %04x", name, c,
                  to16(f, x), ref_round(f, x));
        float up = nextafterf(x, INFINITY), down = nextafterf(x, 0);
        CK_EXPECT_UINT_EQ(to16(f, up), ref_round(f, up));
        CK_EXPECT_UINT_EQ(to16(f, down), ref_round(f, down));
        CK_EXPECT_UINT_EQ(to16(f, -x), ref_round(f, -x));
    }
    // Random fp32 bit patterns cover every exponent, fp32 subnormals included.
    Rng r = rng_stream(99, 7);
    for (int i = 0; i < 300000; i++) {
        uint32_t u = (uint32_t)(rng_uniform(&r) * 4294967296.0);
        float x;
        memcpy(&x, &u, sizeof x);
        if (isnan(x)) continue;
        CK_EXPECT(to16(f, x) == ref_round(f, x), "%s of %a: got %04x want %04x", name, (double)x,
                  to16(f, x), ref_round(f, x));
    }
    // NaN stays NaN (quiet), infinities and signed zeros stay.
    ck_assert(isnan(from16(f, to16(f, NAN))));
    ck_assert(isnan(from16(f, to16(f, -NAN))));
    ck_assert_uint_eq(to16(f, INFINITY), f->inf);
    ck_assert_uint_eq(to16(f, -INFINITY), 0x8000 | f->inf);
    ck_assert_uint_eq(to16(f, -0.0f), 0x8000);
    ck_assert_uint_eq(to16(f, FLT_MAX), f->inf);  // overflow rounds to infinity
}

START_TEST(test_bf16) { check_fmt(&BF16); }
END_TEST

START_TEST(test_f16) {
    check_fmt(&F16);
    // The edges people get wrong: the largest half, the overflow tie, the
    // smallest subnormal, and the tie with zero below it.
    ck_assert_uint_eq(f32_to_f16(65504.0f), 0x7bff);
    ck_assert_uint_eq(f32_to_f16(65519.99f), 0x7bff);
    ck_assert_uint_eq(f32_to_f16(65520.0f), 0x7c00);
    ck_assert_uint_eq(f32_to_f16(ldexpf(1, -24)), 0x0001);
    ck_assert_uint_eq(f32_to_f16(ldexpf(1, -25)), 0x0000);
    ck_assert_uint_eq(f32_to_f16(ldexpf(3, -26)), 0x0001);
    ck_assert_uint_eq(f32_to_f16(ldexpf(3, -25)), 0x0002);  // 1.5 x 2^-24: tie to even 2
}
END_TEST

START_TEST(test_array_kernels) {
    size_t n = 1001;
    float *x = mem_alloc(MEM_DATA, n * 4), *y = mem_alloc(MEM_DATA, n * 4), *z = mem_alloc(MEM_DATA, n * 4);
    uint16_t *h = mem_alloc(MEM_DATA, n * 2), *k = mem_alloc(MEM_DATA, n * 2);
    Rng r = rng_stream(5, 1);
    for (size_t i = 0; i < n; i++) x[i] = (rng_uniform(&r) - 0.5f) * 1e3f;
    const Fmt *fmts[] = { &BF16, &F16 };
    for (int q = 0; q < 2; q++) {
        const Fmt *f = fmts[q];
        cast_from_f32(h, x, f->dt, n);
        cast_to_f32(y, h, f->dt, n);
        copy(z, x, n);
        round_to(z, f->dt, n);
        for (size_t i = 0; i < n; i++) {
            ck_assert_uint_eq(h[i], ref_round(f, x[i]));
            ck_assert(y[i] == from16(f, h[i]) && z[i] == y[i]);
        }
        // add_to: the sum in fp32, rounded once.
        copy_dt(k, h, f->dt, n);
        add_to(k, h, f->dt, n);
        for (size_t i = 0; i < n; i++) ck_assert_uint_eq(k[i], to16(f, from16(f, h[i]) + from16(f, h[i])));
        ck_assert_int_eq(all_finite_dt(k, f->dt, n), 1);
        k[n / 2] = (uint16_t)(f->inf | 0x8000);
        ck_assert_int_eq(all_finite_dt(k, f->dt, n), 0);
        k[n / 2] = (uint16_t)(f->inf | 1);  // NaN
        ck_assert_int_eq(all_finite_dt(k, f->dt, n), 0);
        uint16_t last = k[n - 1];
        zero_dt(k, f->dt, n - 1);
        for (size_t i = 0; i + 1 < n; i++) ck_assert_uint_eq(k[i], 0);
        ck_assert_uint_eq(k[n - 1], last);
    }
    // fp32 is the identity, in place too.
    cast_from_f32(y, x, DT_F32, n);
    cast_from_f32(y, y, DT_F32, n);
    ck_assert_mem_eq(y, x, n * 4);
    mem_free(x); mem_free(y); mem_free(z); mem_free(h); mem_free(k);
}
END_TEST

// n random values in [-1, 1) stored as f's type, and their exact fp32 values.
static uint16_t *rand16(const Fmt *f, Rng *r, size_t n, float **wide) {
    uint16_t *h = mem_alloc(MEM_DATA, n * 2 + 2);
    *wide = mem_alloc(MEM_DATA, n * 4 + 4);
    for (size_t i = 0; i < n; i++) {
        h[i] = to16(f, 2.0f * rng_uniform(r) - 1.0f);
        (*wide)[i] = from16(f, h[i]);
    }
    return h;
}

// matmul_dt against a double reference on the widened operands. 16-bit products
// are exact in fp32 (at most 2 x 11 significant bits), so the only error is the
// fp32 sum of K+1 terms: (K+2) u sum|terms|, as matmul's. Shapes cross the CPU
// version's 256 x 256 blocks, ragged edges included; K = 0 leaves beta C.
static void check_matmul_dt(const Fmt *f, int M, int N, int K, int ta, int tb, float beta) {
    Rng r = rng_stream(11, (uint64_t)(M * 7 + N * 3 + K));
    float *a, *b, *C = mem_alloc(MEM_DATA, (size_t)M * N * 4 + 4);
    float *C0 = mem_alloc(MEM_DATA, (size_t)M * N * 4 + 4);
    uint16_t *A = rand16(f, &r, (size_t)M * K, &a), *B = rand16(f, &r, (size_t)K * N, &b);
    for (size_t i = 0; i < (size_t)M * N; i++)
        C[i] = C0[i] = beta == 0.0f ? NAN : rng_uniform(&r);  // beta 0: C is not read
    matmul_dt(C, A, B, f->dt, M, N, K, ta, tb, beta);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double ref = beta == 0.0f ? 0.0 : beta * (double)C0[(size_t)i * N + j], mag = fabs(ref);
            for (int k = 0; k < K; k++) {
                double p = (double)(ta ? a[(size_t)k * M + i] : a[(size_t)i * K + k]) *
                           (tb ? b[(size_t)j * K + k] : b[(size_t)k * N + j]);
                ref += p;
                mag += fabs(p);
            }
            float got = C[(size_t)i * N + j];
            CK_EXPECT(fabs(got - ref) <= (K + 2) * 6e-8 * mag,
                      "matmul_dt %s %dx%dx%d ta=%d tb=%d beta=%g at (%d,%d): %.9g vs %.9g",
                      dtype_name(f->dt), M, N, K, ta, tb, beta, i, j, got, ref);
        }
    mem_free(A); mem_free(B); mem_free(a); mem_free(b); mem_free(C); mem_free(C0);
}

START_TEST(test_matmul_dt) {
    int shapes[][3] = { { 1, 1, 1 }, { 7, 13, 5 }, { 130, 257, 300 }, { 513, 3, 129 },
                        { 300, 520, 7 }, { 5, 27, 0 } };
    const Fmt *fmts[] = { &BF16, &F16 };
    for (int q = 0; q < 2; q++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int t = 0; t < 8; t++)
                check_matmul_dt(fmts[q], shapes[s][0], shapes[s][1], shapes[s][2], t & 1,
                                (t >> 1) & 1, (float)(t >> 2));
    // fp32 operands are matmul's, bit for bit.
    int M = 9, N = 11, K = 13;
    float *A = mem_alloc(MEM_DATA, (size_t)M * K * 4), *B = mem_alloc(MEM_DATA, (size_t)K * N * 4);
    float *C = mem_alloc(MEM_DATA, (size_t)M * N * 4), *D = mem_alloc(MEM_DATA, (size_t)M * N * 4);
    Rng r = rng_stream(12, 0);
    for (int i = 0; i < M * K; i++) A[i] = rng_uniform(&r);
    for (int i = 0; i < K * N; i++) B[i] = rng_uniform(&r);
    matmul(C, A, B, M, N, K, 1, 0, 0.0f);
    matmul_dt(D, A, B, DT_F32, M, N, K, 1, 0, 0.0f);
    ck_assert_mem_eq(C, D, (size_t)M * N * 4);
    mem_free(A); mem_free(B); mem_free(C); mem_free(D);
}
END_TEST

// The kernels that read or write dt where the fp32 stages read fp32 give the
// bits of the fp32 kernel run on the widened operands and rounded once, as lc5
// used them before it had them: matmul_to_dt is matmul_dt then a cast (shapes
// across the 256 x 256 tiles), bias_add_dt a widened bias added, bias_grad_dt
// bias_grad of the widened gradient (onto a widened db) then a cast, one_hot_dt
// one_hot then a cast.
START_TEST(test_dt_kernels_are_fp32_rounded_once) {
    const Fmt *fmts[] = { &BF16, &F16 };
    int shapes[][3] = { { 1, 1, 1 }, { 7, 13, 5 }, { 300, 257, 40 }, { 27, 513, 260 } };
    for (int q = 0; q < 2; q++) {
        const Fmt *f = fmts[q];
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int t = 0; t < 4; t++) {
                int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2], ta = t & 1, tb = t >> 1;
                Rng r = rng_stream(14, (uint64_t)(s * 4 + t));
                float *a, *b, *C = mem_alloc(MEM_DATA, (size_t)M * N * 4);
                uint16_t *A = rand16(f, &r, (size_t)M * K, &a), *B = rand16(f, &r, (size_t)K * N, &b);
                uint16_t *want = mem_alloc(MEM_DATA, (size_t)M * N * 2), *got = mem_alloc(MEM_DATA, (size_t)M * N * 2);
                matmul_dt(C, A, B, f->dt, M, N, K, ta, tb, 0.0f);
                cast_from_f32(want, C, f->dt, (size_t)M * N);
                matmul_to_dt(got, A, B, f->dt, M, N, K, ta, tb);
                ck_assert_msg(memcmp(got, want, (size_t)M * N * 2) == 0, "matmul_to_dt %s %dx%dx%d ta=%d tb=%d",
                              dtype_name(f->dt), M, N, K, ta, tb);
                mem_free(A); mem_free(B); mem_free(a); mem_free(b); mem_free(C); mem_free(want); mem_free(got);
            }
        int rows = 300, cols = 270;  // more columns than bias_grad's block of 256
        Rng r = rng_stream(15, (uint64_t)q);
        float *y, *bw, *Y1 = mem_alloc(MEM_DATA, (size_t)rows * cols * 4), *Y2 = mem_alloc(MEM_DATA, (size_t)rows * cols * 4);
        uint16_t *dY = rand16(f, &r, (size_t)rows * cols, &y), *bias = rand16(f, &r, (size_t)cols, &bw);
        for (size_t i = 0; i < (size_t)rows * cols; i++) Y1[i] = Y2[i] = 2.0f * rng_uniform(&r) - 1.0f;
        bias_add(Y1, bw, rows, cols);
        bias_add_dt(Y2, bias, f->dt, rows, cols);
        ck_assert_mem_eq(Y1, Y2, (size_t)rows * cols * 4);
        bias_grad(bw, y, rows, cols);  // onto the widened bias: db += sums
        uint16_t *want = mem_alloc(MEM_DATA, (size_t)cols * 2);
        cast_from_f32(want, bw, f->dt, (size_t)cols);
        bias_grad_dt(bias, dY, f->dt, rows, cols);
        ck_assert_mem_eq(bias, want, (size_t)cols * 2);
        uint8_t ctx[3 * 4] = { 0, 26, 5, 5, 1, 2, 3, 4, 26, 26, 0, 9 };
        uint16_t oh[3 * 4 * 27], ohw[3 * 4 * 27];
        one_hot(Y1, ctx, 3, 4, 27);
        cast_from_f32(ohw, Y1, f->dt, sizeof oh / 2);
        one_hot_dt(oh, f->dt, ctx, 3, 4, 27);
        ck_assert_mem_eq(oh, ohw, sizeof oh);
        mem_free(dY); mem_free(y); mem_free(bias); mem_free(bw); mem_free(Y1); mem_free(Y2); mem_free(want);
    }
}
END_TEST

// relu_backward_dt passes dy where the 16-bit y is not <= 0, as PyTorch's
// threshold_backward: not at +-0 or negatives; at +inf, the smallest subnormal
// and NaN (whose gradient must carry on, not vanish), yes. In place too.
START_TEST(test_relu_backward_dt) {
    const Fmt *fmts[] = { &BF16, &F16 };
    size_t n = 1000;
    for (int q = 0; q < 2; q++) {
        const Fmt *f = fmts[q];
        Rng r = rng_stream(13, (uint64_t)q);
        float *wide, *dy = mem_alloc(MEM_DATA, n * 4), *dx = mem_alloc(MEM_DATA, n * 4);
        uint16_t *y = rand16(f, &r, n, &wide);
        uint16_t edge[] = { 0x0000, 0x8000, 0x0001, 0x8001, f->inf, (uint16_t)(f->inf | 0x8000),
                            (uint16_t)(f->inf | 1), (uint16_t)(f->inf | 0x8001) };
        for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) y[i] = edge[i];
        for (size_t i = 0; i < n; i++) dy[i] = 2.0f * rng_uniform(&r) - 1.0f;
        relu_backward_dt(dx, dy, y, f->dt, n);
        for (size_t i = 0; i < n; i++) {
            float yi = from16(f, y[i]);
            ck_assert_msg(dx[i] == (yi <= 0.0f ? 0.0f : dy[i]), "%s y=%04x", dtype_name(f->dt), y[i]);
        }
        ck_assert(dx[2] == dy[2] && dx[4] == dy[4] && dx[0] == 0.0f && dx[6] == dy[6] && dx[7] == dy[7]);
        relu_backward_dt(dy, dy, y, f->dt, n);
        ck_assert_mem_eq(dy, dx, n * 4);
        mem_free(y); mem_free(wide); mem_free(dy); mem_free(dx);
    }
}
END_TEST

static Suite *suite(void) {
    kernels_init();  // one BLAS thread, as in the stages
    Suite *s = suite_create("dtype");
    TCase *tc = tcase_create("conversions");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bf16);
    tcase_add_test(tc, test_f16);
    tcase_add_test(tc, test_array_kernels);
    tcase_add_test(tc, test_matmul_dt);
    tcase_add_test(tc, test_relu_backward_dt);
    tcase_add_test(tc, test_dt_kernels_are_fp32_rounded_once);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN("test_dtype", suite)
