// kernels_cuda: the GPU kernels. Matrix products go to cuBLAS in full fp32 (no
// TF32), or on tensor cores with 16-bit operands and fp32 sums (matmul_dt), so
// the GPU follows the CPU; the elementwise kernels are built with
// --fmad=false and use dtype.h's conversions, so they compute the CPU's exact
// bits. Reductions that return a number (loss, sum of squares, finite check)
// add per-row or per-block partials on the host, in a fixed order.
#include "kernels_cuda.h"
#include "rng.h"
extern "C" {  // the runtime is C
#include "gpu.h"
#include "mem.h"
}

#include <cublas_v2.h>
#include <dlfcn.h>
#include <math.h>
#include <string.h>

#define CHECK_CUBLAS(call) do { cublasStatus_t s_ = (call); if (s_ != CUBLAS_STATUS_SUCCESS) \
    fatal("%s: %s", #call, cublas.status_string(s_)); } while (0)
#define CHECK_LAUNCH(name) do { cudaError_t e_ = cudaGetLastError(); if (e_ != cudaSuccess) \
    fatal("kernel %s: %s", name, cudaGetErrorString(e_)); } while (0)

#define THREADS 256
#define MAX_BLOCKS 4096  // grid-stride loops beyond this

// cuBLAS is opened when the GPU path starts (cuda_kernels_init), not linked:
// with cuBLASLt it is half a gigabyte of code, and linked, every process of a
// CUDA build paid about 0.17 s to map and relocate it before main, on the CPU
// too (make test starts thousands). These are the calls this file makes, as
// pointers of the header's own types (GemmEx spelled out: C++ sees an
// overload of it beside the C function).
static struct {
    decltype(&cublasCreate) create;
    decltype(&cublasDestroy) destroy;
    decltype(&cublasSetStream) set_stream;
    decltype(&cublasSetMathMode) set_math_mode;
    decltype(&cublasSgemm) sgemm;
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                              const void *, const void *, cudaDataType, int, const void *, cudaDataType, int,
                              const void *, void *, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
    decltype(&cublasGetStatusString) status_string;
} cublas;
static cublasHandle_t blas;

// Scratch for inputs that live on the host (a batch's context and targets) and
// for partial results on their way back. Grown on demand, freed at close.
static struct {
    uint8_t *ctx;       // GPU
    int *targets;       // GPU
    double *part;       // GPU: per-row losses, per-block sums
    double *host_part;  // host copy of part
    int *flag;          // GPU: finite check
    size_t ctx_n, targets_n, part_n;
} s;

static cudaStream_t stream(void) { return gpu_compute_stream(); }

static unsigned blocks_for(size_t n) {
    size_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b < 1 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : b);
}

#define GRID_STRIDE(i, n) \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n); \
         i += (size_t)gridDim.x * blockDim.x)

// Grows a GPU scratch buffer to n elements of size esz.
static void *grow(void *p, size_t *have, size_t n, size_t esz) {
    if (n <= *have) return p;
    mem_free(p);
    *have = n;
    return mem_alloc_gpu(MEM_DATA, n * esz);
}

// Room for n partials on the GPU and their host copy, grown together.
static double *part_buffers(size_t n) {
    if (n > s.part_n) {
        mem_free(s.part);
        mem_free(s.host_part);
        s.part = (double *)mem_alloc_gpu(MEM_DATA, n * sizeof(double));
        s.host_part = (double *)mem_alloc_pinned(MEM_DATA, n * sizeof(double));
        s.part_n = n;
    }
    return s.part;
}

// The n partials in s.part, copied back and added in order.
static double sum_parts(size_t n) {
    CHECK_CUDA(cudaMemcpyAsync(s.host_part, s.part, n * sizeof(double), cudaMemcpyDeviceToHost,
                               stream()));
    CHECK_CUDA(cudaStreamSynchronize(stream()));
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) sum += s.host_part[i];
    return sum;
}

// ----------------------------------------------------------------------------
// lifetime

#define NAME_(x) #x
#define NAME(f) NAME_(f)  // the name after cublas_v2.h's renaming (cublasCreate_v2)

static void *cublas_symbol(void *lib, const char *name) {
    void *f = dlsym(lib, name);
    if (!f) fatal("cuBLAS: no %s in libcublas.so.%d: %s", name, CUBLAS_VER_MAJOR, dlerror());
    return f;
}

// Once per process; never closed (cuBLAS keeps state until exit). The file is
// found as the linked libraries are: this program's run path, LD_LIBRARY_PATH.
static void cublas_open(void) {
    if (cublas.create) return;
    void *lib = dlopen("libcublas.so." NAME(CUBLAS_VER_MAJOR), RTLD_NOW | RTLD_LOCAL);
    if (!lib) fatal("cannot load cuBLAS, which this build was compiled against: %s", dlerror());
    cublas.status_string = (decltype(cublas.status_string))cublas_symbol(lib, NAME(cublasGetStatusString));
    cublas.destroy = (decltype(cublas.destroy))cublas_symbol(lib, NAME(cublasDestroy));
    cublas.set_stream = (decltype(cublas.set_stream))cublas_symbol(lib, NAME(cublasSetStream));
    cublas.set_math_mode = (decltype(cublas.set_math_mode))cublas_symbol(lib, NAME(cublasSetMathMode));
    cublas.sgemm = (decltype(cublas.sgemm))cublas_symbol(lib, NAME(cublasSgemm));
    cublas.gemm_ex = (decltype(cublas.gemm_ex))cublas_symbol(lib, "cublasGemmEx");
    cublas.create = (decltype(cublas.create))cublas_symbol(lib, NAME(cublasCreate));  // last: the "opened" mark
}

void cuda_kernels_init(void) {
    cublas_open();
    CHECK_CUBLAS(cublas.create(&blas));
    CHECK_CUBLAS(cublas.set_stream(blas, stream()));
    CHECK_CUBLAS(cublas.set_math_mode(blas, CUBLAS_PEDANTIC_MATH));  // fp32 stays fp32
    s.flag = (int *)mem_alloc_gpu(MEM_DATA, sizeof(int));
}

void cuda_kernels_close(void) {
    if (blas) CHECK_CUBLAS(cublas.destroy(blas));
    blas = NULL;
    mem_free(s.ctx);
    mem_free(s.targets);
    mem_free(s.part);
    mem_free(s.host_part);
    mem_free(s.flag);
    memset(&s, 0, sizeof s);
}

// ----------------------------------------------------------------------------
// linear layers

void cuda_matmul(float *C, const float *A, const float *B, int M, int N, int K,
                 int ta, int tb, float beta) {
    if (M == 0 || N == 0) return;
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
    const float one = 1.0f;
    int lda = ta ? M : K, ldb = tb ? K : N;
    CHECK_CUBLAS(cublas.sgemm(blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                              N, M, K, &one, B, ldb > 0 ? ldb : 1, A, lda > 0 ? lda : 1, &beta,
                              C, N));
}

__global__ void k_bias_add(float *Y, const float *b, size_t n, int cols) {
    GRID_STRIDE(i, n) Y[i] += b[i % cols];
}
void cuda_bias_add(float *Y, const float *b, int rows, int cols) {
    size_t n = (size_t)rows * cols;
    if (!n) return;
    k_bias_add<<<blocks_for(n), THREADS, 0, stream()>>>(Y, b, n, cols);
    CHECK_LAUNCH("bias_add");
}

// One thread per column, rows in order, summed in double: the CPU's additions,
// so the same bits.
__global__ void k_bias_grad(float *db, const float *dY, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    double acc = db[c];
    for (int r = 0; r < rows; r++) acc += dY[(size_t)r * cols + c];
    db[c] = (float)acc;
}
void cuda_bias_grad(float *db, const float *dY, int rows, int cols) {
    if (cols <= 0) return;
    k_bias_grad<<<(cols + THREADS - 1) / THREADS, THREADS, 0, stream()>>>(db, dY, rows, cols);
    CHECK_LAUNCH("bias_grad");
}

__global__ void k_relu_forward(float *y, const float *x, size_t n) {
    GRID_STRIDE(i, n) y[i] = x[i] <= 0.0f ? 0.0f : x[i];
}
void cuda_relu_forward(float *y, const float *x, size_t n) {
    if (!n) return;
    k_relu_forward<<<blocks_for(n), THREADS, 0, stream()>>>(y, x, n);
    CHECK_LAUNCH("relu_forward");
}

__global__ void k_relu_backward(float *dx, const float *dy, const float *y, size_t n) {
    GRID_STRIDE(i, n) dx[i] = y[i] <= 0.0f ? 0.0f : dy[i];
}
void cuda_relu_backward(float *dx, const float *dy, const float *y, size_t n) {
    if (!n) return;
    k_relu_backward<<<blocks_for(n), THREADS, 0, stream()>>>(dx, dy, y, n);
    CHECK_LAUNCH("relu_backward");
}

// X of type dt: 1.0 is 0x3f80 in bf16 and 0x3c00 in fp16; 0 is 0 in all three.
__global__ void k_one_hot(void *X, DType dt, const uint8_t *ctx, size_t n, int T, int V) {
    size_t width = (size_t)T * V;
    GRID_STRIDE(i, n) {
        size_t r = i / width, j = i % width;
        int one = ctx[r * T + j / V] == (uint8_t)(j % V);
        if (dt == DT_F32) ((float *)X)[i] = one ? 1.0f : 0.0f;
        else ((uint16_t *)X)[i] = one ? (dt == DT_BF16 ? 0x3f80 : 0x3c00) : 0;
    }
}
void cuda_one_hot(void *X, DType dt, const uint8_t *ctx, int rows, int T, int V) {
    size_t nctx = (size_t)rows * T, n = nctx * V;
    if (!n) return;
    s.ctx = (uint8_t *)grow(s.ctx, &s.ctx_n, nctx, 1);
    // From pageable memory the copy returns once ctx has been read: the caller may reuse it.
    CHECK_CUDA(cudaMemcpyAsync(s.ctx, ctx, nctx, cudaMemcpyHostToDevice, stream()));
    k_one_hot<<<blocks_for(n), THREADS, 0, stream()>>>(X, dt, s.ctx, n, T, V);
    CHECK_LAUNCH("one_hot");
}

// ----------------------------------------------------------------------------
// loss

// One thread per row, as the CPU computes it: log-sum-exp in double.
__global__ void k_softmax_xent(const float *logits, const int *targets, float *dlogits,
                               double *loss, int rows, int classes, float grad_scale) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float *z = logits + (size_t)r * classes;
    float mx = z[0];
    for (int c = 1; c < classes; c++) mx = z[c] > mx ? z[c] : mx;
    double sum = 0.0;
    for (int c = 0; c < classes; c++) sum += exp((double)(z[c] - mx));
    int t = targets[r];
    loss[r] = log(sum) - (double)(z[t] - mx);
    if (!dlogits) return;
    float *d = dlogits + (size_t)r * classes;
    for (int c = 0; c < classes; c++) d[c] = (float)(exp((double)(z[c] - mx)) / sum) * grad_scale;
    d[t] -= grad_scale;
}
double cuda_softmax_xent(const float *logits, const int *targets, float *dlogits, int rows,
                         int classes, float grad_scale) {
    if (rows <= 0) return 0.0;
    s.targets = (int *)grow(s.targets, &s.targets_n, (size_t)rows, sizeof(int));
    CHECK_CUDA(cudaMemcpyAsync(s.targets, targets, (size_t)rows * sizeof(int),
                               cudaMemcpyHostToDevice, stream()));
    double *loss = part_buffers((size_t)rows);
    k_softmax_xent<<<(rows + THREADS - 1) / THREADS, THREADS, 0, stream()>>>(
        logits, s.targets, dlogits, loss, rows, classes, grad_scale);
    CHECK_LAUNCH("softmax_xent");
    return sum_parts((size_t)rows);
}

// ----------------------------------------------------------------------------
// optimizer

// Fused: p, g, m, v read once, p, m, v written once.
__global__ void k_adam(float *p, const float *g, float *m, float *v, size_t n, float decay,
                       float step_size, float bc2_sqrt, float b1, float b2, float eps) {
    GRID_STRIDE(i, n) {
        float gi = g[i];
        float mi = b1 * m[i] + (1.0f - b1) * gi;
        float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
        float denom = sqrtf(vi) / bc2_sqrt + eps;
        p[i] = p[i] * decay - step_size * mi / denom;
        m[i] = mi;
        v[i] = vi;
    }
}
void cuda_adam_update(float *p, const float *g, float *m, float *v, size_t n, float decay,
                      float step_size, float bc2_sqrt, float beta1, float beta2, float eps) {
    if (!n) return;
    k_adam<<<blocks_for(n), THREADS, 0, stream()>>>(p, g, m, v, n, decay, step_size, bc2_sqrt,
                                                    beta1, beta2, eps);
    CHECK_LAUNCH("adam_update");
}

// Each block adds its grid-stride share in double, then a tree in shared memory.
__global__ void k_sum_squares(const float *x, size_t n, double *part) {
    __shared__ double sh[THREADS];
    double acc = 0.0;
    GRID_STRIDE(i, n) acc += (double)x[i] * x[i];
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int w = THREADS / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}
double cuda_sum_squares(const float *x, size_t n) {
    if (!n) return 0.0;
    unsigned nb = blocks_for(n);
    k_sum_squares<<<nb, THREADS, 0, stream()>>>(x, n, part_buffers(nb));
    CHECK_LAUNCH("sum_squares");
    return sum_parts(nb);
}

// ----------------------------------------------------------------------------
// elementwise

__global__ void k_fill(float *x, float v, size_t n) { GRID_STRIDE(i, n) x[i] = v; }
void cuda_fill(float *x, float v, size_t n) {
    if (!n) return;
    k_fill<<<blocks_for(n), THREADS, 0, stream()>>>(x, v, n);
    CHECK_LAUNCH("fill");
}

void cuda_copy_bytes(void *dst, const void *src, size_t bytes) {
    if (bytes) CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream()));
}

void cuda_zero_bytes(void *x, size_t bytes) {
    if (bytes) CHECK_CUDA(cudaMemsetAsync(x, 0, bytes, stream()));
}

__global__ void k_scale(float *x, float a, size_t n) { GRID_STRIDE(i, n) x[i] *= a; }
void cuda_scale(float *x, float a, size_t n) {
    if (!n) return;
    k_scale<<<blocks_for(n), THREADS, 0, stream()>>>(x, a, n);
    CHECK_LAUNCH("scale");
}

__global__ void k_axpy(float *y, float a, const float *x, size_t n) {
    GRID_STRIDE(i, n) y[i] += a * x[i];
}
void cuda_axpy(float *y, float a, const float *x, size_t n) {
    if (!n) return;
    k_axpy<<<blocks_for(n), THREADS, 0, stream()>>>(y, a, x, n);
    CHECK_LAUNCH("axpy");
}

// ----------------------------------------------------------------------------
// mixed precision: dtype.h's conversions, so the GPU rounds as the CPU does

__device__ static float load(const void *x, DType dt, size_t i) {
    if (dt == DT_F32) return ((const float *)x)[i];
    uint16_t h = ((const uint16_t *)x)[i];
    return dt == DT_BF16 ? bf16_to_f32(h) : f16_to_f32(h);
}

__device__ static void store(void *x, DType dt, size_t i, float v) {
    if (dt == DT_F32) ((float *)x)[i] = v;
    else ((uint16_t *)x)[i] = dt == DT_BF16 ? f32_to_bf16(v) : f32_to_f16(v);
}

__global__ void k_finite(const void *x, DType dt, size_t n, int *bad) {
    GRID_STRIDE(i, n) {
        float v = load(x, dt, i);  // widening keeps inf and NaN
        if (isinf(v) || isnan(v)) *bad = 1;
    }
}
int cuda_all_finite_dt(const void *x, DType dt, size_t n) {
    if (!n) return 1;
    int bad = 0;
    CHECK_CUDA(cudaMemsetAsync(s.flag, 0, sizeof(int), stream()));
    k_finite<<<blocks_for(n), THREADS, 0, stream()>>>(x, dt, n, s.flag);
    CHECK_LAUNCH("all_finite");
    CHECK_CUDA(cudaMemcpyAsync(&bad, s.flag, sizeof(int), cudaMemcpyDeviceToHost, stream()));
    CHECK_CUDA(cudaStreamSynchronize(stream()));
    return !bad;
}

__global__ void k_cast(void *dst, DType to, const void *src, DType from, size_t n) {
    GRID_STRIDE(i, n) store(dst, to, i, load(src, from, i));
}
void cuda_cast_to_f32(float *dst, const void *src, DType dt, size_t n) {
    if (!n) return;
    k_cast<<<blocks_for(n), THREADS, 0, stream()>>>(dst, DT_F32, src, dt, n);
    CHECK_LAUNCH("cast_to_f32");
}
void cuda_cast_from_f32(void *dst, const float *src, DType dt, size_t n) {
    if (!n) return;
    k_cast<<<blocks_for(n), THREADS, 0, stream()>>>(dst, dt, src, DT_F32, n);
    CHECK_LAUNCH("cast_from_f32");
}

__global__ void k_round_to(float *x, DType dt, size_t n) {
    GRID_STRIDE(i, n) x[i] = dt == DT_BF16 ? bf16_to_f32(f32_to_bf16(x[i]))
                                           : f16_to_f32(f32_to_f16(x[i]));
}
void cuda_round_to(float *x, DType dt, size_t n) {
    if (!n || dt == DT_F32) return;
    k_round_to<<<blocks_for(n), THREADS, 0, stream()>>>(x, dt, n);
    CHECK_LAUNCH("round_to");
}

// Tensor cores multiply the 16-bit operands exactly and sum in fp32
// (CUBLAS_COMPUTE_32F). The handle's pedantic mode could keep them off, so this
// call runs in the default mode; fp32 products keep the pedantic one.
// C of type ct (fp32, or dt where cuBLAS rounds each fp32 sum as it stores it).
// The default mode alone would let cuBLAS add split-K partial sums in a 16-bit
// C's type, rounding twice where the CPU rounds each fp32 sum once (it depends
// on the algorithm cuBLAS picks for the shape: small M x N, large K):
// DISALLOW_REDUCED_PRECISION_REDUCTION keeps every reduction in fp32.
static const cublasMath_t MATH_16BIT =
    (cublasMath_t)(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
static void gemm_dt(void *C, DType ct, const void *A, const void *B, DType dt, int M, int N, int K, int ta,
                    int tb, float beta) {
    if (M == 0 || N == 0) return;
    const float one = 1.0f;
    cudaDataType_t type = dt == DT_BF16 ? CUDA_R_16BF : CUDA_R_16F, ctype = ct == DT_F32 ? CUDA_R_32F : type;
    int lda = ta ? M : K, ldb = tb ? K : N;
    CHECK_CUBLAS(cublas.set_math_mode(blas, MATH_16BIT));
    CHECK_CUBLAS(cublas.gemm_ex(blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                N, M, K, &one, B, type, ldb > 0 ? ldb : 1, A, type,
                                lda > 0 ? lda : 1, &beta, C, ctype, N, CUBLAS_COMPUTE_32F,
                                CUBLAS_GEMM_DEFAULT));
    CHECK_CUBLAS(cublas.set_math_mode(blas, CUBLAS_PEDANTIC_MATH));
}

void cuda_matmul_dt(float *C, const void *A, const void *B, DType dt, int M, int N, int K,
                    int ta, int tb, float beta) {
    gemm_dt(C, DT_F32, A, B, dt, M, N, K, ta, tb, beta);
}

void cuda_matmul_to_dt(void *C, const void *A, const void *B, DType dt, int M, int N, int K, int ta, int tb) {
    gemm_dt(C, dt, A, B, dt, M, N, K, ta, tb, 0.0f);
}

__global__ void k_bias_add_dt(float *Y, const void *b, DType dt, size_t n, int cols) {
    GRID_STRIDE(i, n) Y[i] += load(b, dt, i % cols);
}
void cuda_bias_add_dt(float *Y, const void *b, DType dt, int rows, int cols) {
    size_t n = (size_t)rows * cols;
    if (!n) return;
    k_bias_add_dt<<<blocks_for(n), THREADS, 0, stream()>>>(Y, b, dt, n, cols);
    CHECK_LAUNCH("bias_add_dt");
}

// As k_bias_grad: one thread per column, rows in order, in double; the CPU's bits.
__global__ void k_bias_grad_dt(void *db, const void *dY, DType dt, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    double acc = load(db, dt, c);
    for (int r = 0; r < rows; r++) acc += load(dY, dt, (size_t)r * cols + c);
    store(db, dt, c, (float)acc);
}
void cuda_bias_grad_dt(void *db, const void *dY, DType dt, int rows, int cols) {
    if (cols <= 0) return;
    k_bias_grad_dt<<<(cols + THREADS - 1) / THREADS, THREADS, 0, stream()>>>(db, dY, dt, rows, cols);
    CHECK_LAUNCH("bias_grad_dt");
}

__global__ void k_relu_backward_dt(float *dx, const float *dy, const void *y, DType dt,
                                   size_t n) {
    GRID_STRIDE(i, n) dx[i] = load(y, dt, i) <= 0.0f ? 0.0f : dy[i];
}
void cuda_relu_backward_dt(float *dx, const float *dy, const void *y, DType dt, size_t n) {
    if (!n) return;
    k_relu_backward_dt<<<blocks_for(n), THREADS, 0, stream()>>>(dx, dy, y, dt, n);
    CHECK_LAUNCH("relu_backward_dt");
}

__global__ void k_add_to(void *y, const void *x, DType dt, size_t n) {
    GRID_STRIDE(i, n) store(y, dt, i, load(y, dt, i) + load(x, dt, i));
}
void cuda_add_to(void *y, const void *x, DType dt, size_t n) {
    if (!n) return;
    k_add_to<<<blocks_for(n), THREADS, 0, stream()>>>(y, x, dt, n);
    CHECK_LAUNCH("add_to");
}

// ----------------------------------------------------------------------------
// initialization: rng.h's counter-based numbers, the CPU's exact values

__global__ void k_init_uniform(float *dst, size_t n, float bound, uint64_t seed,
                               uint64_t strm, uint64_t first) {
    GRID_STRIDE(i, n) dst[i] = (2.0f * rng_uniform_at(seed, strm, first + i) - 1.0f) * bound;
}
void cuda_init_uniform(float *dst, size_t n, float bound, uint64_t seed, uint64_t strm,
                       uint64_t first) {
    if (!n) return;
    k_init_uniform<<<blocks_for(n), THREADS, 0, stream()>>>(dst, n, bound, seed, strm, first);
    CHECK_LAUNCH("init_uniform");
}
