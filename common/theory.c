// theory: model-state and traffic formulas of DDP and the three ZeRO stages.
#include "theory.h"

#include <stdio.h>

double theory_model_state(ZeroStage s, double psi, double psi_pad, int n, int b, int k) {
    switch (s) {
    case ZERO_DDP: return (2.0 * b + k) * psi;
    case ZERO_1: return 2.0 * b * psi + k * psi_pad / n;
    case ZERO_2: return b * psi + (b + k) * psi_pad / n;
    default: return (2.0 * b + k) * psi_pad / n;
    }
}

double theory_all_reduce(double bytes, int n) { return 2.0 * (n - 1.0) / n * bytes; }
double theory_gather(double bytes, int n) { return (n - 1.0) / n * bytes; }

// DDP all-reduces the gradients; ZeRO-1 and -2 reduce-scatter them and
// all-gather the params (one all-reduce's worth); ZeRO-3 also gathers the params
// before backward.
double theory_comm(ZeroStage s, double psi, double psi_pad, int n, int b) {
    switch (s) {
    case ZERO_DDP: return theory_all_reduce(b * psi, n);
    case ZERO_1:
    case ZERO_2: return theory_all_reduce(b * psi_pad, n);
    default: return theory_gather(3.0 * b * psi_pad, n);
    }
}

const char *zero_stage_name(ZeroStage s) {
    static const char *names[] = { "DDP (lc1)", "ZeRO-1 (lc2)", "ZeRO-2 (lc3)", "ZeRO-3 (lc4, lc5)" };
    return names[s];
}

// ----------------------------------------------------------------------------
// the formulas as printed

const char *theory_model_state_text(ZeroStage s, size_t psi, size_t psi_pad, int n, int b, int k) {
    static char text[256];
    int all = 2 * b + k;
    switch (s) {
    case ZERO_DDP: snprintf(text, sizeof text, "%dΨ = %d x %zu", all, all, psi); break;
    case ZERO_1:
        snprintf(text, sizeof text, "%dΨ + %dΨ + %dΨ_pad/N = %d x %zu + %d x %zu/%d", b, b, k, 2 * b, psi, k,
                 psi_pad, n);
        break;
    case ZERO_2:
        snprintf(text, sizeof text, "%dΨ + %dΨ_pad/N = %d x %zu + %d x %zu/%d", b, b + k, b, psi, b + k, psi_pad, n);
        break;
    default:
        if (k > 8)  // params, grads, the fp32 master, m, v
            snprintf(text, sizeof text, "(%d + %d + %d + 4 + 4)Ψ_pad/N = %d x %zu/%d", b, b, k - 8, all, psi_pad, n);
        else snprintf(text, sizeof text, "%dΨ_pad/N = %d x %zu/%d", all, all, psi_pad, n);
    }
    return text;
}

const char *theory_traffic_text(const Traffic *t) {
    static char text[512];
    int b = t->b;
    const char *clip = t->clip ? " + clip all_reduce 2(N-1)/N x 8" : "";
    const char *flag = t->overflow_flag ? " + overflow flag all_reduce 2(N-1)/N x 4" : "";
    char pad[64];
    snprintf(pad, sizeof pad, "Ψ_pad = %zu%s%s", t->psi_pad, t->dtype ? ", " : "", t->dtype ? t->dtype : "");
    switch (t->stage) {
    case ZERO_DDP:
        snprintf(text, sizeof text, "all_reduce 2(N-1)/N x %dΨ = 2 x %d/%d x %d x %zu", b, t->n - 1, t->n, b, t->psi);
        break;
    case ZERO_1:
        if (t->grad_allreduce)
            snprintf(text, sizeof text, "all_reduce 2(N-1)/N x %dΨ + all_gather (N-1)/N x %dΨ_pad%s (%s)", b, b, clip,
                     pad);
        else
            snprintf(text, sizeof text, "reduce_scatter (N-1)/N x %dΨ_pad + all_gather (N-1)/N x %dΨ_pad%s (%s)", b,
                     b, clip, pad);
        break;
    case ZERO_2:
        snprintf(text, sizeof text, "%d x reduce_scatter (N-1)/N x %dΨ_pad + all_gather (N-1)/N x %dΨ_pad%s (%s)",
                 t->accum, b, b, clip, pad);
        break;
    default:
        snprintf(text, sizeof text, "%d x (all_gather (N-1)/N x %dΨ_pad + all_gather (N-1)/N x %d(Ψ_pad - last layer) "
                 "+ reduce_scatter (N-1)/N x %dΨ_pad)%s%s (%s)", t->accum, b, b, b, flag, clip, pad);
    }
    return text;
}
