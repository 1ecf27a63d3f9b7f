// gpu: device choice, streams, memory and copies through the CUDA runtime API.
// Plain C: the kernels themselves live in kernels_cuda.cu.
#include "gpu.h"
#include "env.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    int id, count, open;
    cudaStream_t compute, comm;
    char describe[320];
} g;
static _Thread_local int bound;  // this thread has called cudaSetDevice

// ----------------------------------------------------------------------------
// lifetime

// "CUDA 12.4" from CUDA's 12040.
static const char *cuda_version(int v, char *buf, size_t len) {
    snprintf(buf, len, "CUDA %d.%d", v / 1000, v % 1000 / 10);
    return buf;
}

// Free pool memory goes back to the driver at every synchronization while the
// pool's release threshold is 0 (the default), so a step that frees and
// allocates again pays the driver each time: keep it all. ZC_POOL_RELEASE=1
// leaves the default, to measure what it costs (make bench-gpu).
static const char *keep_pool_memory(void) {
    int pools = 0;
    CHECK_CUDA(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, g.id));
    if (!pools) return "--device cuda: this GPU or driver has no stream-ordered memory pools (cudaMallocAsync), "
                      "which the course allocates from";
    if (env_number("ZC_POOL_RELEASE", 0) == 1) return NULL;
    cudaMemPool_t pool;
    uint64_t keep = UINT64_MAX;
    CHECK_CUDA(cudaDeviceGetDefaultMemPool(&pool, g.id));
    CHECK_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    return NULL;
}

const char *gpu_open(int local_rank) {
    static char why[320];
    cudaError_t e = cudaGetDeviceCount(&g.count);
    if (e != cudaSuccess || g.count == 0) {
        // The versions tell a broken setup from a machine without a GPU: a
        // build for a newer CUDA than the driver supports fails the same way.
        int driver = 0, runtime = 0;
        char d[64], r[32];
        (void)cudaDriverGetVersion(&driver);
        (void)cudaRuntimeGetVersion(&runtime);
        (void)cudaGetLastError();
        if (driver > 0) snprintf(d, sizeof d, "the driver supports %s", cuda_version(driver, r, sizeof r));
        else snprintf(d, sizeof d, "no CUDA driver is installed");
        snprintf(why, sizeof why, "--device cuda: no usable GPU on this machine (%s; %s, this build's runtime is %s)",
                 e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device visible", d,
                 cuda_version(runtime, r, sizeof r));
        return why;
    }
    g.id = local_rank % g.count;
    CHECK_CUDA(cudaSetDevice(g.id));
    bound = 1;
    const char *no_pools = keep_pool_memory();
    if (no_pools) return no_pools;
    // Non-blocking: neither stream waits for the legacy default stream.
    CHECK_CUDA(cudaStreamCreateWithFlags(&g.compute, cudaStreamNonBlocking));
    CHECK_CUDA(cudaStreamCreateWithFlags(&g.comm, cudaStreamNonBlocking));
    struct cudaDeviceProp p;
    CHECK_CUDA(cudaGetDeviceProperties(&p, g.id));
    snprintf(g.describe, sizeof g.describe, "%s (GPU %d of %d)", p.name, g.id, g.count);
    g.open = 1;
    return NULL;
}

void gpu_close(void) {
    if (!g.open) return;
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaStreamDestroy(g.compute));
    CHECK_CUDA(cudaStreamDestroy(g.comm));
    g.open = 0;
}

void gpu_bind_thread(void) {
    if (bound) return;
    CHECK_CUDA(cudaSetDevice(g.id));
    bound = 1;
}

cudaStream_t gpu_compute_stream(void) { return g.compute; }
cudaStream_t gpu_comm_stream(void) { return g.comm; }
const char *gpu_describe(void) { return g.describe; }
int gpu_device_id(void) { return g.id; }

// ----------------------------------------------------------------------------
// memory

void *gpu_alloc(size_t bytes, int zero) {
    gpu_bind_thread();
    void *p = NULL;
    cudaError_t e = cudaMallocAsync(&p, bytes ? bytes : 1, g.compute);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();  // out of memory is not sticky: clear it, the caller says why
        return NULL;
    }
    // Anything else (a sticky error left by a faulting kernel, a broken
    // context) is not "out of memory" and must not be reported as such.
    if (e != cudaSuccess) fatal("cudaMallocAsync of %zu bytes: %s", bytes, cudaGetErrorString(e));
    if (zero) CHECK_CUDA(cudaMemsetAsync(p, 0, bytes, g.compute));
    return p;
}

void gpu_free(void *p) {
    gpu_bind_thread();
    CHECK_CUDA(cudaFreeAsync(p, g.compute));
}

void *gpu_alloc_pinned(size_t bytes) {
    gpu_bind_thread();
    void *p = NULL;
    cudaError_t e = cudaMallocHost(&p, bytes ? bytes : 1);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return NULL;
    }
    if (e != cudaSuccess) fatal("cudaMallocHost of %zu bytes: %s", bytes, cudaGetErrorString(e));
    return p;
}

void gpu_free_pinned(void *p) { CHECK_CUDA(cudaFreeHost(p)); }

void gpu_copy(void *dst, const void *src, size_t bytes) {
    if (!bytes) return;
    gpu_bind_thread();
    // With unified addressing the runtime tells host from device by itself.
    CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, g.compute));
    CHECK_CUDA(cudaStreamSynchronize(g.compute));
}

int gpu_is_device(const void *p) {
    if (!p) return 0;
    // Since CUDA 11 a plain host pointer is no error (its type is
    // cudaMemoryTypeUnregistered): an error here is a real one.
    struct cudaPointerAttributes a;
    CHECK_CUDA(cudaPointerGetAttributes(&a, p));
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

void gpu_sync(void) { CHECK_CUDA(cudaStreamSynchronize(g.compute)); }

void gpu_mem_info(size_t *used, size_t *total) {
    size_t free_b = 0;
    CHECK_CUDA(cudaMemGetInfo(&free_b, total));
    *used = *total - free_b;
}

size_t gpu_pool_peak(void) {
    cudaMemPool_t pool;
    uint64_t high = 0;  // the attribute is a cuuint64_t, which is a uint64_t
    CHECK_CUDA(cudaDeviceGetDefaultMemPool(&pool, g.id));
    CHECK_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &high));
    return (size_t)high;
}
