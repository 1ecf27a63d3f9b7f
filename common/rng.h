// rng: a small portable random number generator. Counter-based (a hash of seed,
// stream and index), so any element of any stream can be drawn directly: a rank
// that owns a slice of a layer draws exactly that slice's numbers.
#ifndef RNG_H
#define RNG_H

#include <stdint.h>

#include "hd.h"

// Streams, so init, shuffling and sampling never share numbers.
#define RNG_STREAM_INIT    0x100000000ull  // + layer index
#define RNG_STREAM_SHUFFLE 0x200000000ull  // + epoch
#define RNG_STREAM_SAMPLE  0x300000000ull

typedef struct { uint64_t seed, stream, i; } Rng;

// The hash is inline and compiled for the GPU too (hd.h): init on either device
// draws the same numbers.
// splitmix64's finalizer. Integer arithmetic only, so every machine and
// compiler draws the same numbers.
static inline ZC_HD uint64_t rng_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// 64 random bits for element i of a stream.
static inline ZC_HD uint64_t rng_hash(uint64_t seed, uint64_t stream, uint64_t i) {
    uint64_t k = rng_mix(seed + 0x9e3779b97f4a7c15ull);
    k = rng_mix(k ^ (stream * 0xd1b54a32d192ed03ull));
    return rng_mix(k ^ (i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull));
}

// Uniform in [0, 1) with 24 bits, element i of a stream.
static inline ZC_HD float rng_uniform_at(uint64_t seed, uint64_t stream, uint64_t i) {
    return (float)(rng_hash(seed, stream, i) >> 40) * (1.0f / 16777216.0f);
}
// A sequential generator over one stream.
Rng rng_stream(uint64_t seed, uint64_t stream);
uint64_t rng_next(Rng *r);
float rng_uniform(Rng *r);
// Uniform integer in [0, n), n > 0, without modulo bias.
uint64_t rng_below(Rng *r, uint64_t n);
// An index drawn with probabilities probs[0..n): the first whose running sum
// passes one uniform draw (n - 1 if rounding leaves the sum short of it).
int rng_categorical(Rng *r, const float *probs, int n);

#endif
