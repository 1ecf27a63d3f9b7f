// model_diff A B TOL: two model files (safetensors, every tensor F32) are the
// same model within TOL: the same tensors, names and shapes, in the same
// order, each within TOL in relative L2 distance (|a - b| / |b|, in double).
// Prints each tensor's distance and the worst; exit 0 within TOL, 1 beyond
// it, 2 if a file cannot be read or the two hold different tensors. For
// tests/test_gpu.sh: the parameters a stage trained on the GPU against the
// same stage's on the CPU, not only the losses.
#include "../common/base.h"
#include "../common/mem.h"
#include "../common/safetensors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int refuse(const char *why) {
    fprintf(stderr, "model_diff: %s\n", why);
    return 2;
}

int main(int argc, char **argv) {
    rt.prog = "model_diff";
    if (argc != 4) return refuse("usage: model_diff A.safetensors B.safetensors TOL");
    char *end;
    double tol = strtod(argv[3], &end);
    if (*end || !(tol >= 0)) return refuse("TOL must be a number, 0 or more");
    StFile a, b;
    const char *err = st_open(&a, argv[1]);
    if (err) return refuse(err);
    if ((err = st_open(&b, argv[2]))) { st_close(&a); return refuse(err); }
    int rc = 0;
    double worst = 0;
    if (a.n != b.n) rc = 2, fprintf(stderr, "model_diff: %d tensors against %d\n", a.n, b.n);
    for (int i = 0; i < a.n && rc != 2; i++) {
        const StTensor *x = &a.t[i], *y = &b.t[i];
        size_t n = 1;
        int same = strcmp(x->name, y->name) == 0 && x->ndim == y->ndim;
        for (int d = 0; d < x->ndim && same; d++) same = x->shape[d] == y->shape[d], n *= (size_t)x->shape[d];
        if (!same) { rc = 2; fprintf(stderr, "model_diff: tensor %d is %s in one file and %s in the other\n", i, x->name, y->name); break; }
        float *u = mem_alloc(MEM_DATA, n * sizeof(float)), *v = mem_alloc(MEM_DATA, n * sizeof(float));
        if ((err = st_read(&a, x->name, x->ndim, x->shape, 0, n, u)) || (err = st_read(&b, y->name, y->ndim, y->shape, 0, n, v))) {
            rc = 2;
            fprintf(stderr, "model_diff: %s\n", err);
        } else {
            double num = 0, den = 0;
            for (size_t k = 0; k < n; k++) num += ((double)u[k] - v[k]) * ((double)u[k] - v[k]), den += (double)v[k] * v[k];
            double dist = den > 0 ? sqrt(num / den) : sqrt(num);
            printf("  %-20s %.3g\n", x->name, dist);
            if (dist > worst) worst = dist;
        }
        mem_free(u);
        mem_free(v);
    }
    st_close(&a);
    st_close(&b);
    if (rc) return rc;
    printf("worst relative distance %.3g (allowed %g)\n", worst, tol);
    return worst <= tol ? 0 : 1;
}
