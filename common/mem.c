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

#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

// PLACE_MAPPED: a large zeroed host block taken straight from the kernel: its
// pages are zero already and are not touched until the stage writes them, so
// a run whose model does not fit is refused (rt_check_memory) before it pages.
// MAP_NORESERVE: the kernel's overcommit heuristic would refuse a block larger
// than RAM + swap at mmap, where we could only say which buffer failed; left to
// rt_check_memory, the refusal names the whole model's bytes against the node's.
// PLACE_FENCED: with poison (grading), every host block lies at the end of a
// mapping of its own, its last byte a page's last, and the page after it (the
// fence) cannot be touched: a loop that reads or writes past its buffer's end
// faults at that element, and the fault handler (below) names the buffer. The
// block starts aligned to the largest power of two, up to 64, that divides its
// size, so that its end can lie on the page's (a size that does not divide by
// 4: see fenced_len).
// map: the mapping's pages before the fence (a reused one may hold more than
// the block needs; the pages before the block's own are out of reach too);
// rw: the bytes before the fence that can be touched (a live block's, at
// least; a freed one's are none, except workspace's: see mem_free).
typedef enum { PLACE_HOST, PLACE_MAPPED, PLACE_PINNED, PLACE_GPU, PLACE_FENCED } Place;
#define MAPPED_FROM ((size_t)32 << 20)
typedef struct { void *p; size_t bytes; MemCat cat; Place place; size_t map, rw, freed_as; } Block;

static Block *blocks;          // live allocations, unordered
static size_t nblocks, capblocks;
static int poison;             // mem_set_poison: freed host blocks are filled with NaN and kept a while
static Block *freed;           // with poison: the blocks kept, oldest first from freed[first_freed]
static size_t nfreed, capfreed, first_freed;
static size_t nfrees;          // with poison: the blocks kept so far (each one's freed_as: its number)
static Block *pool;            // with poison: released fenced mappings (p: the fence), oldest first
static size_t npool, cappool, pool_bytes;
static size_t page;            // the system's page size
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

static void table_add(void *p, size_t bytes, MemCat cat, Place place, size_t map, size_t rw) {
    table_push(&blocks, &nblocks, &capblocks, (Block){ p, bytes, cat, place, map, rw, 0 });
}

// The freed block holding [p, p + bytes) among those kept after the since-th,
// or NULL (poisoning keeps them a while). Newest first: it stops at the since-th.
static const Block *freed_block_since(const void *p, size_t bytes, size_t since) {
    const char *c = p;
    for (size_t i = nfreed; i-- > first_freed && freed[i].freed_as > since;)
        if (c >= (const char *)freed[i].p && c + bytes <= (const char *)freed[i].p + freed[i].bytes) return &freed[i];
    return NULL;
}

static const Block *freed_block(const void *p, size_t bytes) { return freed_block_since(p, bytes, 0); }

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

static void install_fault_handler(void);

void mem_set_poison(int on) {
    pthread_mutex_lock(&lock);
    poison = on;
    if (!page) page = (size_t)sysconf(_SC_PAGESIZE);
    pthread_mutex_unlock(&lock);
    if (on) install_fault_handler();
}

// The stage's buffers live where it computes; its input batches stay on the
// host, where the data loader writes them.
static Place place_for(MemCat cat) {
    return rt.device == DEV_CUDA && cat != MEM_DATA ? PLACE_GPU : PLACE_HOST;
}

// ----------------------------------------------------------------------------
// fenced blocks (grading)

// The whole pages a fenced block of `bytes` needs before its fence.
static size_t fenced_span(size_t bytes) { return bytes ? (bytes + page - 1) / page * page : page; }
// Where a fenced block of `bytes` starts before its fence: right before it
// for a size that divides by 4; else rounded up to 4 (a float or an int
// stored past a byte tail, as in a buffer of n floats and 1, stays aligned),
// leaving at most 3 bytes between the block's end and the fence. (Not to 8:
// a loop one float past an odd count of floats would end in the gap, unseen;
// a buffer that holds doubles has a size that divides by 8.)
static size_t fenced_len(size_t bytes) { return bytes % 4 == 0 || bytes < 4 ? bytes : (bytes + 3) / 4 * 4; }

// A fenced block's fence.
static char *fence_of(const Block *b) { return (char *)b->p + fenced_len(b->bytes); }

// Most the pool keeps: each mapping is two of the kernel's areas, of which a
// process may hold about 65 000 (vm.max_map_count); and the lookup scans it.
#define POOL_MAX 1024

// The oldest pooled mapping back to the kernel. Under the lock.
static void pool_evict(void) {
    Block old = pool[0];
    memmove(pool, pool + 1, --npool * sizeof *pool);
    pool_bytes -= old.map + page;
    if (munmap((char *)old.p - old.map, old.map + page) != 0) fatal("mem: munmap of a fenced block failed");
}

// A block of bytes whose last byte is the last before a fence, its mapping's
// pages (*map) and how many of them can be touched (*rw): from the pool (the smallest mapping that holds it,
// up to twice its pages: a step's buffers come back in the sizes they went,
// their pages faulted in already) or fresh from the kernel. Under the lock.
static void *fenced_alloc(size_t bytes, int zero, size_t *map, size_t *rw) {
    size_t need = fenced_span(bytes), best = npool;
    for (size_t i = 0; i < npool; i++)
        if (pool[i].map >= need && pool[i].map <= 2 * need && (best == npool || pool[i].map < pool[best].map)) best = i;
    if (best < npool) {
        char *fence = pool[best].p;
        *map = pool[best].map;
        *rw = pool[best].rw;
        pool_bytes -= *map + page;
        memmove(pool + best, pool + best + 1, (--npool - best) * sizeof *pool);
        if (*rw < need) {
            if (mprotect(fence - need, need, PROT_READ | PROT_WRITE) != 0) fatal("mem: mprotect of a fenced block failed");
            *rw = need;
        }
        if (zero) memset(fence - fenced_len(bytes), 0, bytes);
        return fence - fenced_len(bytes);
    }
    char *base = mmap(NULL, need + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) return NULL;
    if (mprotect(base + need, page, PROT_NONE) != 0) fatal("mem: mprotect of a fence failed");
    *map = *rw = need;
    return base + need - fenced_len(bytes);  // zero: fresh pages are
}

// A freed fenced block's pages out of reach, while it is kept: a late reader faults.
static void fence_whole(Block *b) {
    if (mprotect(fence_of(b) - b->rw, b->rw, PROT_NONE) != 0) fatal("mem: mprotect of a freed block failed");
    b->rw = 0;
}

// A kept fenced block, released, to the pool, the oldest there going back to
// the kernel when the pool is over its count or its bytes (limit). Under the lock.
static void fenced_release(const Block *b, size_t limit) {
    table_push(&pool, &npool, &cappool, (Block){ fence_of(b), 0, b->cat, PLACE_FENCED, b->map, b->rw, 0 });
    pool_bytes += b->map + page;
    while (npool > 1 && (npool > POOL_MAX || pool_bytes > limit)) pool_evict();
}

// ----------------------------------------------------------------------------
// the fault handler (grading)

// One text's bytes onto fd 2 (inside a signal handler: write alone).
static void say(const char *s) {
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(2, s, n);
        if (w <= 0) return;
        s += w, n -= (size_t)w;
    }
}

// The program's functions, static ones too, from its own symbol table (read
// when the handler is installed: nothing is read inside it). Empty if the
// program was stripped: a fault's line then names no function.
typedef struct { uintptr_t lo, hi; const char *name; } FnSym;
static FnSym *fns;
static size_t nfns;
static void *exe_base;  // where the program itself is loaded (dladdr's dli_fbase of its own code)

// n bytes at offset off of fd into a new buffer (bookkeeping, not a stage's
// memory: the C allocator's), or NULL.
static void *read_at(int fd, size_t n, off_t off) {
    void *b = malloc(n ? n : 1);
    if (b && pread(fd, b, n, off) != (ssize_t)n) {
        free(b);
        b = NULL;
    }
    return b;
}

static void load_functions(void) {
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh = NULL;
    Elf64_Sym *sym = NULL;
    char *str = NULL;
    Dl_info self;
    if (dladdr((void *)load_functions, &self)) exe_base = self.dli_fbase;
    if (exe_base && pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_shentsize == sizeof *sh &&
        (sh = read_at(fd, (size_t)eh.e_shnum * sizeof *sh, (off_t)eh.e_shoff))) {
        uintptr_t bias = eh.e_type == ET_DYN ? (uintptr_t)exe_base : 0;  // where a position-independent program lies
        for (int i = 0; i < eh.e_shnum && !fns; i++) {
            if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh.e_shnum) continue;
            const Elf64_Shdr *ss = &sh[sh[i].sh_link];
            size_t n = sh[i].sh_size / sizeof *sym;
            if (!ss->sh_size || !(sym = read_at(fd, sh[i].sh_size, (off_t)sh[i].sh_offset)) ||
                !(str = read_at(fd, ss->sh_size, (off_t)ss->sh_offset)) || !(fns = malloc(n * sizeof *fns)))
                break;
            str[ss->sh_size - 1] = '\0';
            for (size_t k = 0; k < n; k++)
                if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_size && sym[k].st_name < ss->sh_size)
                    fns[nfns++] = (FnSym){ bias + sym[k].st_value, bias + sym[k].st_value + sym[k].st_size,
                                           str + sym[k].st_name };
        }
    }
    free(sh);
    free(sym);
    if (!fns) free(str);  // else the names stay, for the process's life
    close(fd);
}

// The name of the program's function holding pc, into buf without a
// compiler's suffix (".part.0", ".constprop.0", ".avx2"): 1; -1 if pc is in a
// library (BLAS, MPI, the C library: working for the program's function that
// called it); 0 if it is the program's and has no name.
static int function_at(void *pc, char *buf, size_t len) {
    const char *name = NULL;
    for (size_t i = 0; i < nfns && !name; i++)
        if ((uintptr_t)pc >= fns[i].lo && (uintptr_t)pc < fns[i].hi) name = fns[i].name;
    Dl_info d;
    if (!name && dladdr(pc, &d) && d.dli_fbase != exe_base) return -1;
    if (!name || name[0] == '_' || !name[0]) return 0;
    size_t n = strcspn(name, ".");
    if (n >= len) n = len - 1;
    memcpy(buf, name, n);
    buf[n] = '\0';
    return 1;
}

// What the stage does now (mem_phase): read by the fault handler, unlocked.
static const char *volatile phase_name;
static volatile int phase_layer = -1;

void mem_phase(const char *name, int layer) {
    phase_name = name;
    phase_layer = layer;
}

// Into buf: ", in f, from g, from h, during forward, layer 2": the functions
// the fault happened in, innermost first, the libraries' frames left out, and
// what the stage was doing. The list ends at the first frame no name is found
// for, rather than name a function that is not where the fault happened or
// who called it.
static void fault_trail(char *buf, size_t len) {
    void *frames[24];
    int n = backtrace(frames, 24), named = 0;
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 2; i < n && named < 4 && at < len; i++) {  // 0 and 1: the handler and the signal's return
        char name[80];
        Dl_info d;
        if (i == 2 && !dladdr(frames[i], &d)) {  // in no program or library: code made as it ran
            at += (size_t)snprintf(buf, len, ", in code made at run time (oneDNN's matrix products)");
            break;  // which the unwinder cannot see past
        }
        int found = function_at(frames[i], name, sizeof name);
        if (found < 0) continue;
        if (!found || strcmp(name, "main") == 0) break;
        at += (size_t)snprintf(buf + at, len - at, "%s %s", named++ ? ", from" : ", in", name);
    }
    const char *ph = phase_name;
    int layer = phase_layer;
    if (ph && ph[0] && at < len)
        snprintf(buf + at, len - at, layer >= 0 ? ", during %s, layer %d" : ", during %s", ph, layer);
}

// What the address a fault touched is, as a sentence into buf; 0 if it is none of mem's.
static int fault_cause(const char *a, int wrote, char *buf, size_t len) {
    const char *verb = wrote < 0 ? "an access" : wrote ? "a write" : "a read";
    for (size_t i = 0; i < nblocks; i++) {
        const Block *b = &blocks[i];
        const char *fence = fence_of(b), *end = (const char *)b->p + b->bytes;
        if (b->place != PLACE_FENCED || a < fence - b->map || a >= fence + page) continue;
        if (a >= fence)
            snprintf(buf, len, "mem: %s past the end of a buffer of %s (%zu bytes, %zu floats): byte %zu after its "
                     "last one (a loop one element too far, or a length too long?)", verb, cat_names[b->cat],
                     b->bytes, b->bytes / 4, (size_t)(a - end) + 1);
        else if (a < (const char *)b->p)
            snprintf(buf, len, "mem: %s before the start of a buffer of %s (%zu bytes): byte %zu before its first "
                     "one (an index or an offset below 0?)", verb, cat_names[b->cat], b->bytes,
                     (size_t)((const char *)b->p - a));
        else continue;  // inside the block: not a fence's fault
        return 1;
    }
    for (size_t i = nfreed; i-- > first_freed;) {
        const Block *b = &freed[i];
        if (a >= (const char *)b->p && a < (const char *)b->p + b->bytes) {
            snprintf(buf, len, "mem: %s of a buffer of %s (%zu bytes) after its mem_free, at byte %zu: a pointer "
                     "used after the free (the buffer freed too early, or a pointer to it kept)", verb,
                     cat_names[b->cat], b->bytes, (size_t)(a - (const char *)b->p));
            return 1;
        }
    }
    for (size_t i = 0; i < npool; i++) {
        const char *fence = pool[i].p;
        if (a >= fence - pool[i].map && a < fence + page) {
            snprintf(buf, len, "mem: %s of memory freed long before (a buffer of %s): a pointer used after its "
                     "mem_free", verb, cat_names[pool[i].cat]);
            return 1;
        }
    }
    return 0;
}

// A fault on a fence or a freed block: one line naming the buffer, what the
// access was and where, then the fault again under the default action, so the
// process dies of it as it would have. The tables are read without the lock
// (the faulting thread may hold it); the process ends here.
static void on_fault(int sig, siginfo_t *si, void *ctx) {
    int wrote = -1;
#if defined(__x86_64__) && defined(REG_ERR)
    wrote = (((ucontext_t *)ctx)->uc_mcontext.gregs[REG_ERR] & 2) != 0;  // the page fault's error code: bit 1, a write
#else
    (void)ctx;
#endif
    char cause[400], trail[400], line[900];
    if (fault_cause(si->si_addr, wrote, cause, sizeof cause)) {
        fault_trail(trail, sizeof trail);
        snprintf(line, sizeof line, "rank %d: %s%s\n", rt.rank, cause, trail);
        say(line);
    }
    signal(sig, SIG_DFL);
}

static void install_fault_handler(void) {
    static int installed;
    if (installed) return;
    installed = 1;
    void *warm[1];
    (void)backtrace(warm, 1);  // loads the unwinder now: never for the first time inside the handler
    load_functions();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0) fatal("mem: cannot install the fault handler");
}

// ----------------------------------------------------------------------------
// the allocators

// The block itself, from the allocator of its place. Pinned memory needs a CUDA
// run; elsewhere it is plain host memory, and *place says so. A fenced block's
// mapping's pages go to *map, those it can touch to *rw (under the lock: the pool).
static void *raw_alloc(Place *place, size_t bytes, int zero, size_t *map, size_t *rw) {
#ifdef ZC_CUDA
    if (*place == PLACE_GPU) return gpu_alloc(bytes, zero);
    if (*place == PLACE_PINNED && rt.device == DEV_CUDA) return gpu_alloc_pinned(bytes);
#endif
    if (*place == PLACE_FENCED) {
        pthread_mutex_lock(&lock);
        void *p = fenced_alloc(bytes, zero, map, rw);
        pthread_mutex_unlock(&lock);
        return p;
    }
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

// Gives block b back (taken: what it took from its allocator).
static void raw_free(const Block *b, size_t taken) {
#ifdef ZC_CUDA
    if (b->place == PLACE_GPU) { gpu_free(b->p); return; }
    if (b->place == PLACE_PINNED) { gpu_free_pinned(b->p); return; }
#endif
    if (b->place == PLACE_MAPPED) {
        if (munmap(b->p, taken) != 0) fatal("mem: munmap of %zu bytes failed", taken);
        return;
    }
    if (b->place == PLACE_FENCED) {
        if (munmap(fence_of(b) - b->map, taken) != 0) fatal("mem: munmap of a fenced block failed");
        return;
    }
    free(b->p);
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

// What a block of `bytes` takes from its allocator: whole 64-byte lines.
static size_t block_bytes(size_t bytes) {
    size_t rounded = (bytes + 63) & ~(size_t)63;
    return rounded ? rounded : 64;
}

// What block b took: a fenced one, its mapping and its fence.
static size_t block_taken(const Block *b) { return b->place == PLACE_FENCED ? b->map + page : block_bytes(b->bytes); }

static void *allocate(MemCat cat, size_t bytes, int zero, Place place) {
    if ((unsigned)cat >= MEM_NCAT) fatal("mem_alloc: bad category %d", (int)cat);
    size_t rounded = (bytes + 63) & ~(size_t)63;
    if (rounded < bytes) fatal("mem_alloc: %zu bytes overflows", bytes);
    refuse_beyond_available(cat, rounded, place);
    // Fenced: a host block in grading mode (pinned memory asked of a CUDA run is the GPU's).
    if (poison && place != PLACE_GPU && !(place == PLACE_PINNED && rt.device == DEV_CUDA)) place = PLACE_FENCED;
    size_t map = 0, rw = 0;
    void *p = raw_alloc(&place, place == PLACE_FENCED ? bytes : block_bytes(bytes), zero, &map, &rw);
    if (!p)  // too large a model for this machine: bad input, though one rank sees it
        fatal_input("cannot allocate %s of %s in %s memory (%s held already): the model does not fit; use more "
                    "ranks, a later stage or a smaller model", human_bytes((double)bytes), cat_names[cat],
                    place == PLACE_GPU ? "GPU" : "host", human_bytes((double)st.cur_total));
    pthread_mutex_lock(&lock);
    table_add(p, bytes, cat, place, map, rw);
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

// The quarantine's bytes now (and the pool's bound). Under the lock.
static size_t quarantine_limit(void) { return 16 * most_live > QUARANTINE_MIN ? 16 * most_live : QUARANTINE_MIN; }

// So many blocks kept at most, whatever their bytes (a fenced one is two of
// the kernel's areas: POOL_MAX says why that is bounded).
#define KEPT_MAX 16384

static void quarantine(Block b) {
    pthread_mutex_lock(&lock);
    b.freed_as = ++nfrees;
    table_push(&freed, &nfreed, &capfreed, b);
    st.kept += block_taken(&b);
    size_t limit = quarantine_limit();
    while ((st.kept > limit || nfreed - first_freed > KEPT_MAX) && nfreed - first_freed > 1) {  // the newest stays
        Block old = freed[first_freed++];
        st.kept -= block_taken(&old);
        if (old.place == PLACE_FENCED) fenced_release(&old, limit);
        else raw_free(&old, block_taken(&old));
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
    size_t bytes = blocks[i].bytes, taken = block_taken(&blocks[i]);
    MemCat cat = blocks[i].cat;
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
    // Kept: a late reader of a fenced block faults; of another, it reads NaN in
    // every float. Workspace (the kernels' panels, allocated and freed in every
    // matrix product of 16-bit values: half of a graded lecture 5 run's blocks)
    // goes back to the pool at once, its pages as they are: kept, each cost two
    // changes of its mapping's protection and, the pool empty of its size,
    // fresh pages (a third more time for that run).
    if (keep && place == PLACE_FENCED && cat == MEM_WORKSPACE) {
        pthread_mutex_lock(&lock);
        fenced_release(&b, quarantine_limit());
        pthread_mutex_unlock(&lock);
        return;
    }
    if (keep) {
        if (place != PLACE_FENCED) memset(p, 0xff, bytes);
        else fence_whole(&b);
        quarantine(b);
        return;
    }
    raw_free(&b, taken);
}

int mem_was_freed(const void *p, size_t bytes) { return mem_freed_since(p, bytes, 0); }

size_t mem_frees(void) {
    pthread_mutex_lock(&lock);
    size_t n = nfrees;
    pthread_mutex_unlock(&lock);
    return n;
}

int mem_freed_since(const void *p, size_t bytes, size_t since) {
    pthread_mutex_lock(&lock);
    int was = freed_block_since(p, bytes, since) != NULL;
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
