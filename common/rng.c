// rng: the sequential generators over the counter-based hash in rng.h.
#include "rng.h"

Rng rng_stream(uint64_t seed, uint64_t stream) { return (Rng){ seed, stream, 0 }; }
uint64_t rng_next(Rng *r) { return rng_hash(r->seed, r->stream, r->i++); }
float rng_uniform(Rng *r) { return rng_uniform_at(r->seed, r->stream, r->i++); }

uint64_t rng_below(Rng *r, uint64_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // reject the biased tail
    uint64_t x;
    do x = rng_next(r); while (x >= limit);
    return x % n;
}

int rng_categorical(Rng *r, const float *probs, int n) {
    float u = rng_uniform(r), acc = 0.0f;
    for (int c = 0; c < n; c++)
        if (u < (acc += probs[c])) return c;
    return n - 1;
}
