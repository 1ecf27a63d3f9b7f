// nccl_fault: an LD_PRELOAD library (CUDA builds) with which tests/test_gpu.sh
// makes NCCL fail as a transport error or a lost peer leaves it: once a
// process has asked cudaStreamQuery NCCL_FAULT_AFTER times, every stream stays
// "not ready" and from then on ncclCommGetAsyncError reports ncclRemoteError. A collective
// that waited with cudaStreamSynchronize would hang there; comm_nccl's wait
// must abort the communicator and stop every rank, naming the collective.
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>
#include <stdlib.h>

static long queries, after = -1;
static int faulted(void) {
    if (after < 0) {
        const char *v = getenv("NCCL_FAULT_AFTER");
        after = v ? atol(v) : 0;
    }
    return after > 0 && queries > after;
}
static int faulting(void) {
    faulted();
    return after > 0 && ++queries > after;
}

cudaError_t cudaStreamQuery(cudaStream_t s) {
    static cudaError_t (*real)(cudaStream_t);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "cudaStreamQuery");
    if (faulting()) return cudaErrorNotReady;
    return real(s);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *error) {
    static ncclResult_t (*real)(ncclComm_t, ncclResult_t *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "ncclCommGetAsyncError");
    ncclResult_t r = real(comm, error);
    // Only once the streams hang: NCCL asks this itself before it enqueues
    // each collective (ncclCommEnsureReady), and an error there would stop the
    // run at the call, not in the wait this library is here to test.
    if (r == ncclSuccess && faulted()) *error = ncclRemoteError;
    return r;
}
