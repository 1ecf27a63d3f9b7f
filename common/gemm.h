// gemm: the fp32 matrix product's library on the CPU. OpenBLAS (cblas_sgemm)
// or oneDNN (dnnl_sgemm): the one the build measured faster on this machine
// (tools/bench_gemm.c), for small products and large ones apart, or ZC_GEMM's.
// Every product of the course's CPU kernels goes through here, the 16-bit ones
// on widened panels too.
#ifndef GEMM_H
#define GEMM_H

// Picks the library, one thread per rank (rt_init calls it).
void gemm_init(void);
// C[M,N] = op(A) op(B) + beta C, row-major, with the leading dimensions given;
// op transposes where ta (tb) is set.
void gemm_f32(int ta, int tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb, float beta,
              float *C, int ldc);
// The library a product of that shape runs on: "openblas" or "onednn".
const char *gemm_library_of(int M, int N, int K);
// The library in words, for the reports: which one, and why.
const char *gemm_library(void);
// Products run on each library since gemm_init: calls[0] OpenBLAS, calls[1] oneDNN.
void gemm_calls(long calls[2]);

#endif
