// mem: the tracked allocator. Every buffer a stage owns comes from here with a
// category, so the memory report is measured, not estimated. Thread-safe.
#ifndef MEM_H
#define MEM_H

#include <stddef.h>

// The categories the memory report prints, one per kind of buffer a stage
// owns; workspace: fp32 copies of 16-bit values that live for a moment (lc5's,
// and the CPU kernels' widened panels), not activations.
typedef enum {
    MEM_PARAMS, MEM_GRADS, MEM_MASTER_PARAMS, MEM_ADAM_M, MEM_ADAM_V,
    MEM_ACTIVATIONS, MEM_COMM_BUFFERS, MEM_DATA, MEM_WORKSPACE, MEM_NCAT
} MemCat;

typedef struct {
    size_t cur[MEM_NCAT], peak[MEM_NCAT];   // per category, host and GPU together
    size_t cur_total, peak_total;           // all categories together
    size_t gpu_cur, gpu_peak;               // the part on the GPU (--device cuda)
    size_t kept;                            // freed, poisoned and not yet given back (grading)
} MemStats;

// Tunes the C allocator to keep freed memory for reuse (rt_init calls it).
// In grading mode (ZC_GRADING set in the environment) host blocks are fenced
// and freed ones poisoned: see mem_set_poison.
void mem_init(void);
// on: each host block allocated from then on ends on a page's last byte, before
// a page nothing may touch (its start aligned to the largest power of two up
// to 64 dividing its size; a size that does not divide by 4: aligned to 4,
// ending up to 3 bytes before the page's end); mem_free makes its pages
// inaccessible and keeps it out of reuse (its bytes leave the counters all the
// same) until sixteen times the most this process held at once, at least 64
// MiB, has been freed after it (workspace, the kernels' panels, goes back for
// reuse at once). A read or write past a block's end, or of a kept block,
// faults where it happens, and the fault names the buffer (its category and
// size), what was done and in which functions; a second mem_free of a kept
// block says so.
void mem_set_poison(int on);
// What the stage does now ("forward" and layer 2; layer -1: no layer), named by
// a fault's line (comm_phase passes it on). name must outlive the call.
void mem_phase(const char *name, int layer);
// Allocates bytes (zeroed, 64-byte aligned; fenced in grading mode, above)
// under a category; fatal on failure.
// It lives where the stage computes (the GPU with --device cuda), except the
// data category: input batches stay on the host, where the data loader writes.
void *mem_alloc(MemCat cat, size_t bytes);
// The same, not zeroed: scratch that is always written before it is read.
void *mem_alloc_scratch(MemCat cat, size_t bytes);
// Host memory whatever the device, not zeroed (files, MPI's side of a copy).
void *mem_alloc_host(MemCat cat, size_t bytes);
// GPU memory on a CUDA run, not zeroed (the kernels' copy of a host batch).
void *mem_alloc_gpu(MemCat cat, size_t bytes);
// Host memory the GPU copies at full speed (page-locked on a CUDA run), not zeroed.
void *mem_alloc_pinned(MemCat cat, size_t bytes);
// Frees a pointer from mem_alloc (NULL is ignored); fatal on an unknown pointer.
void mem_free(void *p);
// dst = src, bytes long, each on the host or the GPU; returns when done.
void mem_copy(void *dst, const void *src, size_t bytes);
// 1 if p points into GPU memory.
int mem_is_gpu(const void *p);
// Bytes currently held by the allocation p (0 for NULL).
size_t mem_size(const void *p);
// 1 if [p, p + bytes) lies inside a block that was freed while poisoning was on.
int mem_was_freed(const void *p, size_t bytes);
// How many blocks have been freed and kept (poisoning) so far; and 1 if
// [p, p + bytes) lies in one of those freed after the since-th (what a
// collective's buffers could have met between its launch and its wait:
// the scan ends there, however many are kept).
size_t mem_frees(void);
int mem_freed_since(const void *p, size_t bytes, size_t since);
// A copy of this rank's counters.
MemStats mem_stats(void);
// Peaks restart from the current values (e.g. after set-up).
void mem_reset_peaks(void);
// Bytes of host memory this node can give now: MemAvailable, or less where a
// control group (a container, a batch job) sets a lower limit; -1 if unknown.
// ZC_HOST_MEM_MB says another amount, for tests (then single blocks are not
// checked against it, only the set-up's total: rt_check_memory).
double mem_host_available(void);
// on: a host block larger than mem_host_available is refused (exit 2, with the
// numbers) when it is asked for; rt_check_memory turns it on after a stage's
// set-up, grading mode (poisoning) has it from the start.
void mem_check_blocks(int on);
// Category name as printed in reports ("params", "adam_m", ...).
const char *mem_cat_name(MemCat cat);
// Sum of the model-state categories now held (params, grads, master, m, v).
size_t mem_model_state_bytes(const MemStats *s);
// Number of live allocations (tests use it to find leaks).
size_t mem_live_count(void);
// The whole process's resident memory as the OS counts it: the tracked bytes
// plus everything else (code, libraries, MPI, BLAS, libc). From /proc/self/status;
// zeros where it cannot be read.
typedef struct {
    size_t rss, peak;              // VmRSS, and its peak VmHWM
    size_t anon, file, shmem;      // RSS split: heaps, mapped files, shared memory
} ProcessMem;
ProcessMem mem_process(void);

#endif
