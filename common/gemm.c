// gemm: OpenBLAS or oneDNN for the fp32 products, as measured (small and large apart) or asked.
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
// here for the small products (no side longer than ZC_GEMM_SPLIT) and for the
// large, each with OpenBLAS's time over oneDNN's. Compiled without it: OpenBLAS.
#ifndef ZC_GEMM_SPLIT
#define ZC_GEMM_SPLIT 512
#define ZC_GEMM_SMALL "openblas"
#define ZC_GEMM_SMALL_SPEEDUP 0.0
#define ZC_GEMM_LARGE "openblas"
#define ZC_GEMM_LARGE_SPEEDUP 0.0
#define ZC_GEMM_ONEDNN "?"
#endif

static int use_onednn[2];  // [large]: 1 dnnl_sgemm, 0 cblas_sgemm
// Counted where each library is called, so a test can see which one ran on any
// processor (their bits may differ or not). The products run on the rank's
// main thread alone.
static long calls[2];

static int is_large(int M, int N, int K) { return M > ZC_GEMM_SPLIT || N > ZC_GEMM_SPLIT || K > ZC_GEMM_SPLIT; }

void gemm_init(void) {
    if (!getenv("OPENBLAS_NUM_THREADS")) openblas_set_num_threads(1);
    if (!getenv("OMP_NUM_THREADS")) omp_set_num_threads(1);  // oneDNN's threads (OpenMP's): one per rank too
    const char *g = getenv("ZC_GEMM");  // openblas or onednn (env checks it) for every product, else the build's choice
    use_onednn[0] = strcmp(g && *g ? g : ZC_GEMM_SMALL, "onednn") == 0;
    use_onednn[1] = strcmp(g && *g ? g : ZC_GEMM_LARGE, "onednn") == 0;
    calls[0] = calls[1] = 0;
}

void gemm_calls(long out[2]) { out[0] = calls[0], out[1] = calls[1]; }

const char *gemm_library_of(int M, int N, int K) {
    return use_onednn[is_large(M, N, K)] ? "onednn" : "openblas";
}

void gemm_f32(int ta, int tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb, float beta,
              float *C, int ldc) {
    if (K == 0) {  // no terms: C = beta C, zero where beta is 0 whatever C held (BLAS's rule; oneDNN 2.6 leaves C)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) C[(size_t)i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[(size_t)i * ldc + j];
        return;
    }
    if (use_onednn[is_large(M, N, K)]) {
        dnnl_status_t st = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
        if (st != dnnl_success) fatal("dnnl_sgemm %dx%dx%d failed (oneDNN status %d)", M, N, K, (int)st);
        calls[1]++;
        return;
    }
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, A,
                lda, B, ldb, beta, C, ldc);
    calls[0]++;
}

// One class's library in words: "oneDNN 2.6.3 (dnnl_sgemm), 1.13x OpenBLAS's speed".
static void describe(char *s, size_t len, int onednn, double speedup) {
    if (onednn) snprintf(s, len, "oneDNN %s (dnnl_sgemm), %.2fx OpenBLAS's speed", ZC_GEMM_ONEDNN, speedup);
    else snprintf(s, len, "OpenBLAS (cblas_sgemm), oneDNN %s at %.2fx its speed", ZC_GEMM_ONEDNN, speedup);
}

const char *gemm_library(void) {
    static char s[320];
    const char *g = getenv("ZC_GEMM");
    if (g && *g) {
        snprintf(s, sizeof s, "%s, as ZC_GEMM asks",
                 use_onednn[0] ? "oneDNN " ZC_GEMM_ONEDNN " (dnnl_sgemm)" : "OpenBLAS (cblas_sgemm)");
    } else if (ZC_GEMM_SMALL_SPEEDUP <= 0) {
        snprintf(s, sizeof s, "OpenBLAS (cblas_sgemm), no measurement built in");
    } else {
        char small[120], large[120];
        describe(small, sizeof small, use_onednn[0], ZC_GEMM_SMALL_SPEEDUP);
        describe(large, sizeof large, use_onednn[1], ZC_GEMM_LARGE_SPEEDUP);
        snprintf(s, sizeof s, "%s on products with no side over %d, %s on the larger; measured when built", small,
                 ZC_GEMM_SPLIT, large);
    }
    return s;
}
