// bench_gemm: the two fp32 matrix-product libraries this machine has, OpenBLAS
// (cblas_sgemm) and oneDNN (dnnl_sgemm), timed on the course's products, one
// thread each, as a rank runs them: every layer's forward (x W^T), its weight
// gradient (d^T x) and its input gradient (d W), for the default model and a
// GEMM-bound one. Prints a row per shape and library (GFLOP/s, the median of
// the timed rounds) and, for the small products (no side longer than SPLIT:
// the default model's) and the large ones (the GEMM-bound model's) apart, the
// ratio of the total times: on one machine the faster library can differ
// between the two (on the development machine oneDNN is faster on the small
// products, OpenBLAS on the large).
//   --header FILE: writes what the build compiles in (common/gemm.c): the
//   faster library for each of the two, and by how much. oneDNN is taken only
//   when it is at least 5% faster, so that noise alone never switches a
//   machine's products.
// Single process, no MPI; links only the two libraries. `make` runs it once per
// build folder (BUILD/gemm.h); ZC_GEMM=openblas|onednn overrides at run time.
//   --floor CONTEXT HIDDEN LAYERS ROWS LIB[/LARGE]: the time one rank's
//   products of one training step take with LIB alone (with LARGE for the
//   large products, where given: the build's choice; tools/bench_step.sh).
//   --bf16: lc5's 16-bit products timed three ways on the same shapes: oneDNN's
//   bf16 matmul (bf16 operands as stored, an fp32 result: AVX512_BF16's dot
//   products where the processor has them); the same with the weights in the
//   layout oneDNN asks for, reordered once outside the timing (the best a
//   stage could do by packing each layer's weights once a step); and what
//   common/kernels_cpu.c does, both operands widened to fp32 and multiplied
//   by the faster fp32 library, the widening timed too.
// usage: bench_gemm [--quick] [--header FILE | --floor CONTEXT HIDDEN LAYERS ROWS LIB[/LIB] | --bf16]  (LIB: openblas, onednn)
#include <cblas.h>
#include <dnnl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/dtype.h"  // the 16-bit conversions (inline: nothing of the course linked)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct { int M, N, K, ta, tb; } Shape;

// The longest side (M, N or K) of a small product; common/gemm.c sends each
// product to its class's library by the same rule. A count of multiply-adds
// would not do: the GEMM-bound model's output layer (256x27x1024) is no larger
// than lc0's layers (384x128x135), but runs like its other layers.
#define SPLIT 512
static int is_small(const Shape *s) { return s->M <= SPLIT && s->N <= SPLIT && s->K <= SPLIT; }

// Rows, outputs and inputs of the products of one layer: forward, weight gradient, input gradient.
#define LAYER(rows, out, in) { rows, out, in, 0, 1 }, { out, in, rows, 1, 0 }, { rows, in, out, 0, 0 }
static const Shape shapes[] = {
    LAYER(96, 128, 135), LAYER(96, 128, 128), LAYER(96, 27, 128),          // the default model, N = 4
    LAYER(384, 128, 135), LAYER(384, 128, 128), LAYER(384, 27, 128),       // and N = 1 (lc0)
    LAYER(256, 1024, 216), LAYER(256, 1024, 1024), LAYER(256, 27, 1024),   // hidden 1024, batch 512 at N = 2
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])
// The operands and the product, as large as the largest of either (static: a
// standalone program, not linked with the course's allocator).
#define MOST (4 * 1024 * 1024)
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

// Seconds one product takes (run(lib, s) once), the median of rounds of about
// `each` seconds.
static double time_of(void (*run)(int, const Shape *), int lib, const Shape *s, double each) {
    run(lib, s);  // warm-up: oneDNN compiles its kernel on first use
    double t[7];
    for (int r = 0; r < 7; r++) {
        int n = 0;
        double t0 = now();
        do { run(lib, s); n++; } while (now() - t0 < each);
        t[r] = (now() - t0) / n;
    }
    qsort(t, 7, sizeof t[0], cmp);
    return t[3];
}

static double time_gemm(int lib, const Shape *s, double each) { return time_of(gemm, lib, s, each); }

static int fits(const Shape *s) {
    return (size_t)s->M * s->K <= MOST && (size_t)s->K * s->N <= MOST && (size_t)s->M * s->N <= MOST;
}

// --floor: the products of one training step of one rank (ROWS examples) of
// the model --context, --hidden and --layers describe (common/mlp.c's shapes:
// the first layer reads context x 27 one-hot inputs, the last writes 27
// logits; the first layer's input gradient is never computed), each timed
// alone with LIB: the least time a step can take on this machine.
static int floor_of(int context, int hidden, int layers, int rows, const int lib[2], double each) {
    double secs = 0, flop = 0;
    for (int l = 0; l <= layers; l++) {
        int in = l == 0 ? context * 27 : hidden, out = l == layers ? 27 : hidden;
        Shape p[3] = { LAYER(rows, out, in) };
        for (int k = 0; k < (l == 0 ? 2 : 3); k++) {
            if (!fits(&p[k])) {
                fprintf(stderr, "bench_gemm: --floor: a %dx%dx%d product is beyond this bench's %d-element buffers\n",
                        p[k].M, p[k].N, p[k].K, MOST);
                return 2;
            }
            secs += time_gemm(lib[!is_small(&p[k])], &p[k], each);
            flop += 2.0 * p[k].M * p[k].N * p[k].K;
        }
    }
    const char *name[] = { "OpenBLAS", "oneDNN" };
    printf("floor %.3f ms a step, %.3f GFLOP, %.1f GFLOP/s (%s%s%s; context %d, hidden %d, layers %d, %d rows)\n",
           1e3 * secs, flop / 1e9, flop / secs / 1e9, name[lib[0]], lib[0] == lib[1] ? "" : " small, large ",
           lib[0] == lib[1] ? "" : name[lib[1]], context, hidden, layers, rows);
    return 0;
}

// ----------------------------------------------------------------------------
// --bf16: oneDNN's 16-bit matmul against the widened fp32 product

static uint16_t H[2][MOST];  // the 16-bit operands

static void dnnl_ok(dnnl_status_t st, const char *what) {
    if (st == dnnl_success) return;
    fprintf(stderr, "bench_gemm: %s failed (oneDNN status %d)\n", what, (int)st);
    exit(1);
}

// One shape's bf16 matmul primitive and its three memories, made once (as a
// program would cache it): the operands row-major as the course stores them,
// op() by strides. And its twin (prim[1]) that reads the weights in the
// layout oneDNN chose for them (weights[1]: weights[0] reordered once).
typedef struct {
    dnnl_primitive_t prim[2];
    dnnl_memory_t src, weights[2], dst;
    const char *impl;
} Bf16Matmul;

static dnnl_primitive_desc_t matmul_pd(dnnl_engine_t eng, const dnnl_memory_desc_t md[3]) {
    dnnl_matmul_desc_t desc;
    dnnl_ok(dnnl_matmul_desc_init(&desc, &md[0], &md[1], NULL, &md[2]), "dnnl_matmul_desc_init");
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dnnl_primitive_desc_create(&pd, &desc, NULL, eng, NULL);
    if (st == dnnl_unimplemented) {  // oneDNN 2.6 runs bf16 on AVX-512 processors only
        fprintf(stderr, "bench_gemm: --bf16: oneDNN has no bf16 matmul for this processor\n");
        exit(1);
    }
    dnnl_ok(st, "the bf16 matmul's primitive descriptor");
    return pd;
}

static dnnl_stream_t stream;

// The weights of m copied into the layout the packed twin reads.
static void pack_weights(dnnl_engine_t eng, Bf16Matmul *m, const dnnl_memory_desc_t *plain,
                         const dnnl_memory_desc_t *packed) {
    dnnl_ok(dnnl_memory_create(&m->weights[1], packed, eng, DNNL_MEMORY_ALLOCATE), "the packed weights' memory");
    dnnl_primitive_desc_t rpd;
    dnnl_ok(dnnl_reorder_primitive_desc_create(&rpd, plain, eng, packed, eng, NULL), "a reorder's descriptor");
    dnnl_primitive_t r;
    dnnl_ok(dnnl_primitive_create(&r, rpd), "the reorder");
    dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, m->weights[0] }, { DNNL_ARG_TO, m->weights[1] } };
    dnnl_ok(dnnl_primitive_execute(r, stream, 2, args), "the reorder");
    dnnl_ok(dnnl_stream_wait(stream), "dnnl_stream_wait");
    dnnl_ok(dnnl_primitive_destroy(r), "dnnl_primitive_destroy");
    dnnl_ok(dnnl_primitive_desc_destroy(rpd), "dnnl_primitive_desc_destroy");
}

static Bf16Matmul bf16_matmul(dnnl_engine_t eng, const Shape *s) {
    dnnl_dims_t da = { s->M, s->K }, db = { s->K, s->N }, dc = { s->M, s->N };
    dnnl_dims_t sa = { s->ta ? 1 : s->K, s->ta ? s->M : 1 }, sb = { s->tb ? 1 : s->N, s->tb ? s->K : 1 };
    dnnl_dims_t sc = { s->N, 1 };
    dnnl_memory_desc_t md[3];
    dnnl_ok(dnnl_memory_desc_init_by_strides(&md[0], 2, da, dnnl_bf16, sa), "a bf16 memory descriptor");
    dnnl_ok(dnnl_memory_desc_init_by_strides(&md[1], 2, db, dnnl_bf16, sb), "a bf16 memory descriptor");
    dnnl_ok(dnnl_memory_desc_init_by_strides(&md[2], 2, dc, dnnl_f32, sc), "an fp32 memory descriptor");
    Bf16Matmul m;
    dnnl_primitive_desc_t pd = matmul_pd(eng, md);
    dnnl_ok(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &m.impl), "its implementation's name");
    dnnl_ok(dnnl_primitive_create(&m.prim[0], pd), "the bf16 matmul primitive");
    dnnl_ok(dnnl_memory_create(&m.src, &md[0], eng, H[0]), "dnnl_memory_create");
    dnnl_ok(dnnl_memory_create(&m.weights[0], &md[1], eng, H[1]), "dnnl_memory_create");
    dnnl_ok(dnnl_memory_create(&m.dst, &md[2], eng, C), "dnnl_memory_create");
    dnnl_ok(dnnl_primitive_desc_destroy(pd), "dnnl_primitive_desc_destroy");
    dnnl_memory_desc_t any[3] = { md[0], md[1], md[2] };
    dnnl_ok(dnnl_memory_desc_init_by_tag(&any[1], 2, db, dnnl_bf16, dnnl_format_tag_any), "a bf16 memory descriptor");
    pd = matmul_pd(eng, any);
    dnnl_ok(dnnl_primitive_create(&m.prim[1], pd), "the packed bf16 matmul primitive");
    pack_weights(eng, &m, &md[1], dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0));
    dnnl_ok(dnnl_primitive_desc_destroy(pd), "dnnl_primitive_desc_destroy");
    return m;
}

static void bf16_matmul_free(Bf16Matmul *m) {
    dnnl_memory_t mem[4] = { m->src, m->weights[0], m->weights[1], m->dst };
    for (int k = 0; k < 4; k++) dnnl_ok(dnnl_memory_destroy(mem[k]), "dnnl_memory_destroy");
    for (int k = 0; k < 2; k++) dnnl_ok(dnnl_primitive_destroy(m->prim[k]), "dnnl_primitive_destroy");
}

static Bf16Matmul *timed;  // what gemm_bf16 runs

// lib 0: oneDNN's bf16 matmul; 1: the same on the packed weights; 2, 3: both
// operands widened as lc5 widens them, then OpenBLAS's or oneDNN's fp32 product.
static void gemm_bf16(int lib, const Shape *s) {
    if (lib < 2) {
        dnnl_exec_arg_t args[3] = { { DNNL_ARG_SRC, timed->src }, { DNNL_ARG_WEIGHTS, timed->weights[lib] },
                                    { DNNL_ARG_DST, timed->dst } };
        dnnl_ok(dnnl_primitive_execute(timed->prim[lib], stream, 3, args), "the bf16 matmul");
        dnnl_ok(dnnl_stream_wait(stream), "dnnl_stream_wait");
        return;
    }
    size_t na = (size_t)s->M * s->K, nb = (size_t)s->K * s->N;
    for (size_t i = 0; i < na; i++) A[i] = bf16_to_f32(H[0][i]);
    for (size_t i = 0; i < nb; i++) B[i] = bf16_to_f32(H[1][i]);
    gemm(lib - 2, s);
}

static int bench_bf16(double each) {
    dnnl_engine_t eng;
    dnnl_ok(dnnl_engine_create(&eng, dnnl_cpu, 0), "dnnl_engine_create");
    dnnl_ok(dnnl_stream_create(&stream, eng, dnnl_stream_default_flags), "dnnl_stream_create");
    for (size_t i = 0; i < MOST; i++) H[0][i] = f32_to_bf16(A[i]), H[1][i] = f32_to_bf16(B[i]);
    printf("%8s %6s %6s %3s %3s %12s %12s %12s %9s %11s  %s\n", "M", "N", "K", "ta", "tb", "bf16", "bf16 packed",
           "widened", "bf16/wid", "packed/wid", "oneDNN's bf16 implementation");
    double total[2][3] = { { 0, 0, 0 }, { 0, 0, 0 } };  // [large][bf16, packed, widened]
    for (size_t i = 0; i < NSHAPES; i++) {
        const Shape *s = &shapes[i];
        Bf16Matmul m = bf16_matmul(eng, s);
        timed = &m;
        double flop = 2.0 * s->M * s->N * s->K, t16 = time_of(gemm_bf16, 0, s, each);
        double tp = time_of(gemm_bf16, 1, s, each);
        double t32 = time_of(gemm_bf16, 2, s, each), t32b = time_of(gemm_bf16, 3, s, each);
        if (t32b < t32) t32 = t32b;
        total[!is_small(s)][0] += t16, total[!is_small(s)][1] += tp, total[!is_small(s)][2] += t32;
        printf("%8d %6d %6d %3d %3d %9.1f GF %9.1f GF %9.1f GF %8.2fx %10.2fx  %s\n", s->M, s->N, s->K, s->ta, s->tb,
               flop / t16 / 1e9, flop / tp / 1e9, flop / t32 / 1e9, t32 / t16, t32 / tp, m.impl);
        bf16_matmul_free(&m);
    }
    for (int c = 0; c < 2; c++)
        printf("%s products, in total: oneDNN's bf16 matmul at %.2fx the speed of the widened fp32 product (%.2fx "
               "with the weights packed)\n", c ? "large" : "small", total[c][2] / total[c][0], total[c][2] / total[c][1]);
    dnnl_ok(dnnl_stream_destroy(stream), "dnnl_stream_destroy");
    dnnl_ok(dnnl_engine_destroy(eng), "dnnl_engine_destroy");
    return 0;
}

// ----------------------------------------------------------------------------

int main(int argc, char **argv) {
    const char *header = NULL;
    int model[4] = { 0, 0, 0, 0 }, use[2] = { 0, 0 };
    double each = 0.02;
    int bf16 = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--header") == 0 && i + 1 < argc) header = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0) each = 0.005;
        else if (strcmp(argv[i], "--bf16") == 0) bf16 = 1;
        else if (strcmp(argv[i], "--floor") == 0 && i + 5 < argc) {
            for (int k = 0; k < 4; k++) {
                char *end;
                long x = strtol(argv[++i], &end, 10);
                model[k] = *end || x < 1 || x > 1 << 20 ? -1 : (int)x;
            }
            const char *l = argv[++i], *slash = strchr(l, '/'), *large = slash ? slash + 1 : l;
            size_t len = slash ? (size_t)(slash - l) : strlen(l);
            use[0] = len == 6 && strncmp(l, "onednn", 6) == 0 ? 1 : len == 8 && strncmp(l, "openblas", 8) == 0 ? 0 : -1;
            use[1] = strcmp(large, "onednn") == 0 ? 1 : strcmp(large, "openblas") == 0 ? 0 : -1;
            if (use[0] < 0 || use[1] < 0 || model[0] < 0 || model[1] < 0 || model[2] < 0 || model[3] < 0) model[0] = -1;
        } else model[0] = -1;
        if (model[0] < 0) {
            fprintf(stderr, "usage: bench_gemm [--quick] [--header FILE | --floor CONTEXT HIDDEN LAYERS ROWS LIB[/LIB]"
                            " | --bf16] (LIB: openblas or onednn)\n");
            return 2;
        }
    }
    openblas_set_num_threads(1);
    omp_set_num_threads(1);  // oneDNN's OpenMP (read its environment at load: too late to set it here)
    for (size_t i = 0; i < NSHAPES; i++)  // (a shape added beyond the buffers is the bench's own bug)
        if (!fits(&shapes[i])) { fprintf(stderr, "bench_gemm: shape %zu > MOST\n", i); return 1; }
    for (size_t i = 0; i < MOST; i++) A[i] = (float)(i % 17) / 17 - 0.5f, B[i] = (float)(i % 13) / 13 - 0.5f;
    if (model[0]) return floor_of(model[0], model[1], model[2], model[3], use, each);
    if (bf16) return bench_bf16(each);
    const dnnl_version_t *v = dnnl_version();
    if (!header) printf("%8s %6s %6s %3s %3s %12s %12s %8s\n", "M", "N", "K", "ta", "tb", "OpenBLAS", "oneDNN", "ratio");
    double total[2][2] = { { 0, 0 }, { 0, 0 } };  // [large][library]
    for (size_t i = 0; i < NSHAPES; i++) {
        const Shape *s = &shapes[i];
        double flop = 2.0 * s->M * s->N * s->K, t[2];
        for (int lib = 0; lib < 2; lib++) total[!is_small(s)][lib] += t[lib] = time_gemm(lib, s, each);
        if (!header)
            printf("%8d %6d %6d %3d %3d %9.1f GF %9.1f GF %7.2fx\n", s->M, s->N, s->K, s->ta, s->tb,
                   flop / t[0] / 1e9, flop / t[1] / 1e9, t[0] / t[1]);
    }
    double ratio[2];  // > 1: oneDNN faster
    const char *lib[2];
    for (int c = 0; c < 2; c++) {
        ratio[c] = total[c][0] / total[c][1];
        lib[c] = ratio[c] >= 1.05 ? "onednn" : "openblas";
    }
    if (!header) {
        for (int c = 0; c < 2; c++)
            printf("%s products (%s %d), in total: oneDNN %d.%d.%d at %.2fx the speed of %s: %s chosen "
                   "(oneDNN needs 1.05x)\n", c ? "large" : "small", c ? "a side over" : "every side at most", SPLIT, v->major,
                   v->minor, v->patch, ratio[c], openblas_get_config(), lib[c]);
    } else {
        FILE *f = fopen(header, "w");
        if (!f) { perror(header); return 1; }
        fprintf(f, "// Written by tools/bench_gemm.c (make): this machine's faster fp32 product, for the small\n"
                   "// products (no side longer than ZC_GEMM_SPLIT) and for the large.\n"
                   "#define ZC_GEMM_SPLIT %d\n"
                   "#define ZC_GEMM_SMALL \"%s\"\n#define ZC_GEMM_SMALL_SPEEDUP %.2f  // OpenBLAS's time over oneDNN's\n"
                   "#define ZC_GEMM_LARGE \"%s\"\n#define ZC_GEMM_LARGE_SPEEDUP %.2f\n"
                   "#define ZC_GEMM_ONEDNN \"%d.%d.%d\"\n", SPLIT, lib[0], ratio[0], lib[1], ratio[1], v->major,
                v->minor, v->patch);
        if (fclose(f) != 0) { perror(header); return 1; }
    }
    return 0;
}
