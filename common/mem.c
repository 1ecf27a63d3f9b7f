// mem: a table of live allocations with per-category current and peak bytes.
// The table (not a header before each block) also works for device pointers.
// One lock guards it: the comm thread allocates scratch for hand-written
// collectives while the main thread allocates for the stage.
#include "mem.h"
#include "base.h"
#include "env.h"
#include "print.h"
#ifdef ZC_CUDA
#include "gpu.h"
#endif

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

// PLACE_MAPPED: a large zeroed host block taken straight from the kernel: its
// pages are zero already and are not touched until the stage writes them, so
// a run whose model does not fit is refused (rt_check_memory) before it pages.
// MAP_NORESERVE: the kernel's overcommit heuristic would refuse a block larger
// than RAM + swap at mmap, where we could only say which buffer failed; left to
// rt_check_memory, the refusal names the whole model's bytes against the node's.
typedef enum { PLACE_HOST, PLACE_MAPPED, PLACE_PINNED, PLACE_GPU } Place;
#define MAPPED_FROM ((size_t)32 << 20)
typedef struct { void *p; size_t bytes; MemCat cat; Place place; int guarded; } Block;
// With poison (grading), every host block is followed by GUARD bytes of a
// pattern that nothing may write; mem_free checks them, so a loop that runs
// past its buffer's end is named, not left to corrupt the next one.
#define GUARD 64
#define GUARD_BYTE 0xa5

static Block *blocks;          // live allocations, unordered
static size_t nblocks, capblocks;
static int poison;             // mem_set_poison: freed host blocks are filled with NaN and kept a while
static Block *freed;           // with poison: the blocks kept, oldest first from freed[first_freed]
static size_t nfreed, capfreed, first_freed;
static size_t most_live;       // the most this process ever held at once (never reset)
static MemStats st;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *cat_names[MEM_NCAT] = {
    "params", "grads", "master_params", "adam_m", "adam_v",
    "activations", "comm_buffers", "data", "workspace"
};

const char *mem_cat_name(MemCat cat) { return cat_names[cat]; }

// ----------------------------------------------------------------------------
// the table

// Appends b to a table (the live one or the freed one), growing it.
static void table_push(Block **t, size_t *n, size_t *cap, Block b) {
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        Block *grown = realloc(*t, c * sizeof *grown);  // the tables themselves are bookkeeping
        if (!grown) fatal("mem: cannot grow the allocation table to %zu entries", c);
        *t = grown;
        *cap = c;
    }
    (*t)[(*n)++] = b;
}

static void table_add(void *p, size_t bytes, MemCat cat, Place place, int guarded) {
    table_push(&blocks, &nblocks, &capblocks, (Block){ p, bytes, cat, place, guarded });
}

// The freed block holding [p, p + bytes), or NULL (poisoning keeps them a while).
static const Block *freed_block(const void *p, size_t bytes) {
    const char *c = p;
    for (size_t i = nfreed; i-- > first_freed;)
        if (c >= (const char *)freed[i].p && c + bytes <= (const char *)freed[i].p + freed[i].bytes) return &freed[i];
    return NULL;
}

static size_t table_find(const void *p) {
    // Newest first: buffers are mostly freed in reverse order of allocation.
    for (size_t i = nblocks; i-- > 0;)
        if (blocks[i].p == p) return i;
    const Block *f = freed_block(p, 0);
    if (f && f->p == p)
        fatal("mem: a buffer of %s (%s) is freed a second time: a pointer was kept after its mem_free",
              cat_names[f->cat], human_bytes((double)f->bytes));
    fatal("mem: pointer %p was not allocated by mem_alloc", p);
}

static void count(MemCat cat, Place place, size_t bytes, int sign) {
    int gpu = place == PLACE_GPU;
    if (sign > 0) {
        st.cur[cat] += bytes;
        st.cur_total += bytes;
        if (gpu) st.gpu_cur += bytes;
        if (st.cur[cat] > st.peak[cat]) st.peak[cat] = st.cur[cat];
        if (st.cur_total > st.peak_total) st.peak_total = st.cur_total;
        if (st.cur_total > most_live) most_live = st.cur_total;
        if (st.gpu_cur > st.gpu_peak) st.gpu_peak = st.gpu_cur;
    } else {
        st.cur[cat] -= bytes;
        st.cur_total -= bytes;
        if (gpu) st.gpu_cur -= bytes;
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
    mem_set_poison(getenv("ZC_GRADING") != NULL);
}

void mem_set_poison(int on) {
    pthread_mutex_lock(&lock);
    poison = on;
    pthread_mutex_unlock(&lock);
}

// The stage's buffers live where it computes; its input batches stay on the
// host, where the data loader writes them.
static Place place_for(MemCat cat) {
    return rt.device == DEV_CUDA && cat != MEM_DATA ? PLACE_GPU : PLACE_HOST;
}

// The block itself, from the allocator of its place. Pinned memory needs a CUDA
// run; elsewhere it is plain host memory, and *place says so.
static void *raw_alloc(Place *place, size_t bytes, int zero) {
#ifdef ZC_CUDA
    if (*place == PLACE_GPU) return gpu_alloc(bytes, zero);
    if (*place == PLACE_PINNED && rt.device == DEV_CUDA) return gpu_alloc_pinned(bytes);
#endif
    if (zero && bytes >= MAPPED_FROM) {
        *place = PLACE_MAPPED;
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        return p == MAP_FAILED ? NULL : p;
    }
    *place = PLACE_HOST;
    void *p = aligned_alloc(64, bytes);
    if (p && zero) memset(p, 0, bytes);
    return p;
}

static void raw_free(void *p, Place place, size_t bytes) {
#ifdef ZC_CUDA
    if (place == PLACE_GPU) { gpu_free(p); return; }
    if (place == PLACE_PINNED) { gpu_free_pinned(p); return; }
#endif
    if (place == PLACE_MAPPED) {
        if (munmap(p, bytes) != 0) fatal("mem: munmap of %zu bytes failed", bytes);
        return;
    }
    free(p);
}

// ----------------------------------------------------------------------------
// what the node can give

// A number from the first line of a file that starts with key (key "" for a
// file that holds just the number); -1 if none.
static double read_number(const char *path, const char *key) {
    FILE *f = fopen(path, "r");
    char line[256];
    double v = -1;
    while (f && v < 0 && fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0) {
            char *end;
            double x = strtod(line + strlen(key), &end);
            if (end != line + strlen(key)) v = x;
        }
    if (f) fclose(f);
    return v;
}

double mem_host_available(void) {
    double mb = env_number("ZC_HOST_MEM_MB", 0);
    if (mb > 0) return mb * 1048576.0;
    double avail = read_number("/proc/meminfo", "MemAvailable:") * 1024.0;
    const char *limits[][2] = { { "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current" },
                                { "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                  "/sys/fs/cgroup/memory/memory.usage_in_bytes" } };
    for (int i = 0; i < 2; i++) {
        double limit = read_number(limits[i][0], ""), used = read_number(limits[i][1], "");
        if (limit > 0 && used >= 0 && (avail < 0 || limit - used < avail)) avail = limit - used;
    }
    return avail;
}

// A host block larger than the node has available is refused at once, with
// the numbers: the system would grant it (overcommit) and the OOM killer end
// the run when it is written, without a word of memory. Small blocks are not
// worth reading /proc for. During a stage's set-up, rt_check_memory says it
// once for every rank instead; poisoning (grading) writes every freed block,
// so it checks from the start.
#define CHECKED_FROM ((size_t)64 << 20)
static int check_blocks;

void mem_check_blocks(int on) { check_blocks = on; }

static void refuse_beyond_available(MemCat cat, size_t bytes, Place place) {
    if (!(check_blocks || poison) || bytes < CHECKED_FROM || place == PLACE_GPU || getenv("ZC_HOST_MEM_MB")) return;
    double have = mem_host_available();
    if (have >= 0 && (double)bytes > have)
        fatal_input("cannot allocate %s of %s in host memory: this node has %s available (%s held already by this "
                    "rank); use more ranks, a later stage or a smaller model", human_bytes((double)bytes),
                    cat_names[cat], human_bytes(have), human_bytes((double)st.cur_total));
}

// ----------------------------------------------------------------------------
// allocating

// What a block of `bytes` takes from its allocator: whole 64-byte lines, and
// the guard after them.
static size_t block_bytes(size_t bytes, int guarded) {
    size_t rounded = (bytes + 63) & ~(size_t)63;
    return (rounded ? rounded : 64) + (guarded ? GUARD : 0);
}

// The first byte after block b's end that was written (1-based), or 0.
static size_t guard_broken(const Block *b) {
    const unsigned char *end = (const unsigned char *)b->p + b->bytes;
    size_t n = block_bytes(b->bytes, 1) - b->bytes;
    for (size_t i = 0; i < n; i++)
        if (end[i] != GUARD_BYTE) return i + 1;
    return 0;
}

static void *allocate(MemCat cat, size_t bytes, int zero, Place place) {
    if ((unsigned)cat >= MEM_NCAT) fatal("mem_alloc: bad category %d", (int)cat);
    size_t rounded = (bytes + 63) & ~(size_t)63;
    if (rounded < bytes) fatal("mem_alloc: %zu bytes overflows", bytes);
    refuse_beyond_available(cat, rounded, place);
    int guarded = poison && place != PLACE_GPU;
    void *p = raw_alloc(&place, block_bytes(bytes, guarded), zero);
    if (!p)  // too large a model for this machine: bad input, though one rank sees it
        fatal_input("cannot allocate %s of %s in %s memory (%s held already): the model does not fit; use more "
                    "ranks, a later stage or a smaller model", human_bytes((double)bytes), cat_names[cat],
                    place == PLACE_GPU ? "GPU" : "host", human_bytes((double)st.cur_total));
    guarded = guarded && place != PLACE_GPU;  // pinned memory asked of a CUDA run is the GPU's to guard
    if (guarded) memset((char *)p + bytes, GUARD_BYTE, block_bytes(bytes, 1) - bytes);
    pthread_mutex_lock(&lock);
    table_add(p, bytes, cat, place, guarded);
    count(cat, place, bytes, +1);
    pthread_mutex_unlock(&lock);
    return p;
}

void *mem_alloc(MemCat cat, size_t bytes) { return allocate(cat, bytes, 1, place_for(cat)); }
void *mem_alloc_scratch(MemCat cat, size_t bytes) { return allocate(cat, bytes, 0, place_for(cat)); }
void *mem_alloc_host(MemCat cat, size_t bytes) { return allocate(cat, bytes, 0, PLACE_HOST); }
void *mem_alloc_pinned(MemCat cat, size_t bytes) { return allocate(cat, bytes, 0, PLACE_PINNED); }
void *mem_alloc_gpu(MemCat cat, size_t bytes) {
    if (rt.device != DEV_CUDA) fatal("mem_alloc_gpu: the device is not cuda");
    return allocate(cat, bytes, 0, PLACE_GPU);
}

// With poison, a freed block is kept out of use while the blocks freed after it
// add up to less than the quarantine: the most this process ever held at once,
// sixteen times over (several steps of everything a step frees, since a step
// frees its activations and gathered layers once or twice), and never less
// than 64 MiB. Kept for good, every block would be fresh memory from the
// kernel: 600 steps of a graded run faulted in 1.8 GB a rank, and half of a
// 4-rank check's processor time went to its page faults.
#define QUARANTINE_MIN ((size_t)64 << 20)

static void quarantine(Block b) {
    pthread_mutex_lock(&lock);
    table_push(&freed, &nfreed, &capfreed, b);
    st.kept += block_bytes(b.bytes, b.guarded);
    size_t limit = 16 * most_live > QUARANTINE_MIN ? 16 * most_live : QUARANTINE_MIN;
    while (st.kept > limit && nfreed - first_freed > 1) {  // the newest stays until the next free
        Block old = freed[first_freed++];
        size_t taken = block_bytes(old.bytes, old.guarded);
        st.kept -= taken;
        raw_free(old.p, old.place, taken);
    }
    if (first_freed > nfreed / 2) {  // the released half of the table, reused
        memmove(freed, freed + first_freed, (nfreed - first_freed) * sizeof *freed);
        nfreed -= first_freed;
        first_freed = 0;
    }
    pthread_mutex_unlock(&lock);
}

void mem_free(void *p) {
    if (!p) return;
    pthread_mutex_lock(&lock);
    size_t i = table_find(p);
    Place place = blocks[i].place;
    size_t bytes = blocks[i].bytes, taken = block_bytes(bytes, blocks[i].guarded);
    size_t broken = blocks[i].guarded ? guard_broken(&blocks[i]) : 0;
    MemCat cat = blocks[i].cat;
    if (broken) {
        pthread_mutex_unlock(&lock);
        fatal("mem: something wrote past the end of a buffer of %s (%s, %zu bytes): byte %zu after its end changed "
              "(a loop that runs past its last element?)", cat_names[cat], human_bytes((double)bytes), bytes, broken);
    }
    count(cat, place, bytes, -1);
    int keep = poison && place != PLACE_GPU;
    Block b = blocks[i];
    blocks[i] = blocks[--nblocks];
    if (nblocks == 0) {  // nothing live: give the table back too
        free(blocks);
        blocks = NULL;
        capblocks = 0;
    }
    pthread_mutex_unlock(&lock);
    if (keep) {  // NaN in every float: a late reader sees NaN
        memset(p, 0xff, bytes);
        quarantine(b);
        return;
    }
    raw_free(p, place, taken);
}

int mem_was_freed(const void *p, size_t bytes) {
    pthread_mutex_lock(&lock);
    int was = freed_block(p, bytes) != NULL;
    pthread_mutex_unlock(&lock);
    return was;
}

void mem_copy(void *dst, const void *src, size_t bytes) {
#ifdef ZC_CUDA
    if (rt.device == DEV_CUDA) { gpu_copy(dst, src, bytes); return; }
#endif
    if (bytes) memmove(dst, src, bytes);
}

int mem_is_gpu(const void *p) {
#ifdef ZC_CUDA
    if (rt.device == DEV_CUDA) return gpu_is_device(p);
#endif
    (void)p;
    return 0;
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
    st.gpu_peak = st.gpu_cur;
    pthread_mutex_unlock(&lock);
}

size_t mem_model_state_bytes(const MemStats *s) {
    return s->cur[MEM_PARAMS] + s->cur[MEM_GRADS] + s->cur[MEM_MASTER_PARAMS] +
           s->cur[MEM_ADAM_M] + s->cur[MEM_ADAM_V];
}

// ----------------------------------------------------------------------------
// the process as the OS sees it

ProcessMem mem_process(void) {
    ProcessMem m = { 0 };
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return m;
    char line[256];
    unsigned long kib;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "VmRSS: %lu kB", &kib) == 1) m.rss = (size_t)kib << 10;
        else if (sscanf(line, "VmHWM: %lu kB", &kib) == 1) m.peak = (size_t)kib << 10;
        else if (sscanf(line, "RssAnon: %lu kB", &kib) == 1) m.anon = (size_t)kib << 10;
        else if (sscanf(line, "RssFile: %lu kB", &kib) == 1) m.file = (size_t)kib << 10;
        else if (sscanf(line, "RssShmem: %lu kB", &kib) == 1) m.shmem = (size_t)kib << 10;
    }
    fclose(f);
    return m;
}
