// sharding: helpers for grading the sharded stages (lc2-lc5): Ψ_pad and layer
// sizes computed from the layer shapes rather than taken from the stage, and
// the full model put together from every rank's slices. Included after the
// stage's .c and grading.h.
#ifndef SHARDING_H
#define SHARDING_H

#include <stdint.h>

// A layer's length padded to a multiple of N, and Ψ_pad: computed here from the
// layer sizes rather than taken from the stage's own fields.
static inline uint64_t padded(const Layer *L) {
    uint64_t N = (uint64_t)rt.world;
    return (L->numel + N - 1) / N * N;
}

static inline uint64_t padded_numel(const Model *m) {
    uint64_t sum = 0;
    for (int l = 0; l < m->nlayers; l++) sum += padded(&m->layer[l]);
    return sum;
}

// How many real elements this rank's slice of L holds, from the shapes (what
// own_numel must say, computed here independently).
static inline size_t own_real(const Layer *L) {
    size_t shard = padded(L) / (size_t)rt.world, first = (size_t)rt.rank * shard;
    return first >= L->numel ? 0 : (L->numel - first < shard ? L->numel - first : shard);
}

// The largest padded layer (pairs = 0) or pair of neighbouring layers (pairs = 1).
static inline uint64_t largest(const Model *m, int pairs) {
    uint64_t best = 0;
    for (int l = 0; l + pairs < m->nlayers; l++) {
        uint64_t p = padded(&m->layer[l]) + (pairs ? padded(&m->layer[l + 1]) : 0);
        best = p > best ? p : best;
    }
    return best;
}

// For sharded stages: every rank's fp32 slices of each layer put together into
// dst [Ψ] with the library's all-gather, independently of the stage's code.
static inline void gather_slices(const Model *m, const float *slices, float *dst) {
    for (int l = 0; l < m->nlayers; l++) {
        const Layer *L = &m->layer[l];
        float *tmp = mem_alloc(MEM_COMM_BUFFERS, L->pad * sizeof(float));
        comm_all_gather(slices + L->soff, tmp, L->shard, DT_F32);
        copy(dst + L->off, tmp, L->numel);
        mem_free(tmp);
    }
}

#endif
