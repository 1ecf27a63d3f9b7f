// theory: model-state and traffic formulas of DDP and the three ZeRO stages.
#include "theory.h"

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
