// data: word list -> symbols -> per-epoch keyed permutations -> batch slices.
#include "data.h"
#include "base.h"
#include "file.h"
#include "mem.h"
#include "rng.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>
#include <sys/stat.h>

int data_symbol(char c) { return c == '.' ? 0 : c - 'a' + 1; }
char data_char(int symbol) { return symbol == 0 ? '.' : (char)('a' + symbol - 1); }

// ----------------------------------------------------------------------------
// reading

static char reason[512];

static const char *read_file(const char *path, char **buf, size_t *len) {
    const char *err = file_check_input(path, "data file");  // before open: a FIFO would block it
    if (err) return err;
    FILE *f = fopen(path, "rb");
    struct stat sb;
    if (!f || fstat(fileno(f), &sb) != 0) {
        int e = errno;
        if (f) fclose(f);
        snprintf(reason, sizeof reason, "cannot read data file '%s': %s", file_shown(path), strerror(e));
        return reason;
    }
    size_t size = (size_t)sb.st_size;
    *buf = mem_alloc(MEM_DATA, size + 1);
    size_t got = fread(*buf, 1, size, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != size) {
        mem_free(*buf);
        snprintf(reason, sizeof reason, "cannot read data file '%s': read error", file_shown(path));
        return reason;
    }
    *len = got;
    return NULL;
}

// Keeps the usable lines' words as symbols, each word followed by 0, at the
// front of buf, in one pass over the file: a word's symbols and its end take
// the bytes of its line and its newline, so the writing never overtakes the
// reading (buf has one byte past len for a last line without a newline).
// Returns the words kept; *nexamples: the symbols written.
static size_t words_to_symbols(char *buf, size_t len, size_t *nexamples) {
    size_t words = 0, out = 0;
    char *p = buf, *end = buf + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p)), *stop = nl ? nl : end;
        size_t wl = (size_t)(stop - p);
        if (wl && p[wl - 1] == '\r') wl--;
        unsigned bad = wl == 0;
        for (size_t k = 0; k < wl; k++) bad |= (unsigned char)(p[k] - 'a') > 'z' - 'a';  // no branch per letter
        if (!bad) {
            for (size_t k = 0; k < wl; k++) buf[out + k] = (char)data_symbol(p[k]);
            buf[out + wl] = 0;
            out += wl + 1;
            words++;
        }
        p = stop + 1;
    }
    *nexamples = out;
    return words;
}

// The permutation's domain: 4^h >= n, so it splits into two halves of h bits.
static int half_bits_for(size_t n) {
    int h = 1;
    while (h < 32 && ((uint64_t)1 << (2 * h)) < n) h++;
    return h;
}

const char *data_load(Data *d, const char *path, int T, uint64_t seed) {
    memset(d, 0, sizeof *d);
    char *buf = NULL;
    size_t len = 0, n = 0;
    const char *err = read_file(path, &buf, &len);
    if (err) return err;
    size_t words = words_to_symbols(buf, len, &n);
    if (words == 0 || n > UINT32_MAX) {
        mem_free(buf);
        if (len == 0) snprintf(reason, sizeof reason, "data file '%s' is empty", file_shown(path));
        else if (words == 0)
            snprintf(reason, sizeof reason,
                     "data file '%s' has no usable words (one lowercase a-z word per line)", file_shown(path));
        else snprintf(reason, sizeof reason, "data file '%s' has too many examples", file_shown(path));
        return reason;
    }
    d->T = T;
    d->n = n;
    d->nwords = words;
    d->seed = seed;
    d->text = mem_alloc(MEM_DATA, n);
    d->key_epoch = -1;
    memcpy(d->text, buf, n);
    d->fingerprint = XXH3_64bits(d->text, n);  // the examples made, however the file spells its lines
    mem_free(buf);
    return NULL;
}

void data_free(Data *d) {
    mem_free(d->text);
    memset(d, 0, sizeof *d);
}

// ----------------------------------------------------------------------------
// batches

// A Feistel network over [0, 4^h): each round swaps the halves and mixes one
// into the other with a keyed hash, which is a bijection whatever the hash.
// Values at or past n walk on through the network until they land below n (a
// bijection of [0, n): cycle walking; 4^h < 4n, so about two steps at most on
// average, and never more than 4^h). The keys come from the seed and the epoch: each epoch its own order.
size_t data_order(Data *d, long epoch, size_t i) {
    if (epoch != d->key_epoch) {
        for (int k = 0; k < DATA_ROUNDS; k++) d->keys[k] = rng_hash(d->seed, RNG_STREAM_SHUFFLE + (uint64_t)epoch, (uint64_t)k);
        d->half_bits = half_bits_for(d->n);
        d->key_epoch = epoch;
    }
    int h = d->half_bits;
    uint64_t mask = ((uint64_t)1 << h) - 1, x = i, walked = 0, domain = (uint64_t)1 << (2 * h);
    do {
        // A bijection brings the walk back below n within its domain's size;
        // a network that is not one (a broken round) would walk forever.
        if (walked++ == domain)
            fatal("data: the shuffle is not a permutation (example %zu walked %llu steps without landing below %zu)",
                  i, (unsigned long long)domain, d->n);
        uint64_t left = x >> h, right = x & mask;
        for (int k = 0; k < DATA_ROUNDS; k++) {
            uint64_t next = left ^ (rng_mix(right ^ d->keys[k]) & mask);
            left = right;
            right = next;
        }
        x = left << h | right;
    } while (x >= d->n);
    return (size_t)x;
}

int data_example(const Data *d, size_t e, uint8_t *ctx) {
    // Walking back from e: the symbols of its word, until the 0 that ends the
    // word before (or the start of the text); older context is '.'.
    int t = d->T, inside = 1;
    for (size_t back = 1; back <= (size_t)d->T; back++) {
        inside = inside && back <= e && d->text[e - back] != 0;
        ctx[--t] = inside ? d->text[e - back] : 0;
    }
    return d->text[e];
}

void data_batch(Data *d, long step, int B, int first, int count, uint8_t *ctx, int *targets) {
    for (int k = 0; k < count; k++) {
        uint64_t pos = (uint64_t)step * (uint64_t)B + (uint64_t)first + (uint64_t)k;
        size_t e = data_order(d, (long)(pos / d->n), (size_t)(pos % d->n));
        targets[k] = data_example(d, e, ctx + (size_t)k * d->T);
    }
}
