// kernels_cuda: the GPU versions of kernels.h (CUDA builds only). The kernels.h
// functions call these when the runtime's device is CUDA, so a stage calls the
// same names on either device. Every kernel is queued on the compute stream;
// the ones that return a value wait for it.
#ifndef KERNELS_CUDA_H
#define KERNELS_CUDA_H

#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

// Creates the cuBLAS handle on the compute stream (after gpu_open).
void cuda_kernels_init(void);
// Releases the handle and the kernels' scratch.
void cuda_kernels_close(void);

void cuda_matmul(float *C, const float *A, const float *B, int M, int N, int K,
                 int ta, int tb, float beta);
void cuda_bias_add(float *Y, const float *b, int rows, int cols);
void cuda_bias_grad(float *db, const float *dY, int rows, int cols);
void cuda_relu_forward(float *y, const float *x, size_t n);
void cuda_relu_backward(float *dx, const float *dy, const float *y, size_t n);
// targets stay on the host (the data loader's); they are copied over first.
double cuda_softmax_xent(const float *logits, const int *targets, float *dlogits, int rows,
                         int classes, float grad_scale);
// ctx stays on the host (the data loader's); it is copied over first. X of type dt.
void cuda_one_hot(void *X, DType dt, const uint8_t *ctx, int rows, int T, int V);
void cuda_adam_update(float *p, const float *g, float *m, float *v, size_t n,
                      float decay, float step_size, float bc2_sqrt, float beta1, float beta2,
                      float eps);
double cuda_sum_squares(const float *x, size_t n);
void cuda_fill(float *x, float v, size_t n);
void cuda_copy_bytes(void *dst, const void *src, size_t bytes);
void cuda_zero_bytes(void *x, size_t bytes);
void cuda_scale(float *x, float a, size_t n);
void cuda_axpy(float *y, float a, const float *x, size_t n);
int cuda_all_finite_dt(const void *x, DType dt, size_t n);
void cuda_cast_to_f32(float *dst, const void *src, DType dt, size_t n);
void cuda_cast_from_f32(void *dst, const float *src, DType dt, size_t n);
void cuda_round_to(float *x, DType dt, size_t n);
void cuda_matmul_dt(float *C, const void *A, const void *B, DType dt, int M, int N, int K,
                    int ta, int tb, float beta);
void cuda_matmul_to_dt(void *C, const void *A, const void *B, DType dt, int M, int N, int K, int ta, int tb);
void cuda_bias_add_dt(float *Y, const void *b, DType dt, int rows, int cols);
void cuda_bias_grad_dt(void *db, const void *dY, DType dt, int rows, int cols);
void cuda_relu_backward_dt(float *dx, const float *dy, const void *y, DType dt, size_t n);
void cuda_add_to(void *y, const void *x, DType dt, size_t n);
void cuda_init_uniform(float *dst, size_t n, float bound, uint64_t seed, uint64_t stream,
                       uint64_t first);

#ifdef __cplusplus
}
#endif

#endif
