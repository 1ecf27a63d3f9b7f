// theory: the course's formulas in one place. The stages print them beside
// what they measure, and tools/plan prints them for any model size.
#ifndef THEORY_H
#define THEORY_H

#include <stddef.h>

typedef enum { ZERO_DDP, ZERO_1, ZERO_2, ZERO_3 } ZeroStage;

// Model-state bytes per rank. psi: the parameters; psi_pad: the same with every
// layer padded to a multiple of n (psi when unknown); b: bytes per param and per
// grad (4, or 2 in 16 bits); k: bytes of optimizer state per param (8 for m and
// v; 12 with an fp32 master copy). DDP (2b+k)Ψ, ZeRO-1 2bΨ + kΨ/N, ZeRO-2
// bΨ + (b+k)Ψ/N, ZeRO-3 (2b+k)Ψ/N.
double theory_model_state(ZeroStage s, double psi, double psi_pad, int n, int b, int k);
// Bytes each rank sends per step in the ring model, for one micro-batch and no
// clipping: DDP 2(N-1)/N bΨ, ZeRO-1 and -2 2(N-1)/N bΨ_pad, ZeRO-3 3(N-1)/N bΨ_pad.
double theory_comm(ZeroStage s, double psi, double psi_pad, int n, int b);
// The ring model of one collective on a buffer of bytes: what each rank sends in
// an all-reduce, 2(N-1)/N of it, and in a reduce-scatter or all-gather, (N-1)/N.
double theory_all_reduce(double bytes, int n);
double theory_gather(double bytes, int n);
const char *zero_stage_name(ZeroStage s);

// The formulas as the reports print them, with the run's numbers: each written
// here once, beside its arithmetic. The texts live until the next call.
// Model state, e.g. "4Ψ + 12Ψ_pad/N = 4 x 137 + 12 x 140/4" (ZeRO-2, b 4, k 8);
// with an fp32 master (k 12) ZeRO-3 spells out its five terms.
const char *theory_model_state_text(ZeroStage s, size_t psi, size_t psi_pad, int n, int b, int k);

// What a stage sends per step, as its report states the ring model's traffic.
typedef struct {
    ZeroStage stage;    // DDP: one all-reduce; ZeRO-1: reduce-scatter and all-gather once a
                        // step; ZeRO-2: a reduce-scatter per micro-batch; ZeRO-3: also
                        // forward's and backward's all-gathers per micro-batch
    int b;              // bytes per element on the wire
    int accum;          // micro-batches per step
    int grad_allreduce; // ZeRO-1 with --grad-sync allreduce: an all-reduce of Ψ instead
    int overflow_flag;  // lc5: one all-reduce of an int, the overflow agreed
    int clip;           // one all-reduce of a double, the squared norm (sharded stages)
    const char *dtype;  // named beside Ψ_pad where the elements are not fp32, or NULL
    size_t psi, psi_pad;
    int n;
} Traffic;

// E.g. "3 x reduce_scatter (N-1)/N x 4Ψ_pad + all_gather (N-1)/N x 4Ψ_pad (Ψ_pad = 140)".
const char *theory_traffic_text(const Traffic *t);

#endif
