// kernels_cpu: the CPU kernels. Matrix products go to gemm (OpenBLAS or oneDNN,
// as measured); the rest are loops simple enough that the compiler vectorizes
// them, those marked ZC_WIDE for AVX2 too where the processor has it (hd.h).
// On a CUDA run each function hands its work to the GPU version first (ON_GPU).
#include "base.h"
#include "clock.h"
#include "exercise.h"
#include "gemm.h"
#include "kernels.h"
#include "mem.h"
#include "rng.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef ZC_CUDA
#include "gpu.h"
#include "kernels_cuda.h"
#define ON_GPU(call) do { if (rt.device == DEV_CUDA) { call; return; } } while (0)
#define ON_GPU_RETURN(call) do { if (rt.device == DEV_CUDA) return call; } while (0)
#else
#define ON_GPU(call) do { } while (0)
#define ON_GPU_RETURN(call) do { } while (0)
#endif

void kernels_init(void) { gemm_init(); }

void kernels_wait(void) {
#ifdef ZC_CUDA
    if (rt.device == DEV_CUDA) gpu_sync();
#endif
}

// ----------------------------------------------------------------------------
// linear layers

void matmul(float *C, const float *A, const float *B, int M, int N, int K,
            int ta, int tb, float beta) {
    if (M < 0 || N < 0 || K < 0) fatal("matmul: negative shape %dx%dx%d", M, N, K);
    compute_mark();
    ON_GPU(cuda_matmul(C, A, B, M, N, K, ta, tb, beta));
    int lda = ta ? M : K, ldb = tb ? K : N;
    gemm_f32(ta, tb, M, N, K, A, lda > 0 ? lda : 1, B, ldb > 0 ? ldb : 1, beta, C, N > 0 ? N : 1);
}

ZC_WIDE void bias_add(float *Y, const float *b, int rows, int cols) {
    ON_GPU(cuda_bias_add(Y, b, rows, cols));
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) Y[(size_t)r * cols + c] += b[c];
}

// Each column summed over the rows in double, in row order (the GPU's order
// too, so both give the same bits): summed in fp32, the output bias's gradient
// over the whole data set (600k rows) would be off by 1e-3.
ZC_WIDE void bias_grad(float *db, const float *dY, int rows, int cols) {
    ON_GPU(cuda_bias_grad(db, dY, rows, cols));
    enum { BLOCK = 256 };  // columns at a time: the sums stay in cache
    double acc[BLOCK];
    for (int c0 = 0; c0 < cols; c0 += BLOCK) {
        int n = cols - c0 < BLOCK ? cols - c0 : BLOCK;
        for (int c = 0; c < n; c++) acc[c] = db[c0 + c];
        for (int r = 0; r < rows; r++) {
            const float *y = dY + (size_t)r * cols + c0;
            for (int c = 0; c < n; c++) acc[c] += y[c];
        }
        for (int c = 0; c < n; c++) db[c0 + c] = (float)acc[c];
    }
}

ZC_WIDE void relu_forward(float *y, const float *x, size_t n) {
    ON_GPU(cuda_relu_forward(y, x, n));
    for (size_t i = 0; i < n; i++) y[i] = x[i] <= 0.0f ? 0.0f : x[i];
}

ZC_WIDE void relu_backward(float *dx, const float *dy, const float *y, size_t n) {
    ON_GPU(cuda_relu_backward(dx, dy, y, n));
    // dy read on every element, not only where y > 0: a select instead of a branch
    // (taken at random, half the time), so the loop vectorizes; the same bits.
    for (size_t i = 0; i < n; i++) {
        float g = dy[i];
        dx[i] = y[i] <= 0.0f ? 0.0f : g;
    }
}

void one_hot(float *X, const uint8_t *ctx, int rows, int T, int V) {
    ON_GPU(cuda_one_hot(X, DT_F32, ctx, rows, T, V));
    size_t width = (size_t)T * V;
    for (int r = 0; r < rows; r++) {
        float *x = X + (size_t)r * width;
        for (size_t i = 0; i < width; i++) x[i] = 0.0f;
        for (int t = 0; t < T; t++) x[(size_t)t * V + ctx[(size_t)r * T + t]] = 1.0f;
    }
}

// ----------------------------------------------------------------------------
// loss

void softmax_row(float *probs, const float *logits, int classes) {
    if (mem_is_gpu(logits)) {  // bring the row over, then work in place
        mem_copy(probs, logits, (size_t)classes * sizeof(float));
        logits = probs;
    }
    float mx = logits[0];
    for (int c = 1; c < classes; c++) mx = logits[c] > mx ? logits[c] : mx;
    double sum = 0.0;
    for (int c = 0; c < classes; c++) sum += exp((double)(logits[c] - mx));
    for (int c = 0; c < classes; c++) probs[c] = (float)(exp((double)(logits[c] - mx)) / sum);
}

double softmax_xent(const float *logits, const int *targets, float *dlogits, int rows,
                    int classes, float grad_scale) {
    ON_GPU_RETURN(cuda_softmax_xent(logits, targets, dlogits, rows, classes, grad_scale));
    double loss = 0.0;
    for (int r = 0; r < rows; r++) {
        const float *z = logits + (size_t)r * classes;
        float mx = z[0];
        for (int c = 1; c < classes; c++) mx = z[c] > mx ? z[c] : mx;
        double sum = 0.0;  // log-sum-exp in double: the loss is what the learner reads
        for (int c = 0; c < classes; c++) sum += exp((double)(z[c] - mx));
        int t = targets[r];
        loss += log(sum) - (double)(z[t] - mx);
        if (!dlogits) continue;
        float *d = dlogits + (size_t)r * classes;
        for (int c = 0; c < classes; c++)
            d[c] = (float)(exp((double)(z[c] - mx)) / sum) * grad_scale;
        d[t] -= grad_scale;
    }
    return loss;
}

// ----------------------------------------------------------------------------
// optimizer

ZC_WIDE void adam_update(float *p, const float *g, float *m, float *v, size_t n,
                         const AdamHyper *h, long step) {
    // EXERCISE lc0.1: one AdamW step on n parameters (PyTorch's formula, kernels.h)
    //| m = beta1 m + (1 - beta1) g and v = beta2 v + (1 - beta2) g^2, stored
    //| back; bias correction 1 - beta^step for both; decoupled weight decay:
    //| p *= 1 - lr wd, outside m and v; then p -= step_size m / (sqrt(v)/bc2 + eps).
    //| Compute the step's scalars first: on a GPU (--device cuda) the loop is the
    //| CUDA kernel's, so hand them to it before your CPU loop, as the kernels
    //| around this one do: ON_GPU(cuda_adam_update(p, g, m, v, n, decay, step_size,
    //| bc2_sqrt, beta1, beta2, eps)) (kernels_cuda.h; the CPU build ignores it).
    float decay = 1.0f - h->lr * h->weight_decay;
    float step_size = (float)(h->lr / (1.0 - pow(h->beta1, (double)step)));
    float bc2_sqrt = (float)sqrt(1.0 - pow(h->beta2, (double)step));
    float b1 = h->beta1, b2 = h->beta2, eps = h->eps;  // locals: h could alias p, m or v
    ON_GPU(cuda_adam_update(p, g, m, v, n, decay, step_size, bc2_sqrt, b1, b2, eps));
    for (size_t i = 0; i < n; i++) {
        m[i] = b1 * m[i] + (1.0f - b1) * g[i];
        v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
        float denom = sqrtf(v[i]) / bc2_sqrt + eps;
        p[i] = p[i] * decay - step_size * m[i] / denom;
    }
    // STUB: (void)p, (void)g, (void)m, (void)v, (void)n, (void)h, (void)step;
    // END EXERCISE
}

double sum_squares(const float *x, size_t n) {
    ON_GPU_RETURN(cuda_sum_squares(x, n));
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
    return s;
}

float clip_factor(double norm, float max_norm) {
    double f = max_norm / (norm + 1e-6);
    return f < 1.0 ? (float)f : 1.0f;
}

// ----------------------------------------------------------------------------
// elementwise

ZC_WIDE void fill(float *x, float v, size_t n) {
    ON_GPU(cuda_fill(x, v, n));
    for (size_t i = 0; i < n; i++) x[i] = v;
}

void copy(float *dst, const float *src, size_t n) { copy_dt(dst, src, DT_F32, n); }

ZC_WIDE void scale(float *x, float a, size_t n) {
    ON_GPU(cuda_scale(x, a, n));
    for (size_t i = 0; i < n; i++) x[i] *= a;
}

ZC_WIDE void axpy(float *y, float a, const float *x, size_t n) {
    ON_GPU(cuda_axpy(y, a, x, n));
    for (size_t i = 0; i < n; i++) y[i] += a * x[i];
}

ZC_WIDE int all_finite(const float *x, size_t n) {
    ON_GPU_RETURN(cuda_all_finite_dt(x, DT_F32, n));
    int ok = 1;
    for (size_t i = 0; i < n; i++) ok &= isfinite(x[i]) != 0;
    return ok;
}

void init_uniform(float *dst, size_t n, float bound, uint64_t seed, uint64_t stream,
                  uint64_t first) {
    ON_GPU(cuda_init_uniform(dst, n, bound, seed, stream, first));
    for (size_t i = 0; i < n; i++)
        dst[i] = (2.0f * rng_uniform_at(seed, stream, first + i) - 1.0f) * bound;
}

// ----------------------------------------------------------------------------
// mixed precision

static void check_float_type(DType dt, const char *what) {
    if (dt != DT_F32 && dt != DT_BF16 && dt != DT_F16) fatal("%s: %s is not a float type", what, dtype_name(dt));
}

ZC_WIDE void cast_to_f32(float *dst, const void *src, DType dt, size_t n) {
    check_float_type(dt, "cast_to_f32");
    ON_GPU(if ((const void *)dst != src) cuda_cast_to_f32(dst, src, dt, n));
    if (dt == DT_F32) { if ((const void *)dst != src) copy(dst, src, n); return; }
    const uint16_t *h = src;
    if (dt == DT_BF16) for (size_t i = 0; i < n; i++) dst[i] = bf16_to_f32(h[i]);
    else for (size_t i = 0; i < n; i++) dst[i] = f16_to_f32(h[i]);
}

ZC_WIDE void cast_from_f32(void *dst, const float *src, DType dt, size_t n) {
    check_float_type(dt, "cast_from_f32");
    ON_GPU(if (dst != (const void *)src) cuda_cast_from_f32(dst, src, dt, n));
    if (dt == DT_F32) { if (dst != (const void *)src) copy(dst, src, n); return; }
    uint16_t *h = dst;
    if (dt == DT_BF16) for (size_t i = 0; i < n; i++) h[i] = f32_to_bf16(src[i]);
    else for (size_t i = 0; i < n; i++) h[i] = f32_to_f16(src[i]);
}

ZC_WIDE void round_to(float *x, DType dt, size_t n) {
    check_float_type(dt, "round_to");
    ON_GPU(cuda_round_to(x, dt, n));
    if (dt == DT_F32) return;
    if (dt == DT_BF16) for (size_t i = 0; i < n; i++) x[i] = bf16_to_f32(f32_to_bf16(x[i]));
    else for (size_t i = 0; i < n; i++) x[i] = f16_to_f32(f32_to_f16(x[i]));
}

// Rows r0.. (nr of them) and columns c0.. (nc) of the row-major matrix X of type
// dt (leading dimension ld), widened into dst as a packed [nr][nc] fp32 block.
static void widen_block(float *dst, const void *X, DType dt, int ld, int r0, int nr, int c0,
                        int nc) {
    const char *x = X;
    size_t esz = dtype_size(dt);
    for (int r = 0; r < nr; r++)
        cast_to_f32(dst + (size_t)r * nc, x + ((size_t)(r0 + r) * ld + c0) * esz, dt, (size_t)nc);
}

// Blocks of C (TILE x TILE) multiplied from widened panels of A and B, each
// panel TILE rows or columns by the whole K, as a BLAS packs its panels: fp32
// scratch grows with K, not with the matrices. Widening is exact, so CBLAS
// computes the 16-bit products exactly and sums them in fp32.
enum { TILE = 256 };

// The tiles of C = op(A) op(B) + beta C with A, B of type dt; C is fp32, or
// with ct 16-bit each fp32 tile is rounded into C (beta 0): what matmul_dt and
// matmul_to_dt share. Panels and the tile are kernel workspace.
static void matmul_tiles(void *C, DType ct, const void *A, const void *B, DType dt, int M, int N, int K,
                         int ta, int tb, float beta) {
    if (M == 0 || N == 0) return;
    int mb = M < TILE ? M : TILE, nb = N < TILE ? N : TILE, k1 = K > 0 ? K : 1;
    float *a = mem_alloc_scratch(MEM_WORKSPACE, (size_t)mb * k1 * sizeof(float));
    float *b = mem_alloc_scratch(MEM_WORKSPACE, (size_t)k1 * nb * sizeof(float));
    float *tile = ct == DT_F32 ? NULL : mem_alloc_scratch(MEM_WORKSPACE, (size_t)mb * nb * sizeof(float));
    for (int i0 = 0; i0 < M; i0 += mb) {
        int ni = M - i0 < mb ? M - i0 : mb;
        if (ta) widen_block(a, A, dt, M, 0, K, i0, ni);  // op(A)[i0.., :], packed as stored
        else widen_block(a, A, dt, K, i0, ni, 0, K);
        for (int j0 = 0; j0 < N; j0 += nb) {
            int nj = N - j0 < nb ? N - j0 : nb;
            if (nj < N || i0 == 0) {  // with one column block, B is widened once
                if (tb) widen_block(b, B, dt, K, j0, nj, 0, K);  // op(B)[:, j0..]
                else widen_block(b, B, dt, N, 0, K, j0, nj);
            }
            float *c = tile ? tile : (float *)C + (size_t)i0 * N + j0;
            gemm_f32(ta, tb, ni, nj, K, a, ta ? ni : k1, b, tb ? k1 : nj, beta, c, tile ? nj : N);
            for (int i = 0; tile && i < ni; i++)
                cast_from_f32((char *)C + ((size_t)(i0 + i) * N + j0) * dtype_size(ct), tile + (size_t)i * nj,
                              ct, (size_t)nj);
        }
    }
    mem_free(a);
    mem_free(b);
    mem_free(tile);
}

void matmul_dt(float *C, const void *A, const void *B, DType dt, int M, int N, int K,
               int ta, int tb, float beta) {
    check_float_type(dt, "matmul_dt");
    if (dt == DT_F32) { matmul(C, A, B, M, N, K, ta, tb, beta); return; }
    if (M < 0 || N < 0 || K < 0) fatal("matmul_dt: negative shape %dx%dx%d", M, N, K);
    compute_mark();
    ON_GPU(cuda_matmul_dt(C, A, B, dt, M, N, K, ta, tb, beta));
    matmul_tiles(C, DT_F32, A, B, dt, M, N, K, ta, tb, beta);
}

void matmul_to_dt(void *C, const void *A, const void *B, DType dt, int M, int N, int K, int ta, int tb) {
    check_float_type(dt, "matmul_to_dt");
    if (dt == DT_F32) { matmul(C, A, B, M, N, K, ta, tb, 0.0f); return; }
    if (M < 0 || N < 0 || K < 0) fatal("matmul_to_dt: negative shape %dx%dx%d", M, N, K);
    compute_mark();
    ON_GPU(cuda_matmul_to_dt(C, A, B, dt, M, N, K, ta, tb));
    matmul_tiles(C, dt, A, B, dt, M, N, K, ta, tb, 0.0f);
}

void one_hot_dt(void *X, DType dt, const uint8_t *ctx, int rows, int T, int V) {
    check_float_type(dt, "one_hot_dt");
    if (dt == DT_F32) { one_hot(X, ctx, rows, T, V); return; }
    ON_GPU(cuda_one_hot(X, dt, ctx, rows, T, V));
    size_t width = (size_t)T * V;
    uint16_t *x = X, one = dt == DT_BF16 ? f32_to_bf16(1.0f) : f32_to_f16(1.0f);
    memset(x, 0, (size_t)rows * width * sizeof *x);
    for (int r = 0; r < rows; r++)
        for (int t = 0; t < T; t++) x[(size_t)r * width + (size_t)t * V + ctx[(size_t)r * T + t]] = one;
}

ZC_WIDE void bias_add_dt(float *Y, const void *b, DType dt, int rows, int cols) {
    check_float_type(dt, "bias_add_dt");
    if (dt == DT_F32) { bias_add(Y, b, rows, cols); return; }
    ON_GPU(cuda_bias_add_dt(Y, b, dt, rows, cols));
    const uint16_t *h = b;
    for (int r = 0; r < rows; r++) {
        float *y = Y + (size_t)r * cols;
        if (dt == DT_BF16) for (int c = 0; c < cols; c++) y[c] += bf16_to_f32(h[c]);
        else for (int c = 0; c < cols; c++) y[c] += f16_to_f32(h[c]);
    }
}

// bias_grad's sums (in double, in row order) of the widened dY, rounded to fp32
// and then to dt, column by column.
ZC_WIDE void bias_grad_dt(void *db, const void *dY, DType dt, int rows, int cols) {
    check_float_type(dt, "bias_grad_dt");
    if (dt == DT_F32) { bias_grad(db, dY, rows, cols); return; }
    ON_GPU(cuda_bias_grad_dt(db, dY, dt, rows, cols));
    enum { BLOCK = 256 };  // columns at a time, as bias_grad
    double acc[BLOCK];
    uint16_t *out = db;
    const uint16_t *y = dY;
    for (int c0 = 0; c0 < cols; c0 += BLOCK) {
        int n = cols - c0 < BLOCK ? cols - c0 : BLOCK;
        for (int c = 0; c < n; c++) acc[c] = dt == DT_BF16 ? bf16_to_f32(out[c0 + c]) : f16_to_f32(out[c0 + c]);
        for (int r = 0; r < rows; r++) {
            const uint16_t *h = y + (size_t)r * cols + c0;
            if (dt == DT_BF16) for (int c = 0; c < n; c++) acc[c] += bf16_to_f32(h[c]);
            else for (int c = 0; c < n; c++) acc[c] += f16_to_f32(h[c]);
        }
        for (int c = 0; c < n; c++)
            out[c0 + c] = dt == DT_BF16 ? f32_to_bf16((float)acc[c]) : f32_to_f16((float)acc[c]);
    }
}

ZC_WIDE void relu_backward_dt(float *dx, const float *dy, const void *y, DType dt, size_t n) {
    check_float_type(dt, "relu_backward_dt");
    if (dt == DT_F32) { relu_backward(dx, dy, y, n); return; }
    ON_GPU(cuda_relu_backward_dt(dx, dy, y, dt, n));
    const uint16_t *h = y;
    // dy read on every element, as in relu_backward
    if (dt == DT_BF16) for (size_t i = 0; i < n; i++) { float g = dy[i]; dx[i] = bf16_to_f32(h[i]) <= 0.0f ? 0.0f : g; }
    else for (size_t i = 0; i < n; i++) { float g = dy[i]; dx[i] = f16_to_f32(h[i]) <= 0.0f ? 0.0f : g; }
}

ZC_WIDE void add_to(void *y, const void *x, DType dt, size_t n) {
    check_float_type(dt, "add_to");
    ON_GPU(cuda_add_to(y, x, dt, n));
    if (dt == DT_F32) { axpy(y, 1.0f, x, n); return; }
    uint16_t *a = y;
    const uint16_t *b = x;
    if (dt == DT_BF16) for (size_t i = 0; i < n; i++) a[i] = f32_to_bf16(bf16_to_f32(a[i]) + bf16_to_f32(b[i]));
    else for (size_t i = 0; i < n; i++) a[i] = f32_to_f16(f16_to_f32(a[i]) + f16_to_f32(b[i]));
}

void copy_dt(void *dst, const void *src, DType dt, size_t n) {
    ON_GPU(cuda_copy_bytes(dst, src, n * dtype_size(dt)));
    if (n) memcpy(dst, src, n * dtype_size(dt));
}

void zero_dt(void *x, DType dt, size_t n) {
    ON_GPU(cuda_zero_bytes(x, n * dtype_size(dt)));
    if (n) memset(x, 0, n * dtype_size(dt));  // +0.0 is all zero bits in every float type
}

ZC_WIDE int all_finite_dt(const void *x, DType dt, size_t n) {
    check_float_type(dt, "all_finite_dt");
    ON_GPU_RETURN(cuda_all_finite_dt(x, dt, n));
    if (dt == DT_F32) return all_finite(x, n);
    // A 16-bit float is inf or NaN when its exponent bits are all ones.
    uint16_t mask = dt == DT_BF16 ? 0x7f80u : 0x7c00u;
    const uint16_t *h = x;
    for (size_t i = 0; i < n; i++)
        if ((h[i] & mask) == mask) return 0;
    return 1;
}
