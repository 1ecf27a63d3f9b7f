// kernels: the arithmetic of the model and the optimizer. CPU versions are plain
// loops plus CBLAS for matrix products. Matrices are row-major. On a CUDA run
// (rt.device) the same calls run on the GPU (kernels_cuda.cu) and take GPU
// buffers, except the data loader's context and targets, which stay on the host.
#ifndef KERNELS_H
#define KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

typedef struct {
    float lr, beta1, beta2, eps, weight_decay;
} AdamHyper;

// Sets the BLAS to one thread per rank unless OPENBLAS_NUM_THREADS says otherwise.
void kernels_init(void);
// Returns when every kernel queued so far has run (on the GPU; at once on the CPU).
void kernels_wait(void);

// C[M,N] = op(A) op(B) + beta C, op(A) is [M,K], op(B) is [K,N]; ta/tb transpose.
void matmul(float *C, const float *A, const float *B, int M, int N, int K,
            int ta, int tb, float beta);
// Y[r,c] += b[c] for every row.
void bias_add(float *Y, const float *b, int rows, int cols);
// db[c] += sum over rows of dY[r,c], summed in double (one rounding to fp32).
void bias_grad(float *db, const float *dY, int rows, int cols);
// y = max(x, 0); y may be x.
void relu_forward(float *y, const float *x, size_t n);
// dx = dy where y > 0, else 0; dx may be dy.
void relu_backward(float *dx, const float *dy, const float *y, size_t n);
// Sum over rows of -log softmax(logits)[target], in double. If dlogits is not
// NULL it gets (softmax - onehot(target)) * grad_scale.
double softmax_xent(const float *logits, const int *targets, float *dlogits, int rows,
                    int classes, float grad_scale);
// probs = softmax(logits) for one row; probs is on the host.
void softmax_row(float *probs, const float *logits, int classes);
// X[rows, T*V] = one-hot of each context symbol (T symbols per row, V classes).
void one_hot(float *X, const uint8_t *ctx, int rows, int T, int V);
// One AdamW step (PyTorch's formula): p *= 1 - lr wd; m, v move toward g, g^2;
// p -= lr/(1-beta1^t) m / (sqrt(v)/sqrt(1-beta2^t) + eps). step t starts at 1.
void adam_update(float *p, const float *g, float *m, float *v, size_t n,
                 const AdamHyper *h, long step);
// Sum of x^2 accumulated in double.
double sum_squares(const float *x, size_t n);
// The factor clip_grad_norm_ multiplies gradients by: min(1, max_norm/(norm+1e-6)).
float clip_factor(double norm, float max_norm);
void fill(float *x, float v, size_t n);
// dst = src (n floats; the ranges must not overlap)
void copy(float *dst, const float *src, size_t n);
// x *= a
void scale(float *x, float a, size_t n);
// y += a x
void axpy(float *y, float a, const float *x, size_t n);
// 1 if no element is inf or NaN.
int all_finite(const float *x, size_t n);
// dst[i] = (2u - 1) bound, u = rng_uniform_at(seed, stream, first + i): element
// first+i of a stream, uniform in [-bound, bound), the same on every device.
void init_uniform(float *dst, size_t n, float bound, uint64_t seed, uint64_t stream,
                  uint64_t first);

// Mixed precision. Buffers of type dt hold n elements of dtype_size(dt) bytes;
// conversions to a 16-bit type round to nearest even (see dtype.h).
// dst = src as fp32.
void cast_to_f32(float *dst, const void *src, DType dt, size_t n);
// dst = src rounded to dt (dst may be src when dt is fp32).
void cast_from_f32(void *dst, const float *src, DType dt, size_t n);
// x = x rounded to dt and back: what storing x in dt keeps.
void round_to(float *x, DType dt, size_t n);
// C = op(A) op(B) + beta C as matmul, with A and B of type dt and C in fp32:
// exact products summed in fp32, a tensor core's arithmetic (cuBLAS GemmEx on
// the GPU; on the CPU, panels widened to fp32 for CBLAS). fp32 is matmul.
void matmul_dt(float *C, const void *A, const void *B, DType dt, int M, int N, int K,
               int ta, int tb, float beta);
// C = op(A) op(B) as matmul_dt with C of type dt too: each fp32 sum rounded to dt
// once, as a tensor core writes a 16-bit result (no fp32 copy of C is kept).
void matmul_to_dt(void *C, const void *A, const void *B, DType dt, int M, int N, int K, int ta, int tb);
// one_hot with X of type dt (0 and 1 are exact in every type).
void one_hot_dt(void *X, DType dt, const uint8_t *ctx, int rows, int T, int V);
// Y[r,c] += b[c] as bias_add, with b of type dt (widened exactly).
void bias_add_dt(float *Y, const void *b, DType dt, int rows, int cols);
// db[c] += sum over rows of dY[r,c], as bias_grad with dY and db of type dt:
// summed in double, rounded to fp32 and then to dt.
void bias_grad_dt(void *db, const void *dY, DType dt, int rows, int cols);
// dx = dy where y (type dt) > 0, else 0; dx may be dy.
void relu_backward_dt(float *dx, const float *dy, const void *y, DType dt, size_t n);
// y += x, added in fp32 and rounded to dt.
void add_to(void *y, const void *x, DType dt, size_t n);
// dst = src, n elements of type dt.
void copy_dt(void *dst, const void *src, DType dt, size_t n);
// x = 0, n elements of type dt.
void zero_dt(void *x, DType dt, size_t n);
// 1 if no element of x (type dt) is inf or NaN.
int all_finite_dt(const void *x, DType dt, size_t n);

#endif
