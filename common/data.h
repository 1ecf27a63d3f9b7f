// data: the word list turned into training examples and deterministic batches.
// A word w gives |w|+1 examples: the T previous symbols ('.' before the word)
// and the next symbol, '.' after the last letter. Vocabulary: '.'=0, a..z=1..26.
// Examples are shuffled once per epoch with the seed; global batch s is the next
// B examples of that order, and a rank reads only its slice of it.
#ifndef DATA_H
#define DATA_H

#include <stddef.h>
#include <stdint.h>

#define VOCAB 27

typedef struct {
    int T;              // context length
    size_t nwords, n;   // words kept, examples made
    uint8_t *ctx;       // [n][T] context symbols
    uint8_t *target;    // [n] next symbol
    uint32_t *perm;     // the current epoch's order of examples
    long perm_epoch;    // which epoch perm holds (-1: none)
    uint64_t seed;
} Data;

// Reads the word list (lowercase a-z lines only; others skipped). Returns NULL,
// or a one-line reason (unreadable file, empty file, no usable words) and
// leaves d empty.
const char *data_load(Data *d, const char *path, int T, uint64_t seed);
// Examples [first, first+count) of global batch `step` of size B: contexts into
// ctx [count][T], targets into targets [count].
void data_batch(Data *d, long step, int B, int first, int count, uint8_t *ctx, int *targets);
void data_free(Data *d);
// Symbol for a character ('.' or a-z), and back.
int data_symbol(char c);
char data_char(int symbol);

#endif
