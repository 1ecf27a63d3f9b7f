// mem: a table of live allocations with per-category current and peak bytes.
// The table (not a header before each block) also works for device pointers.
// One lock guards it: the comm thread allocates scratch for hand-written
// collectives while the main thread allocates for the stage.
#include "mem.h"
#include "comm.h"
#include "rt.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { void *p; size_t bytes; MemCat cat; } Block;

static Block *blocks;          // live allocations, unordered
static size_t nblocks, capblocks;
static MemStats st;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *cat_names[MEM_NCAT] = {
    "params", "grads", "master_params", "adam_m", "adam_v",
    "activations", "comm_buffers", "data"
};

const char *mem_cat_name(MemCat cat) { return cat_names[cat]; }

// ----------------------------------------------------------------------------
// the table

static void table_add(void *p, size_t bytes, MemCat cat) {
    if (nblocks == capblocks) {
        size_t cap = capblocks ? 2 * capblocks : 64;
        Block *b = realloc(blocks, cap * sizeof *b);  // the table itself is bookkeeping
        if (!b) fatal("mem: cannot grow the allocation table to %zu entries", cap);
        blocks = b;
        capblocks = cap;
    }
    blocks[nblocks++] = (Block){ p, bytes, cat };
}

static size_t table_find(const void *p) {
    // Newest first: buffers are mostly freed in reverse order of allocation.
    for (size_t i = nblocks; i-- > 0;)
        if (blocks[i].p == p) return i;
    fatal("mem: pointer %p was not allocated by mem_alloc", p);
}

static void count(MemCat cat, size_t bytes, int sign) {
    if (sign > 0) {
        st.cur[cat] += bytes;
        st.cur_total += bytes;
        if (st.cur[cat] > st.peak[cat]) st.peak[cat] = st.cur[cat];
        if (st.cur_total > st.peak_total) st.peak_total = st.cur_total;
    } else {
        st.cur[cat] -= bytes;
        st.cur_total -= bytes;
    }
}

// ----------------------------------------------------------------------------
// allocation

void mem_init(void) {
    // glibc serves blocks above 128 KiB with mmap and unmaps them on free, so a
    // buffer freed and allocated again every step (a layer's gradient, a
    // collective's scratch) would fault in fresh pages each time. Keep them.
    // A tuning only: a sanitizer's allocator refuses it, which costs nothing but speed.
    (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

static void *allocate(MemCat cat, size_t bytes, int zero) {
    if ((unsigned)cat >= MEM_NCAT) fatal("mem_alloc: bad category %d", (int)cat);
    size_t rounded = (bytes + 63) & ~(size_t)63;
    if (rounded < bytes) fatal("mem_alloc: %zu bytes overflows", bytes);
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (!p) fatal("mem_alloc: out of memory allocating %zu bytes for %s", bytes,
                  cat_names[cat]);
    if (zero) memset(p, 0, rounded ? rounded : 64);
    pthread_mutex_lock(&lock);
    table_add(p, bytes, cat);
    count(cat, bytes, +1);
    pthread_mutex_unlock(&lock);
    return p;
}

void *mem_alloc(MemCat cat, size_t bytes) { return allocate(cat, bytes, 1); }
void *mem_alloc_scratch(MemCat cat, size_t bytes) { return allocate(cat, bytes, 0); }

void mem_free(void *p) {
    if (!p) return;
    pthread_mutex_lock(&lock);
    size_t i = table_find(p);
    count(blocks[i].cat, blocks[i].bytes, -1);
    blocks[i] = blocks[--nblocks];
    if (nblocks == 0) {  // nothing live: give the table back too
        free(blocks);
        blocks = NULL;
        capblocks = 0;
    }
    pthread_mutex_unlock(&lock);
    free(p);
}

size_t mem_size(const void *p) {
    if (!p) return 0;
    pthread_mutex_lock(&lock);
    size_t bytes = blocks[table_find(p)].bytes;
    pthread_mutex_unlock(&lock);
    return bytes;
}

MemStats mem_stats(void) {
    pthread_mutex_lock(&lock);
    MemStats s = st;
    pthread_mutex_unlock(&lock);
    return s;
}

size_t mem_live_count(void) {
    pthread_mutex_lock(&lock);
    size_t n = nblocks;
    pthread_mutex_unlock(&lock);
    return n;
}

void mem_reset_peaks(void) {
    pthread_mutex_lock(&lock);
    for (int c = 0; c < MEM_NCAT; c++) st.peak[c] = st.cur[c];
    st.peak_total = st.cur_total;
    pthread_mutex_unlock(&lock);
}

size_t mem_model_state_bytes(const MemStats *s) {
    return s->cur[MEM_PARAMS] + s->cur[MEM_GRADS] + s->cur[MEM_MASTER_PARAMS] +
           s->cur[MEM_ADAM_M] + s->cur[MEM_ADAM_V];
}

// ----------------------------------------------------------------------------
// the report

#define MIB (1024.0 * 1024.0)

static char summary_fields[256];  // filled by mem_report

const char *mem_summary_fields(void) { return summary_fields; }

size_t mem_report(const char *formula, double formula_bytes, size_t *peak) {
    // One row per category plus the total and the model state: max over ranks.
    enum { NROW = 2 * MEM_NCAT + 3 };
    MemStats s = mem_stats();
    double v[NROW];
    for (int c = 0; c < MEM_NCAT; c++) {
        v[2 * c] = (double)s.cur[c];
        v[2 * c + 1] = (double)s.peak[c];
    }
    v[2 * MEM_NCAT] = (double)s.cur_total;
    v[2 * MEM_NCAT + 1] = (double)s.peak_total;
    v[2 * MEM_NCAT + 2] = (double)mem_model_state_bytes(&s);
    comm_metric_max(v, NROW);

    print0("\nmemory per rank (max over %d rank%s)\n", rt.world, rt.world > 1 ? "s" : "");
    print0("  %-14s %12s %12s\n", "category", "current MiB", "peak MiB");
    for (int c = 0; c < MEM_NCAT; c++)
        print0("  %-14s %12.3f %12.3f\n", cat_names[c], v[2 * c] / MIB, v[2 * c + 1] / MIB);
    print0("  %-14s %12.3f %12.3f\n", "total", v[2 * MEM_NCAT] / MIB,
           v[2 * MEM_NCAT + 1] / MIB);
    print0("  model state: formula %s = %.0f bytes, measured %.0f bytes%s\n", formula,
           formula_bytes, v[2 * MEM_NCAT + 2],
           formula_bytes == v[2 * MEM_NCAT + 2] ? " (equal)" : " (DIFFERENT)");
    int n = 0;
    for (int c = MEM_PARAMS; c <= MEM_ADAM_V; c++)
        n += snprintf(summary_fields + n, sizeof summary_fields - (size_t)n, " mem_%s=%.0f", cat_names[c],
                      v[2 * c]);
    *peak = (size_t)v[2 * MEM_NCAT + 1];
    return (size_t)v[2 * MEM_NCAT + 2];
}
