// test_kernels_cuda: every GPU kernel against the CPU kernel of the same name,
// on random inputs of awkward sizes (1, 7, 1000, 65537, and one past the grid's
// 4096-block limit). Built only with CUDA; where no GPU can be opened the suite
// says so, runs nothing and passes.
//
// Bounds: elementwise kernels, casts, bias, ReLU, one-hot, Adam and the init
// must be bit-identical (no FMA on the GPU, IEEE division and sqrt, the same
// conversion code). Matrix products differ in summation order: at most twice
// the fp32 bound (K+2) u sum|a b|. Double-precision reductions (loss, sum of
// squares) differ in order only: 1e-12 relative. Gradients of the loss take a
// double exp that may differ in its last bit: 2 fp32 ulps. 16-bit products on
// tensor cores: see check_matmul_dt.
#include "check_unit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/gpu.h"
#include "../common/kernels.h"
#include "../common/kernels_cuda.h"
#include "../common/mem.h"
#include "../common/rng.h"

static Rng rng;
static const size_t sizes[] = { 1, 7, 1000, 65537, 4096 * 256 + 3 };
#define NSIZES (sizeof sizes / sizeof sizes[0])

// The kernels dispatch on rt.device: the test flips it around each call.
#define ON_CPU(stmt) do { rt.device = DEV_CPU; stmt; } while (0)
#define ON_GPU(stmt) do { rt.device = DEV_CUDA; stmt; rt.device = DEV_CPU; } while (0)

static float *host_rand(size_t n, float lo, float hi) {
    float *x = mem_alloc_host(MEM_DATA, n * sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = lo + (hi - lo) * rng_uniform(&rng);
    return x;
}

static void *to_gpu(const void *h, size_t bytes) {
    void *d;
    ON_GPU(d = mem_alloc_gpu(MEM_ACTIVATIONS, bytes); mem_copy(d, h, bytes));
    return d;
}

static void *from_gpu(const void *d, size_t bytes) {
    void *h = mem_alloc_host(MEM_DATA, bytes);
    ON_GPU(mem_copy(h, d, bytes));
    return h;
}

static void free_all(void **p, int n) { for (int i = 0; i < n; i++) mem_free(p[i]); }

static void assert_same_bits(const void *a, const void *b, size_t bytes, const char *what, size_t n) {
    ck_assert_msg(memcmp(a, b, bytes) == 0, "%s (n=%zu): GPU and CPU differ", what, n);
}

// 1 if element i of a dt array is a NaN.
static int is_nan_at(const void *p, DType dt, size_t i) {
    if (dt == DT_F32) return isnan(((const float *)p)[i]);
    uint16_t v = ((const uint16_t *)p)[i];
    return dt == DT_BF16 ? (v & 0x7f80) == 0x7f80 && (v & 0x007f) : (v & 0x7c00) == 0x7c00 && (v & 0x03ff);
}

// Where arithmetic is involved: the same bits, except that a NaN matches any
// NaN. The GPU returns a canonical NaN from arithmetic where x86 keeps the
// operand's sign and payload; pure conversions keep bit equality (above).
static void assert_same_values(const void *a, const void *b, DType dt, size_t n, const char *what) {
    size_t e = dtype_size(dt);
    for (size_t i = 0; i < n; i++) {
        int na = is_nan_at(a, dt, i), nb = is_nan_at(b, dt, i);
        ck_assert_msg(na == nb && (na || memcmp((const char *)a + i * e, (const char *)b + i * e, e) == 0),
                      "%s (n=%zu): GPU and CPU differ at %zu", what, n, i);
    }
}

// ----------------------------------------------------------------------------
// linear layers

// G (GPU) and C (CPU) are op(A) op(B) + beta C0: they may differ by factor x
// the fp32 bound (K+2) u sum|terms| at each element.
static void assert_products_close(const char *what, const float *G, const float *C,
                                  const float *C0, const float *A, const float *B, int M, int N,
                                  int K, int ta, int tb, float beta, double factor) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double mag = fabs(beta * (double)C0[(size_t)i * N + j]);
            for (int k = 0; k < K; k++)
                mag += fabs((double)(ta ? A[(size_t)k * M + i] : A[(size_t)i * K + k]) *
                            (tb ? B[(size_t)j * K + k] : B[(size_t)k * N + j]));
            size_t at = (size_t)i * N + j;
            ck_assert_msg(fabs((double)G[at] - C[at]) <= factor * (K + 2) * 6e-8 * mag + 1e-30,
                          "%s %dx%dx%d ta=%d tb=%d: [%d,%d] gpu %.9g cpu %.9g", what, M, N, K, ta,
                          tb, i, j, G[at], C[at]);
        }
}

static void check_matmul(int M, int N, int K, int ta, int tb, float beta) {
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    float *A = host_rand(na, -1, 1), *B = host_rand(nb, -1, 1), *C = host_rand(nc, -1, 1);
    float *dA = to_gpu(A, na * 4), *dB = to_gpu(B, nb * 4), *dC = to_gpu(C, nc * 4);
    float *C0 = mem_alloc_host(MEM_DATA, nc * 4);
    memcpy(C0, C, nc * 4);
    ON_CPU(matmul(C, A, B, M, N, K, ta, tb, beta));
    ON_GPU(matmul(dC, dA, dB, M, N, K, ta, tb, beta));
    float *G = from_gpu(dC, nc * 4);
    assert_products_close("matmul", G, C, C0, A, B, M, N, K, ta, tb, beta, 2);
    void *all[] = { A, B, C, C0, G, dA, dB, dC };
    free_all(all, 8);
}

START_TEST(test_matmul) {
    int shapes[][3] = { { 1, 1, 1 }, { 7, 13, 5 }, { 33, 65, 129 }, { 384, 27, 256 } };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 4; t++)
            for (int b = 0; b < 2; b++)
                check_matmul(shapes[s][0], shapes[s][1], shapes[s][2], t & 1, t >> 1, (float)b);
}
END_TEST

START_TEST(test_bias_relu_one_hot) {
    int shapes[][2] = { { 1, 1 }, { 7, 27 }, { 384, 256 }, { 3, 70001 }, { 592752, 27 } };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int rows = shapes[s][0], cols = shapes[s][1];
        size_t n = (size_t)rows * cols;
        float *Y = host_rand(n, -1, 1), *b = host_rand((size_t)cols, -1, 1);
        float *dY = host_rand(n, -1, 1), *db = host_rand((size_t)cols, -1, 1);
        float *gY = to_gpu(Y, n * 4), *gb = to_gpu(b, (size_t)cols * 4);
        float *gdY = to_gpu(dY, n * 4), *gdb = to_gpu(db, (size_t)cols * 4);
        ON_CPU(bias_add(Y, b, rows, cols); bias_grad(db, dY, rows, cols));
        ON_GPU(bias_add(gY, gb, rows, cols); bias_grad(gdb, gdY, rows, cols));
        float *hY = from_gpu(gY, n * 4), *hdb = from_gpu(gdb, (size_t)cols * 4);
        assert_same_bits(hY, Y, n * 4, "bias_add", n);
        assert_same_bits(hdb, db, (size_t)cols * 4, "bias_grad", n);
        // relu on the biased values, backward through them
        ON_CPU(relu_forward(Y, Y, n); relu_backward(dY, dY, Y, n));
        ON_GPU(relu_forward(gY, gY, n); relu_backward(gdY, gdY, gY, n));
        float *rY = from_gpu(gY, n * 4), *rdY = from_gpu(gdY, n * 4);
        assert_same_bits(rY, Y, n * 4, "relu_forward", n);
        assert_same_bits(rdY, dY, n * 4, "relu_backward", n);
        void *all[] = { Y, b, dY, db, gY, gb, gdY, gdb, hY, hdb, rY, rdY };
        free_all(all, 12);
    }
    int T = 5, V = 27, rows = 1001;
    uint8_t *ctx = mem_alloc_host(MEM_DATA, (size_t)rows * T);
    for (int i = 0; i < rows * T; i++) ctx[i] = (uint8_t)rng_below(&rng, (uint64_t)V);
    size_t n = (size_t)rows * T * V;
    float *X = mem_alloc_host(MEM_DATA, n * 4), *gX;
    ON_GPU(gX = mem_alloc_gpu(MEM_ACTIVATIONS, n * 4));
    ON_CPU(one_hot(X, ctx, rows, T, V));
    ON_GPU(one_hot(gX, ctx, rows, T, V));  // ctx stays on the host
    float *hX = from_gpu(gX, n * 4);
    assert_same_bits(hX, X, n * 4, "one_hot", n);
    void *all[] = { ctx, X, gX, hX };
    free_all(all, 4);
}
END_TEST

// ----------------------------------------------------------------------------
// loss

START_TEST(test_softmax_xent) {
    int shapes[][2] = { { 1, 27 }, { 7, 3 }, { 384, 27 }, { 1000, 1000 } };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int rows = shapes[s][0], classes = shapes[s][1];
        size_t n = (size_t)rows * classes;
        float *z = host_rand(n, -8, 8), *d = mem_alloc_host(MEM_DATA, n * 4);
        int *t = mem_alloc_host(MEM_DATA, (size_t)rows * sizeof(int));
        for (int r = 0; r < rows; r++) t[r] = (int)rng_below(&rng, (uint64_t)classes);
        float *gz = to_gpu(z, n * 4), *gd;
        ON_GPU(gd = mem_alloc_gpu(MEM_ACTIVATIONS, n * 4));
        double lc, lg;
        ON_CPU(lc = softmax_xent(z, t, d, rows, classes, 1.0f / 384));
        ON_GPU(lg = softmax_xent(gz, t, gd, rows, classes, 1.0f / 384));
        ck_assert_msg(fabs(lg - lc) <= 1e-12 * fabs(lc), "loss %d x %d: gpu %.17g cpu %.17g", rows,
                      classes, lg, lc);
        float *hd = from_gpu(gd, n * 4);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(fabsf(hd[i] - d[i]) <= 2.4e-7f * fabsf(d[i]) + 1e-38f,
                          "dlogits[%zu]: gpu %.9g cpu %.9g", i, hd[i], d[i]);
        // softmax_row reads a GPU row
        float pc[1000], pg[1000];
        ON_CPU(softmax_row(pc, z, classes));
        ON_GPU(softmax_row(pg, gz, classes));
        assert_same_bits(pg, pc, (size_t)classes * 4, "softmax_row", (size_t)classes);
        void *all[] = { z, d, t, gz, gd, hd };
        free_all(all, 6);
    }
}
END_TEST

// ----------------------------------------------------------------------------
// optimizer and reductions

START_TEST(test_adam_and_norms) {
    AdamHyper h = { 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f };
    for (size_t k = 0; k < NSIZES; k++) {
        size_t n = sizes[k], b = n * 4;
        float *p = host_rand(n, -1, 1), *g = host_rand(n, -1, 1);
        float *m = host_rand(n, -0.1f, 0.1f), *v = host_rand(n, 0, 0.01f);
        float *gp = to_gpu(p, b), *gg = to_gpu(g, b), *gm = to_gpu(m, b), *gv = to_gpu(v, b);
        for (long step = 1; step <= 3; step++) {
            ON_CPU(adam_update(p, g, m, v, n, &h, step));
            ON_GPU(adam_update(gp, gg, gm, gv, n, &h, step));
        }
        float *hp = from_gpu(gp, b), *hm = from_gpu(gm, b), *hv = from_gpu(gv, b);
        assert_same_bits(hp, p, b, "adam p", n);
        assert_same_bits(hm, m, b, "adam m", n);
        assert_same_bits(hv, v, b, "adam v", n);
        double sc, sg;
        ON_CPU(sc = sum_squares(g, n));
        ON_GPU(sg = sum_squares(gg, n));
        ck_assert_msg(fabs(sg - sc) <= 1e-12 * sc, "sum_squares n=%zu: gpu %.17g cpu %.17g", n, sg, sc);
        void *all[] = { p, g, m, v, gp, gg, gm, gv, hp, hm, hv };
        free_all(all, 11);
    }
}
END_TEST

START_TEST(test_elementwise) {
    for (size_t k = 0; k < NSIZES; k++) {
        size_t n = sizes[k], b = n * 4;
        float *x = host_rand(n, -2, 2), *y = host_rand(n, -2, 2), *z = mem_alloc_host(MEM_DATA, b);
        float *gx = to_gpu(x, b), *gy = to_gpu(y, b), *gz;
        ON_GPU(gz = mem_alloc_gpu(MEM_ACTIVATIONS, b));
        ON_CPU(axpy(y, 0.37f, x, n); scale(x, -1.7f, n); copy(z, y, n));
        ON_GPU(axpy(gy, 0.37f, gx, n); scale(gx, -1.7f, n); copy(gz, gy, n));
        float *hx = from_gpu(gx, b), *hz = from_gpu(gz, b);
        assert_same_bits(hx, x, b, "axpy, scale", n);
        assert_same_bits(hz, z, b, "copy", n);
        ON_CPU(init_uniform(x, n, 0.125f, 1337, RNG_STREAM_INIT + 2, 12345));
        ON_GPU(init_uniform(gx, n, 0.125f, 1337, RNG_STREAM_INIT + 2, 12345));
        float *ix = from_gpu(gx, b);
        assert_same_bits(ix, x, b, "init_uniform", n);
        // fill, then one bad element anywhere is seen
        int fin;
        ON_GPU(fill(gx, 3.0f, n); fin = all_finite(gx, n));
        ck_assert_int_eq(fin, 1);
        float bad[2] = { INFINITY, NAN };
        for (int j = 0; j < 2; j++) {
            size_t at = rng_below(&rng, n);
            ON_GPU(mem_copy(gx + at, &bad[j], 4); fin = all_finite(gx, n));
            ck_assert_msg(fin == 0, "all_finite missed %g at %zu of %zu", bad[j], at, n);
            ON_GPU(fill(gx, 3.0f, n));
        }
        void *all[] = { x, y, z, gx, gy, gz, hx, hz, ix };
        free_all(all, 9);
    }
}
END_TEST

// ----------------------------------------------------------------------------
// mixed precision

START_TEST(test_mixed_precision) {
    DType types[] = { DT_F32, DT_BF16, DT_F16 };
    for (size_t k = 0; k < NSIZES; k++)
        for (int t = 0; t < 3; t++) {
            DType dt = types[t];
            size_t n = sizes[k], b4 = n * 4, bd = n * dtype_size(dt);
            // fp32 values of every magnitude a 16-bit type meets, and some raw bit patterns
            float *x = mem_alloc_host(MEM_DATA, b4);
            for (size_t i = 0; i < n; i++) {
                uint64_t r = rng_next(&rng);
                x[i] = i % 4 == 3 ? float_of((uint32_t)r)
                                  : ldexpf(2.0f * rng_uniform(&rng) - 1.0f, (int)(r % 48) - 30);
            }
            void *h = mem_alloc_host(MEM_DATA, bd), *h2 = mem_alloc_host(MEM_DATA, bd);
            float *w = mem_alloc_host(MEM_DATA, b4);
            float *gx = to_gpu(x, b4), *gw;
            void *gh;
            ON_GPU(gh = mem_alloc_gpu(MEM_ACTIVATIONS, bd); gw = mem_alloc_gpu(MEM_ACTIVATIONS, b4));
            ON_CPU(cast_from_f32(h, x, dt, n); cast_to_f32(w, h, dt, n));
            ON_GPU(cast_from_f32(gh, gx, dt, n); cast_to_f32(gw, gh, dt, n));
            void *hh = from_gpu(gh, bd), *hw = from_gpu(gw, b4);
            assert_same_bits(hh, h, bd, dtype_name(dt), n);
            assert_same_bits(hw, w, b4, "cast_to_f32", n);
            // round_to, add_to (y += y), copy_dt, finite checks, zero_dt
            ON_CPU(round_to(x, dt, n); copy_dt(h2, h, dt, n); add_to(h2, h, dt, n));
            void *gh2;
            ON_GPU(gh2 = mem_alloc_gpu(MEM_ACTIVATIONS, bd); round_to(gx, dt, n);
                   copy_dt(gh2, gh, dt, n); add_to(gh2, gh, dt, n));
            float *rx = from_gpu(gx, b4);
            void *ah = from_gpu(gh2, bd);
            assert_same_bits(rx, x, b4, "round_to", n);
            assert_same_values(ah, h2, dt, n, "copy_dt + add_to");
            int fc, fg;
            ON_CPU(fc = all_finite_dt(h2, dt, n));
            ON_GPU(fg = all_finite_dt(gh2, dt, n));
            ck_assert_int_eq(fg, fc);
            ON_CPU(zero_dt(h2, dt, n); fc = all_finite_dt(h2, dt, n));
            ON_GPU(zero_dt(gh2, dt, n); fg = all_finite_dt(gh2, dt, n));
            void *zh = from_gpu(gh2, bd);
            assert_same_bits(zh, h2, bd, "zero_dt", n);
            ck_assert_int_eq(fg, 1);
            ck_assert_int_eq(fc, 1);
            void *all[] = { x, h, h2, w, gx, gw, gh, hh, hw, gh2, rx, ah, zh };
            free_all(all, 13);
        }
}
END_TEST

// 16-bit operands (random values rounded to dt) on tensor cores against the
// CPU's widened tiles. Products are exact on both; tensor cores add them in
// fp32 but truncate while aligning several terms at once (Fasi, Higham,
// Mikaitis and Pranesh, 2021), so the bound is twice the fp32 one on each side.
static void check_matmul_dt(DType dt, int M, int N, int K, int ta, int tb, float beta) {
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N, e = dtype_size(dt);
    float *a = host_rand(na, -1, 1), *b = host_rand(nb, -1, 1), *C = host_rand(nc, -1, 1);
    void *A = mem_alloc_host(MEM_DATA, na * e), *B = mem_alloc_host(MEM_DATA, nb * e);
    ON_CPU(cast_from_f32(A, a, dt, na); cast_from_f32(B, b, dt, nb);
           cast_to_f32(a, A, dt, na); cast_to_f32(b, B, dt, nb));
    void *dA = to_gpu(A, na * e), *dB = to_gpu(B, nb * e);
    float *dC = to_gpu(C, nc * 4), *C0 = mem_alloc_host(MEM_DATA, nc * 4);
    memcpy(C0, C, nc * 4);
    ON_CPU(matmul_dt(C, A, B, dt, M, N, K, ta, tb, beta));
    ON_GPU(matmul_dt(dC, dA, dB, dt, M, N, K, ta, tb, beta));
    float *G = from_gpu(dC, nc * 4);
    assert_products_close(dtype_name(dt), G, C, C0, a, b, M, N, K, ta, tb, beta, 4);
    void *all[] = { a, b, C, A, B, dA, dB, dC, C0, G };
    free_all(all, 10);
}

START_TEST(test_matmul_dt) {
    int shapes[][3] = { { 1, 1, 1 }, { 7, 13, 5 }, { 130, 257, 300 }, { 384, 27, 256 } };
    DType types[] = { DT_BF16, DT_F16 };
    for (int q = 0; q < 2; q++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int t = 0; t < 8; t++)
                check_matmul_dt(types[q], shapes[s][0], shapes[s][1], shapes[s][2], t & 1,
                                (t >> 1) & 1, (float)(t >> 2));
    // relu_backward_dt on every 16-bit code pattern the random values give, and zeros
    for (int q = 0; q < 2; q++) {
        size_t n = 65537, e = 2;
        float *yf = host_rand(n, -1, 1), *dy = host_rand(n, -1, 1), *dx = mem_alloc_host(MEM_DATA, n * 4);
        yf[0] = 0.0f;
        yf[1] = -0.0f;
        void *y = mem_alloc_host(MEM_DATA, n * e);
        ON_CPU(cast_from_f32(y, yf, types[q], n); relu_backward_dt(dx, dy, y, types[q], n));
        void *gy = to_gpu(y, n * e), *gdy = to_gpu(dy, n * 4);
        ON_GPU(relu_backward_dt(gdy, gdy, gy, types[q], n));
        float *hdx = from_gpu(gdy, n * 4);
        assert_same_bits(hdx, dx, n * 4, "relu_backward_dt", n);
        void *all[] = { yf, dy, dx, y, gy, gdy, hdx };
        free_all(all, 7);
    }
}
END_TEST

// The 16-bit kernels lc5 reads and writes tensors with: one_hot_dt, bias_add_dt
// and bias_grad_dt bit for bit; matmul_to_dt within tensor cores' product bound
// (check_matmul_dt) plus one unit in the last place of dt, as the two fp32 sums
// may round to neighbouring 16-bit values.
START_TEST(test_dt_kernels) {
    DType types[] = { DT_BF16, DT_F16 };
    for (int q = 0; q < 2; q++) {
        DType dt = types[q];
        int rows = 300, cols = 270, mant = dt == DT_BF16 ? 7 : 10;
        size_t n = (size_t)rows * cols;
        float *yf = host_rand(n, -1, 1), *bf = host_rand((size_t)cols, -1, 1), *Y = host_rand(n, -1, 1);
        void *dY = mem_alloc_host(MEM_DATA, n * 2), *b = mem_alloc_host(MEM_DATA, (size_t)cols * 2);
        ON_CPU(cast_from_f32(dY, yf, dt, n); cast_from_f32(b, bf, dt, (size_t)cols));
        void *gdY = to_gpu(dY, n * 2), *gb = to_gpu(b, (size_t)cols * 2);
        float *gY = to_gpu(Y, n * 4);
        ON_CPU(bias_add_dt(Y, b, dt, rows, cols); bias_grad_dt(b, dY, dt, rows, cols));
        ON_GPU(bias_add_dt(gY, gb, dt, rows, cols); bias_grad_dt(gb, gdY, dt, rows, cols));
        float *hY = from_gpu(gY, n * 4);
        void *hb = from_gpu(gb, (size_t)cols * 2);
        assert_same_bits(hY, Y, n * 4, "bias_add_dt", n);
        assert_same_bits(hb, b, (size_t)cols * 2, "bias_grad_dt", (size_t)cols);
        uint8_t ctx[3 * 4] = { 0, 26, 5, 5, 1, 2, 3, 4, 26, 26, 0, 9 };
        uint16_t oh[3 * 4 * 27];
        void *goh;
        ON_CPU(one_hot_dt(oh, dt, ctx, 3, 4, 27));
        ON_GPU(goh = mem_alloc_gpu(MEM_ACTIVATIONS, sizeof oh); one_hot_dt(goh, dt, ctx, 3, 4, 27));
        void *hoh = from_gpu(goh, sizeof oh);
        assert_same_bits(hoh, oh, sizeof oh, "one_hot_dt", sizeof oh / 2);
        void *all[] = { yf, bf, Y, dY, b, gdY, gb, gY, hY, hb, goh, hoh };
        free_all(all, 12);
        int M = 130, N = 257, K = 300;
        for (int t = 0; t < 4; t++) {
            int ta = t & 1, tb = t >> 1;
            size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
            float *af = host_rand(na, -1, 1), *bw = host_rand(nb, -1, 1), *c = mem_alloc_host(MEM_DATA, nc * 4);
            float *g = mem_alloc_host(MEM_DATA, nc * 4);
            void *A = mem_alloc_host(MEM_DATA, na * 2), *B = mem_alloc_host(MEM_DATA, nb * 2);
            void *C = mem_alloc_host(MEM_DATA, nc * 2);
            ON_CPU(cast_from_f32(A, af, dt, na); cast_from_f32(B, bw, dt, nb); cast_to_f32(af, A, dt, na);
                   cast_to_f32(bw, B, dt, nb); matmul_to_dt(C, A, B, dt, M, N, K, ta, tb));
            void *gA = to_gpu(A, na * 2), *gB = to_gpu(B, nb * 2), *gC;
            ON_GPU(gC = mem_alloc_gpu(MEM_ACTIVATIONS, nc * 2); matmul_to_dt(gC, gA, gB, dt, M, N, K, ta, tb));
            void *hC = from_gpu(gC, nc * 2);
            ON_CPU(cast_to_f32(c, C, dt, nc); cast_to_f32(g, hC, dt, nc));
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double mag = 0;
                    for (int k = 0; k < K; k++)
                        mag += fabs((double)(ta ? af[(size_t)k * M + i] : af[(size_t)i * K + k]) *
                                    (tb ? bw[(size_t)j * K + k] : bw[(size_t)k * N + j]));
                    size_t at = (size_t)i * N + j;
                    double tol = 4 * (K + 2) * 6e-8 * mag + ldexp(fabs((double)c[at]), -mant) + 1e-30;
                    ck_assert_msg(fabs((double)g[at] - c[at]) <= tol, "matmul_to_dt %s ta=%d tb=%d [%d,%d]: gpu %.9g "
                                  "cpu %.9g", dtype_name(dt), ta, tb, i, j, g[at], c[at]);
                }
            void *mats[] = { af, bw, c, g, A, B, C, gA, gB, gC, hC };
            free_all(mats, 11);
        }
    }
}
END_TEST

// Shapes where cuBLAS may split K (small M x N, large K: lc5's weight
// gradients, out x in summed over the batch). Operands are halves in [-2, 2],
// so every product is a multiple of 1/4 and every partial sum over these K is
// exact in fp32: a product that rounds each fp32 sum once to dt gives the CPU's
// bits exactly, and one that adds split-K partial sums in dt (rounding twice,
// what CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION forbids) does not.
START_TEST(test_split_k) {
    int shapes[][3] = { { 8, 8, 65536 }, { 27, 128, 4096 }, { 64, 64, 16384 }, { 1, 256, 32768 } };
    DType types[] = { DT_BF16, DT_F16 };
    for (int q = 0; q < 2; q++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            DType dt = types[q];
            int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
            size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
            float *af = host_rand(na, -2.49f, 2.49f), *bf = host_rand(nb, -2.49f, 2.49f);
            for (size_t i = 0; i < na; i++) af[i] = roundf(2 * af[i]) / 2;
            for (size_t i = 0; i < nb; i++) bf[i] = roundf(2 * bf[i]) / 2;
            void *A = mem_alloc_host(MEM_DATA, na * 2), *B = mem_alloc_host(MEM_DATA, nb * 2);
            void *C = mem_alloc_host(MEM_DATA, nc * 2), *gC;
            ON_CPU(cast_from_f32(A, af, dt, na); cast_from_f32(B, bf, dt, nb); matmul_to_dt(C, A, B, dt, M, N, K, 1, 0));
            void *gA = to_gpu(A, na * 2), *gB = to_gpu(B, nb * 2);
            ON_GPU(gC = mem_alloc_gpu(MEM_ACTIVATIONS, nc * 2); matmul_to_dt(gC, gA, gB, dt, M, N, K, 1, 0));
            void *hC = from_gpu(gC, nc * 2);
            char what[64];
            snprintf(what, sizeof what, "matmul_to_dt %s %dx%dx%d (split-K)", dtype_name(dt), M, N, K);
            assert_same_bits(hC, C, nc * 2, what, nc);
            void *all[] = { af, bf, A, B, C, gA, gB, gC, hC };
            free_all(all, 9);
        }
}
END_TEST

static Suite *suite(void) {
    rng = rng_stream(4242, 0);
    Suite *s = suite_create("kernels_cuda");
    TCase *tc = tcase_create("gpu vs cpu");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_matmul);
    tcase_add_test(tc, test_bias_relu_one_hot);
    tcase_add_test(tc, test_softmax_xent);
    tcase_add_test(tc, test_adam_and_norms);
    tcase_add_test(tc, test_elementwise);
    tcase_add_test(tc, test_mixed_precision);
    tcase_add_test(tc, test_matmul_dt);
    tcase_add_test(tc, test_dt_kernels);
    tcase_add_test(tc, test_split_k);
    suite_add_tcase(s, tc);
    return s;
}

// The GPUs nvidia-smi lists (0 where it is missing or lists none).
static int gpus_listed(void) {
    FILE *p = popen("nvidia-smi -L 2>/dev/null", "r");
    if (!p) return 0;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, p)) n += strncmp(line, "GPU ", 4) == 0;
    (void)pclose(p);
    return n;
}

// A single process, no MPI: the GPU's kernels against the CPU's (ON_GPU and
// ON_CPU flip the runtime's device around each call).
int main(void) {
    rt.prog = "test_kernels_cuda";
    // The NaN test of assert_same_values, which runs with or without a GPU:
    // any NaN of each type is one (a canonical one and one with sign and
    // payload), an infinity is not.
    uint16_t b[] = { 0x7fc0, 0xffc1, 0x7f80 }, f[] = { 0x7e00, 0xfc01, 0x7c00 };
    float x[] = { NAN, -NAN, INFINITY };
    for (size_t i = 0; i < 3; i++)
        if (is_nan_at(b, DT_BF16, i) != (i < 2) || is_nan_at(f, DT_F16, i) != (i < 2) ||
            is_nan_at(x, DT_F32, i) != (i < 2)) {
            printf("test_kernels_cuda: FAILED, is_nan_at is wrong at %zu\n", i);
            return EXIT_FAILURE;
        }
    const char *why = gpu_open(0);
    if (why) {
        // A GPU that nvidia-smi lists but that cannot be opened is a broken
        // setup (a driver older than the build's runtime, say): a failure.
        int listed = gpus_listed();
        if (listed > 0) {
            printf("test_kernels_cuda: FAILED, nvidia-smi lists %d GPU(s) but none could be opened: %s\n", listed, why);
            return EXIT_FAILURE;
        }
        printf("test_kernels_cuda: SKIPPED, 8 GPU-vs-CPU tests not run: %s\n", why);
        return 77;  // skipped, not passed: tests/run.sh counts it so
    }
    kernels_init();
    ON_GPU(cuda_kernels_init());
    printf("test_kernels_cuda: on %s\n", gpu_describe());
    SRunner *sr = srunner_create(suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    ON_GPU(cuda_kernels_close());
    gpu_close();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
