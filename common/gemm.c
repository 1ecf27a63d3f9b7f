// gemm: OpenBLAS or oneDNN for the fp32 products, as measured or asked.
#include "gemm.h"
#include "base.h"

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The build's measurement, BUILD/gemm_choice.h (make runs tools/bench_gemm.c
// once per build folder and gives the header to this file): the faster library
// here and OpenBLAS's time over oneDNN's. Compiled without it: OpenBLAS.
#ifndef ZC_GEMM_BUILT
#define ZC_GEMM_BUILT "openblas"
#define ZC_GEMM_SPEEDUP 0.0
#define ZC_GEMM_ONEDNN "?"
#endif

static int use_onednn;  // 1: dnnl_sgemm; 0: cblas_sgemm

void gemm_init(void) {
    if (!getenv("OPENBLAS_NUM_THREADS")) openblas_set_num_threads(1);
    if (!getenv("OMP_NUM_THREADS")) omp_set_num_threads(1);  // oneDNN's threads (OpenMP's): one per rank too
    const char *g = getenv("ZC_GEMM");  // openblas or onednn (env checks it), else the build's choice
    use_onednn = strcmp(g && *g ? g : ZC_GEMM_BUILT, "onednn") == 0;
}

void gemm_f32(int ta, int tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb, float beta,
              float *C, int ldc) {
    if (use_onednn) {
        dnnl_status_t st = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
        if (st != dnnl_success) fatal("dnnl_sgemm %dx%dx%d failed (oneDNN status %d)", M, N, K, (int)st);
        return;
    }
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, A,
                lda, B, ldb, beta, C, ldc);
}

const char *gemm_library(void) {
    static char s[200];
    const char *g = getenv("ZC_GEMM");
    const char *why = g && *g ? "as ZC_GEMM asks" : ZC_GEMM_SPEEDUP > 0 ? "measured when built" : "no measurement built in";
    if (use_onednn)
        snprintf(s, sizeof s, "oneDNN %s (dnnl_sgemm), %s: %.2fx OpenBLAS's speed", ZC_GEMM_ONEDNN, why,
                 ZC_GEMM_SPEEDUP);
    else if (ZC_GEMM_SPEEDUP > 0)
        snprintf(s, sizeof s, "OpenBLAS (cblas_sgemm), %s: oneDNN %s ran at %.2fx its speed", why, ZC_GEMM_ONEDNN,
                 ZC_GEMM_SPEEDUP);
    else
        snprintf(s, sizeof s, "OpenBLAS (cblas_sgemm), %s", why);
    return s;
}
