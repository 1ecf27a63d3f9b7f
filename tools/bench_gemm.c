// bench_gemm: the two fp32 matrix-product libraries this machine has, OpenBLAS
// (cblas_sgemm) and oneDNN (dnnl_sgemm), timed on the course's products, one
// thread each, as a rank runs them: every layer's forward (x W^T), its weight
// gradient (d^T x) and its input gradient (d W), for the default model and a
// GEMM-bound one. Prints a row per shape and library (GFLOP/s, the median of
// the timed rounds) and the ratio of the total times.
//   --header FILE: writes what the build compiles in (kernels_cpu.c): the faster
//   library, and by how much. oneDNN is taken only when it is at least 5%
//   faster in all, so that noise alone never switches a machine's products.
// Single process, no MPI; links only the two libraries. `make` runs it once per
// build folder (BUILD/gemm.h); ZC_GEMM=openblas|onednn overrides at run time.
// usage: bench_gemm [--quick] [--header FILE]
#include <cblas.h>
#include <dnnl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct { int M, N, K, ta, tb; } Shape;

// Rows, outputs and inputs of the products of one layer: forward, weight gradient, input gradient.
#define LAYER(rows, out, in) { rows, out, in, 0, 1 }, { out, in, rows, 1, 0 }, { rows, in, out, 0, 0 }
static const Shape shapes[] = {
    LAYER(96, 128, 135), LAYER(96, 128, 128), LAYER(96, 27, 128),          // the default model, N = 4
    LAYER(256, 1024, 216), LAYER(256, 1024, 1024), LAYER(256, 27, 1024),   // hidden 1024, batch 512 at N = 2
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])
// The operands and the product, as large as the largest of either (static: a
// standalone program, not linked with the course's allocator).
#define MOST (1024 * 1024)
static float A[MOST], B[MOST], C[MOST];

static void gemm(int lib, const Shape *s) {
    int lda = s->ta ? s->M : s->K, ldb = s->tb ? s->K : s->N;
    if (lib == 0) {
        cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans, s->tb ? CblasTrans : CblasNoTrans, s->M, s->N,
                    s->K, 1.0f, A, lda, B, ldb, 0.0f, C, s->N);
    } else if (dnnl_sgemm(s->ta ? 'T' : 'N', s->tb ? 'T' : 'N', s->M, s->N, s->K, 1.0f, A, lda, B, ldb, 0.0f, C,
                          s->N) != dnnl_success) {
        fprintf(stderr, "bench_gemm: dnnl_sgemm %dx%dx%d failed\n", s->M, s->N, s->K);
        exit(1);
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Seconds one product takes, the median of rounds of about `each` seconds.
static double time_gemm(int lib, const Shape *s, double each) {
    gemm(lib, s);  // warm-up: oneDNN compiles its kernel on first use
    double t[7];
    for (int r = 0; r < 7; r++) {
        int n = 0;
        double t0 = now();
        do { gemm(lib, s); n++; } while (now() - t0 < each);
        t[r] = (now() - t0) / n;
    }
    qsort(t, 7, sizeof t[0], cmp);
    return t[3];
}

int main(int argc, char **argv) {
    const char *header = NULL;
    double each = 0.02;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--header") == 0 && i + 1 < argc) header = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0) each = 0.005;
        else { fprintf(stderr, "usage: bench_gemm [--quick] [--header FILE]\n"); return 2; }
    }
    openblas_set_num_threads(1);
    omp_set_num_threads(1);  // oneDNN's OpenMP (read its environment at load: too late to set it here)
    for (size_t i = 0; i < NSHAPES; i++)  // (a shape added beyond the buffers is the bench's own bug)
        if ((size_t)shapes[i].M * shapes[i].K > MOST || (size_t)shapes[i].K * shapes[i].N > MOST ||
            (size_t)shapes[i].M * shapes[i].N > MOST) { fprintf(stderr, "bench_gemm: shape %zu > MOST\n", i); return 1; }
    for (size_t i = 0; i < MOST; i++) A[i] = (float)(i % 17) / 17 - 0.5f, B[i] = (float)(i % 13) / 13 - 0.5f;
    const dnnl_version_t *v = dnnl_version();
    if (!header) printf("%8s %6s %6s %3s %3s %12s %12s %8s\n", "M", "N", "K", "ta", "tb", "OpenBLAS", "oneDNN", "ratio");
    double total[2] = { 0, 0 };
    for (size_t i = 0; i < NSHAPES; i++) {
        const Shape *s = &shapes[i];
        double flop = 2.0 * s->M * s->N * s->K, t[2];
        for (int lib = 0; lib < 2; lib++) total[lib] += t[lib] = time_gemm(lib, s, each);
        if (!header)
            printf("%8d %6d %6d %3d %3d %9.1f GF %9.1f GF %7.2fx\n", s->M, s->N, s->K, s->ta, s->tb,
                   flop / t[0] / 1e9, flop / t[1] / 1e9, t[0] / t[1]);
    }
    double ratio = total[0] / total[1];  // > 1: oneDNN faster
    const char *lib = ratio >= 1.05 ? "onednn" : "openblas";
    if (!header) {
        printf("all shapes, in total: oneDNN %d.%d.%d at %.2fx the speed of %s: %s chosen (oneDNN needs 1.05x)\n",
               v->major, v->minor, v->patch, ratio, openblas_get_config(), lib);
    } else {
        FILE *f = fopen(header, "w");
        if (!f) { perror(header); return 1; }
        fprintf(f, "// Written by tools/bench_gemm.c (make): this machine's faster fp32 product.\n"
                   "#define ZC_GEMM_BUILT \"%s\"\n#define ZC_GEMM_SPEEDUP %.2f  // OpenBLAS's time over oneDNN's\n"
                   "#define ZC_GEMM_ONEDNN \"%d.%d.%d\"\n", lib, ratio, v->major, v->minor, v->patch);
        if (fclose(f) != 0) { perror(header); return 1; }
    }
    return 0;
}
