// gpu: device choice, streams, memory and copies through the CUDA runtime API.
// Plain C: the kernels themselves live in kernels_cuda.cu.
#include "gpu.h"

#include <stdint.h>
#include <stdio.h>

static struct {
    int id, count, open;
    cudaStream_t compute, comm;
    char describe[320];
} g;
static _Thread_local int bound;  // this thread has called cudaSetDevice

// ----------------------------------------------------------------------------
// lifetime

const char *gpu_open(int local_rank) {
    static char why[256];
    cudaError_t e = cudaGetDeviceCount(&g.count);
    if (e != cudaSuccess || g.count == 0) {
        snprintf(why, sizeof why, "--device cuda: no usable GPU on this machine (%s)",
                 e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device visible");
        return why;
    }
    g.id = local_rank % g.count;
    CHECK_CUDA(cudaSetDevice(g.id));
    bound = 1;
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

// ----------------------------------------------------------------------------
// memory

void *gpu_alloc(size_t bytes, int zero) {
    gpu_bind_thread();
    void *p = NULL;
    if (cudaMallocAsync(&p, bytes ? bytes : 1, g.compute) != cudaSuccess) {
        (void)cudaGetLastError();  // clear the sticky-free out-of-memory error
        return NULL;
    }
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
    if (cudaMallocHost(&p, bytes ? bytes : 1) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
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
    struct cudaPointerAttributes a;
    if (!p || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
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
