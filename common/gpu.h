// gpu: the GPU side of the runtime, in CUDA builds only (ZC_CUDA). Each rank
// uses one GPU: its local rank modulo the GPUs it can see. Kernels and cuBLAS
// run on a compute stream, collectives on a comm stream; events order the two.
// Every CUDA call is checked: a failure is fatal (one line, every rank aborts).
#ifndef GPU_H
#define GPU_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "base.h"

#define CHECK_CUDA(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) \
    fatal("%s: %s", #call, cudaGetErrorString(e_)); } while (0)

// Opens this rank's GPU and its streams; NULL, or why there is no usable GPU.
const char *gpu_open(int local_rank);
// Waits for the GPU and releases the streams (rt_finalize calls it).
void gpu_close(void);
// Makes the calling thread use this rank's GPU (a thread other than main, like
// the comm thread, calls it before its first CUDA call).
void gpu_bind_thread(void);
cudaStream_t gpu_compute_stream(void);
cudaStream_t gpu_comm_stream(void);
// "NVIDIA H100 80GB HBM3 (GPU 0 of 1)" after gpu_open.
const char *gpu_describe(void);
// The CUDA device this process opened.
int gpu_device_id(void);

// Device memory, ordered on the compute stream (so a buffer freed every step
// costs no device-wide synchronization); NULL when the device is out of memory.
void *gpu_alloc(size_t bytes, int zero);
void gpu_free(void *p);
// Page-locked host memory, which the GPU copies at full speed; NULL when out.
void *gpu_alloc_pinned(size_t bytes);
void gpu_free_pinned(void *p);
// dst = src in any direction (host or device on either side); returns when done.
void gpu_copy(void *dst, const void *src, size_t bytes);
// 1 if p points into device memory.
int gpu_is_device(const void *p);
// Waits until everything queued on the compute stream has run.
void gpu_sync(void);
// Bytes in use on the device as the driver sees it, and its total.
void gpu_mem_info(size_t *used, size_t *total);
// The most the device's default memory pool (where the stages' buffers come
// from) has held from the device at once since it was created.
size_t gpu_pool_peak(void);

#endif
