// data: the word list turned into training examples and deterministic batches.
// A word w gives |w|+1 examples: the T previous symbols ('.' before the word)
// and the next symbol, '.' after the last letter. Vocabulary: '.'=0, a..z=1..26.
// Examples are shuffled once per epoch with the seed; global batch s is the next
// B examples of that order, and a rank reads only its slice of it.
//
// What is held is the words' symbols, one byte per example, nothing more: an
// example is made when a batch needs it (its context is the symbols before it
// in its word), and the epoch's order is a keyed permutation computed on
// demand, not a table. So the data set costs every rank n bytes, not the
// (T + 1 + 4) n bytes of stored examples and a shuffled index.
#ifndef DATA_H
#define DATA_H

#include <stddef.h>
#include <stdint.h>

#define VOCAB 27

#define DATA_ROUNDS 6

typedef struct {
    int T;                        // context length
    size_t nwords, n;             // words kept, examples made
    uint64_t fingerprint;         // XXH3 of text: which data set this is, for checkpoints
    uint8_t *text;                // [n] each word's symbols then 0: example e predicts text[e]
    uint64_t seed;
    long key_epoch;               // the epoch whose keys are below (-1: none)
    uint64_t keys[DATA_ROUNDS];   // its permutation's round keys
    int half_bits;                // with them: the permutation works on [0, 4^half_bits) >= n
} Data;

// Reads the word list (lowercase a-z lines only; others skipped). Returns NULL,
// or a one-line reason (unreadable file, empty file, no usable words) and
// leaves d empty.
const char *data_load(Data *d, const char *path, int T, uint64_t seed);
// Examples [first, first+count) of global batch `step` of size B: contexts into
// ctx [count][T], targets into targets [count].
void data_batch(Data *d, long step, int B, int first, int count, uint8_t *ctx, int *targets);
// The example at place i of epoch's order: a bijection of [0, n) for each epoch.
size_t data_order(Data *d, long epoch, size_t i);
// Example e: its T context symbols into ctx; returns its target.
int data_example(const Data *d, size_t e, uint8_t *ctx);
void data_free(Data *d);
// Symbol for a character ('.' or a-z), and back.
int data_symbol(char c);
char data_char(int symbol);

#endif
