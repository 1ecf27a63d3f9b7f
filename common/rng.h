// rng: a small portable random number generator. Counter-based (a hash of seed,
// stream and index), so any element of any stream can be drawn directly: a rank
// that owns a slice of a layer draws exactly that slice's numbers.
#ifndef RNG_H
#define RNG_H

#include <stdint.h>

// Streams, so init, shuffling and sampling never share numbers.
#define RNG_STREAM_INIT    0x100000000ull  // + layer index
#define RNG_STREAM_SHUFFLE 0x200000000ull  // + epoch
#define RNG_STREAM_SAMPLE  0x300000000ull

typedef struct { uint64_t seed, stream, i; } Rng;

// 64 random bits for element i of a stream.
uint64_t rng_hash(uint64_t seed, uint64_t stream, uint64_t i);
// Uniform in [0, 1) with 24 bits, element i of a stream.
float rng_uniform_at(uint64_t seed, uint64_t stream, uint64_t i);
// A sequential generator over one stream.
Rng rng_stream(uint64_t seed, uint64_t stream);
uint64_t rng_next(Rng *r);
float rng_uniform(Rng *r);
// Uniform integer in [0, n), n > 0, without modulo bias.
uint64_t rng_below(Rng *r, uint64_t n);

#endif
