// gpu_standin: the recording stand-in for the GPU kernels (gpu_standin.h).
// cuda_adam_update keeps what it was handed; every other kernel notes that it
// was called and does nothing. The programs that link this never open a GPU.
#include "gpu_standin.h"

#include <string.h>

#include "../common/kernels_cuda.h"

// The stand-ins ignore what they are handed.
#pragma GCC diagnostic ignored "-Wunused-parameter"

AdamHandoff standin_adam;

void standin_reset(void) { memset(&standin_adam, 0, sizeof standin_adam); }

static void other(const char *name) {
    if (!standin_adam.other) standin_adam.other = name;
}

void cuda_adam_update(float *p, const float *g, float *m, float *v, size_t n, float decay, float step_size,
                      float bc2_sqrt, float beta1, float beta2, float eps) {
    AdamHandoff *a = &standin_adam;
    a->calls++;
    a->p = p, a->g = g, a->m = m, a->v = v, a->n = n;
    a->decay = decay, a->step_size = step_size, a->bc2_sqrt = bc2_sqrt;
    a->beta1 = beta1, a->beta2 = beta2, a->eps = eps;
}

// ----------------------------------------------------------------------------
// the other kernels: called, noted

void cuda_kernels_init(void) { other("cuda_kernels_init"); }
void cuda_kernels_close(void) { other("cuda_kernels_close"); }
void cuda_matmul(float *C, const float *A, const float *B, int M, int N, int K, int ta, int tb, float beta) {
    other("cuda_matmul");
}
void cuda_bias_add(float *Y, const float *b, int rows, int cols) { other("cuda_bias_add"); }
void cuda_bias_grad(float *db, const float *dY, int rows, int cols) { other("cuda_bias_grad"); }
void cuda_relu_forward(float *y, const float *x, size_t n) { other("cuda_relu_forward"); }
void cuda_relu_backward(float *dx, const float *dy, const float *y, size_t n) { other("cuda_relu_backward"); }
double cuda_softmax_xent(const float *logits, const int *targets, float *dlogits, int rows, int classes,
                         float grad_scale) {
    other("cuda_softmax_xent");
    return 0;
}
void cuda_one_hot(void *X, DType dt, const uint8_t *ctx, int rows, int T, int V) { other("cuda_one_hot"); }
double cuda_sum_squares(const float *x, size_t n) {
    other("cuda_sum_squares");
    return 0;
}
void cuda_fill(float *x, float v, size_t n) { other("cuda_fill"); }
void cuda_copy_bytes(void *dst, const void *src, size_t bytes) { other("cuda_copy_bytes"); }
void cuda_zero_bytes(void *x, size_t bytes) { other("cuda_zero_bytes"); }
void cuda_scale(float *x, float a, size_t n) { other("cuda_scale"); }
void cuda_axpy(float *y, float a, const float *x, size_t n) { other("cuda_axpy"); }
int cuda_all_finite_dt(const void *x, DType dt, size_t n) {
    other("cuda_all_finite_dt");
    return 1;
}
void cuda_cast_to_f32(float *dst, const void *src, DType dt, size_t n) { other("cuda_cast_to_f32"); }
void cuda_cast_from_f32(void *dst, const float *src, DType dt, size_t n) { other("cuda_cast_from_f32"); }
void cuda_round_to(float *x, DType dt, size_t n) { other("cuda_round_to"); }
void cuda_matmul_dt(float *C, const void *A, const void *B, DType dt, int M, int N, int K, int ta, int tb,
                    float beta) {
    other("cuda_matmul_dt");
}
void cuda_matmul_to_dt(void *C, const void *A, const void *B, DType dt, int M, int N, int K, int ta, int tb) {
    other("cuda_matmul_to_dt");
}
void cuda_bias_add_dt(float *Y, const void *b, DType dt, int rows, int cols) { other("cuda_bias_add_dt"); }
void cuda_bias_grad_dt(void *db, const void *dY, DType dt, int rows, int cols) { other("cuda_bias_grad_dt"); }
void cuda_relu_backward_dt(float *dx, const float *dy, const void *y, DType dt, size_t n) {
    other("cuda_relu_backward_dt");
}
void cuda_add_to(void *y, const void *x, DType dt, size_t n) { other("cuda_add_to"); }
void cuda_init_uniform(float *dst, size_t n, float bound, uint64_t seed, uint64_t stream, uint64_t first) {
    other("cuda_init_uniform");
}

// A CPU build has no gpu_sync for the copy's kernels_wait; a CUDA build's own
// (common/gpu.c) takes its place.
__attribute__((weak)) void gpu_sync(void) {}
