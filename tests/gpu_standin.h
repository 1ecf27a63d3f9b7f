// gpu_standin: a recording stand-in for the GPU kernels (kernels_cuda.h), so a
// check on a machine without a GPU can see what a kernels function hands the
// GPU on a CUDA run: test_lc0 links a copy of common/kernels_cpu.c built as a
// CUDA build's (its adam_update renamed gpu_handoff_adam_update, everything
// else of it private) against these in place of the CUDA kernels.
#ifndef GPU_STANDIN_H
#define GPU_STANDIN_H

#include <stddef.h>

#include "../common/kernels.h"

// What cuda_adam_update was handed, and how often; the first other GPU kernel
// called instead (NULL if none).
typedef struct {
    int calls;
    float *p, *m, *v;
    const float *g;
    size_t n;
    float decay, step_size, bc2_sqrt, beta1, beta2, eps;
    const char *other;
} AdamHandoff;
extern AdamHandoff standin_adam;

// Forgets what was recorded.
void standin_reset(void);
// adam_update of the learner's file as a CUDA build compiles it.
void gpu_handoff_adam_update(float *p, const float *g, float *m, float *v, size_t n,
                             const AdamHyper *h, long step);

#endif
