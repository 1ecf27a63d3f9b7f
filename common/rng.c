// rng: splitmix64 finalizers over (seed, stream, index). Integer arithmetic only,
// so every machine and compiler draws the same numbers.
#include "rng.h"

static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t rng_hash(uint64_t seed, uint64_t stream, uint64_t i) {
    uint64_t k = mix(seed + 0x9e3779b97f4a7c15ull);
    k = mix(k ^ (stream * 0xd1b54a32d192ed03ull));
    return mix(k ^ (i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull));
}

float rng_uniform_at(uint64_t seed, uint64_t stream, uint64_t i) {
    return (float)(rng_hash(seed, stream, i) >> 40) * (1.0f / 16777216.0f);
}

Rng rng_stream(uint64_t seed, uint64_t stream) { return (Rng){ seed, stream, 0 }; }
uint64_t rng_next(Rng *r) { return rng_hash(r->seed, r->stream, r->i++); }
float rng_uniform(Rng *r) { return rng_uniform_at(r->seed, r->stream, r->i++); }

uint64_t rng_below(Rng *r, uint64_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // reject the biased tail
    uint64_t x;
    do x = rng_next(r); while (x >= limit);
    return x % n;
}
