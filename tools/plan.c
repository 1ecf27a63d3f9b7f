// plan: the course's formulas for any model and any number of ranks, before
// renting the machines. Model-state bytes per rank and bytes each rank sends
// per step for DDP and the three ZeRO stages (common/theory, the same code the
// stages print their formulas with); in mixed precision, beside them, what
// DeepSpeed's memory estimator computes for ZeRO-2 and ZeRO-3, and why the two differ.
//   build/bin/plan --params 7.5e9 --ranks 64 --precision mixed   (the ZeRO paper's figure)
//   build/bin/plan --params 2851e6 --largest-layer 32e6 --ranks 8 (DeepSpeed's t5-3b example)
//   build/bin/plan --hidden 256 --layers 2 --context 5 --ranks 4 --precision fp32
// A single process; no MPI.
#include "../common/theory.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "plan";

static void usage(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    exit(2);
}

static double number(const char *flag, const char *v, double lo, double hi) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno || !isfinite(x) || x < lo || x > hi)
        usage("%s %s: expected a number in range (see --help)", flag, v);
    return x;
}

// A count: a number with no fraction (7.5e9 is one; 2.5 is not).
static double count(const char *flag, const char *v, double lo, double hi) {
    double x = number(flag, v, lo, hi);
    if (x != floor(x)) usage("%s %s: expected a whole number (see --help)", flag, v);
    return x;
}

// Ψ of the course's MLP, Ψ_pad with each layer padded to a multiple of n, and
// the largest layer's parameters.
static void mlp_params(double hidden, double layers, double context, int n, double *psi, double *psi_pad,
                       double *largest) {
    *psi = *psi_pad = *largest = 0;
    double in = context * 27;
    for (int l = 0; l <= (int)layers; l++) {
        double out = l == (int)layers ? 27 : hidden, numel = out * in + out;
        *psi += numel;
        *psi_pad += ceil(numel / n) * n;
        *largest = fmax(*largest, numel);
        in = out;
    }
}

static void human(double bytes, char *out, size_t len) {
    if (bytes >= 1e9) snprintf(out, len, "%.1f GB", bytes / 1e9);
    else if (bytes >= 1e6) snprintf(out, len, "%.1f MB", bytes / 1e6);
    else snprintf(out, len, "%.0f B", bytes);
}

// ----------------------------------------------------------------------------
// DeepSpeed's estimator (deepspeed.runtime.zero: estimate_zero2_ and
// estimate_zero3_model_states_mem_needs, no offload), as its code computes it:
// GPU bytes per rank. It assumes fp16 params with fp32 master and Adam, and
// prints bytes / 2^30 with the label "GB"; we keep to 10^9 and show its figure.

static double deepspeed_zero2(double psi, int n) { return 2 * psi + floor(18 * psi / n); }
static double deepspeed_zero3(double psi, double largest, int n) { return 4 * largest + floor(18 * psi / n); }

// One row: our unit (GB = 10^9 bytes), and the figure DeepSpeed prints.
static void deepspeed_row(const char *stage, double bytes, const char *formula) {
    char h[32];
    human(bytes, h, sizeof h);
    printf("%-20s %22.0f %12s   %-28s (it prints %.2fGB: bytes / 2^30)\n", stage, bytes, h, formula,
           bytes / 1073741824.0);
}

static void print_deepspeed(double psi, double largest, int n) {
    printf("\nDeepSpeed's estimator, as its code computes it today (no offload):\n");
    deepspeed_row("ZeRO-2", deepspeed_zero2(psi, n), "2Ψ + 18Ψ/N");
    if (largest > 0) {
        char f[64];
        snprintf(f, sizeof f, "4 x %.0f + 18Ψ/N", largest);
        deepspeed_row("ZeRO-3", deepspeed_zero3(psi, largest, n), f);
    } else {
        printf("%-20s %22s   (give --largest-layer, the parameters of the largest layer)\n", "ZeRO-3", "");
    }
    printf("Why they differ: the paper counts 2 + 2 + 12 bytes per parameter and shards what the stage says;\n"
           "DeepSpeed adds a 4-byte fp32 copy of each rank's gradient shard (its 18 per parameter of the shard:\n"
           "2 fp16 grads + 4 fp32 grads + 4 master + 8 Adam in ZeRO-2; 2 fp16 params + 4 fp32 grads + 4 master\n"
           "+ 8 Adam in ZeRO-3), and its ZeRO-3 adds the largest layer gathered with its gradient (2 + 2 bytes\n"
           "per parameter of that layer). Its documentation still shows 15.93GB for ZeRO-2 on t5-3b at N = 8,\n"
           "from an older 4Ψ + 16Ψ/N.\n");
}

int main(int argc, char **argv) {
    double psi = 0, hidden = 0, layers = -1, context = 5, largest = 0;
    int n = 0, mixed = 1;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
            printf("usage: %s (--params P [--largest-layer L] | --hidden H --layers L [--context T]) --ranks N "
                   "[--precision mixed|fp32]\n", prog);
            return 0;
        }
        if (i + 1 >= argc) usage("%s: missing value%s", f, "");
        const char *v = argv[++i];
        if (strcmp(f, "--params") == 0) psi = count(f, v, 1, 1e15);
        else if (strcmp(f, "--largest-layer") == 0) largest = count(f, v, 1, 1e15);
        else if (strcmp(f, "--hidden") == 0) hidden = count(f, v, 1, 1e7);
        else if (strcmp(f, "--layers") == 0) layers = count(f, v, 0, 1e4);
        else if (strcmp(f, "--context") == 0) context = count(f, v, 1, 1e4);
        else if (strcmp(f, "--ranks") == 0) n = (int)count(f, v, 1, 1e7);
        else if (strcmp(f, "--precision") == 0) {
            if (strcmp(v, "mixed") && strcmp(v, "fp32")) usage("%s %s: expected mixed or fp32", f, v);
            mixed = strcmp(v, "mixed") == 0;
        } else usage("unknown option '%s'%s (see --help)", f, "");
    }
    if (n == 0) usage("--ranks is required%s%s", "", "");
    if ((psi > 0) == (hidden > 0 || layers >= 0))
        usage("give either --params or --hidden and --layers%s%s", "", "");
    if (hidden > 0 && layers < 0) usage("--hidden needs --layers%s%s", "", "");
    if (layers >= 0 && hidden == 0) usage("--layers needs --hidden%s%s", "", "");
    if (largest > 0 && psi == 0) usage("--largest-layer goes with --params (the MLP's is computed)%s%s", "", "");
    if (largest > psi && psi > 0) usage("--largest-layer is larger than --params%s%s", "", "");
    double psi_pad = psi;
    if (psi == 0) mlp_params(hidden, layers, context, n, &psi, &psi_pad, &largest);
    // Mixed precision: 2-byte params and grads, fp32 master, m and v (K = 12).
    // fp32: 4-byte params and grads, m and v (K = 8).
    int b = mixed ? 2 : 4, k = mixed ? 12 : 8;
    printf("Ψ = %.0f parameters%s, N = %d ranks, %s: %d-byte params and grads, K = %d bytes of optimizer state\n",
           psi, psi_pad != psi ? " (Ψ_pad with padded layers below)" : "", n, mixed ? "mixed precision" : "fp32",
           b, k);
    if (psi_pad != psi) printf("Ψ_pad = %.0f\n", psi_pad);
    printf("(GB = 10^9 bytes, MB = 10^6)\n");
    printf("%-20s %22s %12s %26s\n", "stage", "model state per rank", "", "sent per rank per step");
    for (int s = ZERO_DDP; s <= ZERO_3; s++) {
        char a[32], c[32];
        double state = theory_model_state((ZeroStage)s, psi, psi_pad, n, b, k);
        double comm = theory_comm((ZeroStage)s, psi, psi_pad, n, b);
        human(state, a, sizeof a);
        human(comm, c, sizeof c);
        printf("%-20s %22.0f %12s %17.0f %8s\n", zero_stage_name((ZeroStage)s), state, a, comm, c);
    }
    if (mixed) print_deepspeed(psi, largest, n);
    return 0;
}
