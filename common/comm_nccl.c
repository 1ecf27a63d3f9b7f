// comm_nccl: the NCCL backend (--comm nccl, with --device cuda). One NCCL
// communicator for all ranks, its unique id broadcast from rank 0 through MPI.
// Collectives run on the comm stream, after the compute stream's work that
// produced their input (comm_staging.c orders the two with an event), and the
// comm thread waits for them, so requests complete in order as on the CPU.
#include "comm_backend.h"
#include "base.h"
#include "gpu.h"

#include <mpi.h>
#include <nccl.h>

#define CHECK_NCCL(call) do { ncclResult_t r_ = (call); if (r_ != ncclSuccess) \
    fatal("%s: %s%s", #call, ncclGetErrorString(r_), r_ == ncclInvalidUsage ? \
          " (several ranks on one GPU cannot share an NCCL communicator: use --comm mpi)" : ""); \
    } while (0)

static ncclComm_t nc;
static int opened;

static ncclDataType_t nccl_type(DType dt) {
    switch (dt) {
    case DT_F32: return ncclFloat32;
    case DT_BF16: return ncclBfloat16;
    case DT_F16: return ncclFloat16;
    case DT_F64: return ncclFloat64;
    default: return ncclInt32;
    }
}

static ncclRedOp_t nccl_op(RedOp op) {
    switch (op) {
    case OP_SUM: return ncclSum;
    case OP_MAX: return ncclMax;
    default: return ncclMin;
    }
}

// On the main thread, with nothing in flight: every rank joins one communicator.
static void nccl_open(void) {
    if (opened) return;
    ncclUniqueId id;
    if (rt.rank == 0) CHECK_NCCL(ncclGetUniqueId(&id));
    CHECK_MPI(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
    CHECK_NCCL(ncclCommInitRank(&nc, rt.world, id, rt.rank));
    opened = 1;
}

static void nccl_close(void) {
    if (!opened) return;
    CHECK_NCCL(ncclCommDestroy(nc));
    opened = 0;
}

// NCCL has no scatter: root sends each rank its slice in one group.
static void nccl_scatter(const CommOp *o, size_t bytes, cudaStream_t s) {
    const char *send = o->send;
    CHECK_NCCL(ncclGroupStart());
    if (rt.rank == o->root)
        for (int r = 0; r < rt.world; r++)
            if (r != o->root)
                CHECK_NCCL(ncclSend(send + (size_t)r * bytes, o->count, nccl_type(o->dt), r, nc, s));
    if (rt.rank != o->root) CHECK_NCCL(ncclRecv(o->recv, o->count, nccl_type(o->dt), o->root, nc, s));
    CHECK_NCCL(ncclGroupEnd());
    if (rt.rank == o->root && bytes && o->recv != send + (size_t)o->root * bytes)
        CHECK_CUDA(cudaMemcpyAsync(o->recv, send + (size_t)o->root * bytes, bytes,
                                   cudaMemcpyDeviceToDevice, s));
}

static uint64_t nccl_run(const CommOp *o) {
    cudaStream_t s = gpu_comm_stream();
    ncclDataType_t t = nccl_type(o->dt);
    size_t bytes = o->count * dtype_size(o->dt);
    switch (o->kind) {
    case COLL_ALL_REDUCE: CHECK_NCCL(ncclAllReduce(o->send, o->recv, o->count, t, nccl_op(o->op), nc, s)); break;
    case COLL_REDUCE_SCATTER: CHECK_NCCL(ncclReduceScatter(o->send, o->recv, o->count, t, ncclSum, nc, s)); break;
    case COLL_ALL_GATHER: CHECK_NCCL(ncclAllGather(o->send, o->recv, o->count, t, nc, s)); break;
    case COLL_BROADCAST: CHECK_NCCL(ncclBroadcast(o->send, o->recv, o->count, t, o->root, nc, s)); break;
    case COLL_REDUCE: CHECK_NCCL(ncclReduce(o->send, o->recv, o->count, t, nccl_op(o->op), o->root, nc, s)); break;
    case COLL_SCATTER: nccl_scatter(o, bytes, s); break;
    case COLL_BARRIER: CHECK_CUDA(cudaStreamSynchronize(s)); CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); break;
    default: fatal("comm nccl: unknown collective %d", (int)o->kind);
    }
    CHECK_CUDA(cudaStreamSynchronize(s));
    return COMM_SENT_MODEL;
}

const CommBackend comm_backend_nccl = { .name = "nccl", .run = nccl_run, .gpu_buffers = 1,
                                        .open = nccl_open, .close = nccl_close };
