// data: word list -> examples -> per-epoch shuffles -> batch slices.
#include "data.h"
#include "file.h"
#include "mem.h"
#include "rng.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
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

// Counts the usable lines and their examples; with d, also writes the examples.
static size_t for_each_word(const char *buf, size_t len, Data *d, size_t *nexamples) {
    size_t words = 0, examples = 0, i = 0;
    while (i < len) {
        size_t start = i;
        while (i < len && buf[i] != '\n') i++;
        size_t end = i++;
        if (end > start && buf[end - 1] == '\r') end--;
        int ok = end > start;
        for (size_t k = start; k < end && ok; k++) ok = buf[k] >= 'a' && buf[k] <= 'z';
        if (!ok) continue;
        size_t wl = end - start;
        if (d) {  // second pass: write the examples of this word
            for (size_t pos = 0; pos <= wl; pos++) {
                uint8_t *c = d->ctx + (examples + pos) * d->T;
                for (int t = 0; t < d->T; t++) {
                    long at = (long)pos - d->T + t;
                    c[t] = at < 0 ? 0 : (uint8_t)data_symbol(buf[start + at]);
                }
                d->target[examples + pos] = pos < wl ? (uint8_t)data_symbol(buf[start + pos]) : 0;
            }
        }
        words++;
        examples += wl + 1;
    }
    *nexamples = examples;
    return words;
}

const char *data_load(Data *d, const char *path, int T, uint64_t seed) {
    memset(d, 0, sizeof *d);
    char *buf = NULL;
    size_t len = 0, n = 0;
    const char *err = read_file(path, &buf, &len);
    if (err) return err;
    size_t words = for_each_word(buf, len, NULL, &n);
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
    d->ctx = mem_alloc(MEM_DATA, n * (size_t)T);
    d->target = mem_alloc(MEM_DATA, n);
    d->perm = mem_alloc(MEM_DATA, n * sizeof(uint32_t));
    d->perm_epoch = -1;
    for_each_word(buf, len, d, &n);
    mem_free(buf);
    return NULL;
}

void data_free(Data *d) {
    mem_free(d->ctx);
    mem_free(d->target);
    mem_free(d->perm);
    memset(d, 0, sizeof *d);
}

// ----------------------------------------------------------------------------
// batches

static void shuffle(Data *d, long epoch) {
    Rng r = rng_stream(d->seed, RNG_STREAM_SHUFFLE + (uint64_t)epoch);
    for (size_t i = 0; i < d->n; i++) d->perm[i] = (uint32_t)i;
    for (size_t i = d->n - 1; i > 0; i--) {  // Fisher-Yates
        size_t j = (size_t)rng_below(&r, i + 1);
        uint32_t t = d->perm[i];
        d->perm[i] = d->perm[j];
        d->perm[j] = t;
    }
    d->perm_epoch = epoch;
}

void data_batch(Data *d, long step, int B, int first, int count, uint8_t *ctx, int *targets) {
    for (int k = 0; k < count; k++) {
        uint64_t pos = (uint64_t)step * (uint64_t)B + (uint64_t)first + (uint64_t)k;
        long epoch = (long)(pos / d->n);
        if (epoch != d->perm_epoch) shuffle(d, epoch);
        uint32_t e = d->perm[pos % d->n];
        memcpy(ctx + (size_t)k * d->T, d->ctx + (size_t)e * d->T, (size_t)d->T);
        targets[k] = d->target[e];
    }
}
