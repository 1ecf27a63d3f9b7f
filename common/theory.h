// theory: the course's formulas in one place. The stages print them beside
// what they measure, and tools/plan prints them for any model size.
#ifndef THEORY_H
#define THEORY_H

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

#endif
