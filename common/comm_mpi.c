// comm_mpi: the backend that hands each collective to the MPI library.
#include "base.h"
#include "comm_backend.h"
#include "mpi_check.h"

#include <limits.h>
#include <mpi.h>
#include <string.h>

static MPI_Datatype mpi_type(DType dt) {
    switch (dt) {
    case DT_F32: return MPI_FLOAT;
    case DT_F64: return MPI_DOUBLE;
    case DT_I32: return MPI_INT;
    default: return MPI_UINT16_T;  // bf16 and fp16 travel as their bits
    }
}

// MPI cannot add bf16 or fp16: these ops do, each pair in fp32, rounded once.
static void sum_bf16(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    comm_reduce_local(inout, in, (size_t)*len, DT_BF16, OP_SUM);
}

static void sum_f16(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    comm_reduce_local(inout, in, (size_t)*len, DT_F16, OP_SUM);
}

static MPI_Op mpi_op(RedOp op, DType dt) {
    static MPI_Op half_sum[2] = { MPI_OP_NULL, MPI_OP_NULL };
    if (dt == DT_BF16 || dt == DT_F16) {
        if (op != OP_SUM) fatal("comm mpi: only sums are supported for %s", dtype_name(dt));
        int k = dt == DT_F16;
        if (half_sum[k] == MPI_OP_NULL) CHECK_MPI(MPI_Op_create(k ? sum_f16 : sum_bf16, 1, &half_sum[k]));
        return half_sum[k];
    }
    switch (op) {
    case OP_SUM: return MPI_SUM;
    case OP_MAX: return MPI_MAX;
    default: return MPI_MIN;
    }
}

static int mpi_count(size_t n) {
    if (n > INT_MAX) fatal("comm mpi: count %zu exceeds the MPI int limit", n);
    return (int)n;
}

// Where a reduce-scatter's own slice sits inside its send buffer.
static const void *inplace_rs(const CommOp *o) {
    return (const char *)o->send + (size_t)rt.rank * o->count * dtype_size(o->dt);
}

// Each rank's result holds every rank's input, so none can leave before all
// are in (with no elements, MPI may return at once).
static _Atomic int waits_for_all;
int comm_mpi_waits_for_all(void) { return waits_for_all; }

static int needs_every_rank(const CommOp *o) {
    if (o->kind == COLL_BARRIER) return 1;
    return o->count > 0 && (o->kind == COLL_ALL_REDUCE || o->kind == COLL_REDUCE_SCATTER || o->kind == COLL_ALL_GATHER);
}

static CommRun mpi_run(const CommOp *o) {
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Datatype t = mpi_type(o->dt);
    int n = mpi_count(o->count);
    const char *inplace = (const char *)o->recv + (size_t)rt.rank * o->count * dtype_size(o->dt);
    waits_for_all = needs_every_rank(o);
    switch (o->kind) {
    case COLL_ALL_REDUCE:
        CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, o->recv, n, t, mpi_op(o->op, o->dt), w));
        break;
    case COLL_REDUCE_SCATTER:
        if (o->recv == inplace_rs(o)) {
            // MPI's in-place form leaves the result at the start of the buffer.
            CHECK_MPI(MPI_Reduce_scatter_block(MPI_IN_PLACE, (void *)o->send, n, t, mpi_op(OP_SUM, o->dt), w));
            if (rt.rank) memmove(o->recv, o->send, o->count * dtype_size(o->dt));
        } else {
            CHECK_MPI(MPI_Reduce_scatter_block(o->send, o->recv, n, t, mpi_op(OP_SUM, o->dt), w));
        }
        break;
    case COLL_ALL_GATHER:
        CHECK_MPI(MPI_Allgather(o->send == inplace ? MPI_IN_PLACE : o->send, n, t,
                                o->recv, n, t, w));
        break;
    case COLL_BROADCAST:
        CHECK_MPI(MPI_Bcast(o->recv, n, t, o->root, w));
        break;
    case COLL_REDUCE:
        CHECK_MPI(MPI_Reduce(o->send == o->recv && rt.rank == o->root ? MPI_IN_PLACE : o->send,
                             o->recv, n, t, mpi_op(o->op, o->dt), o->root, w));
        break;
    case COLL_SCATTER:
        CHECK_MPI(MPI_Scatter(o->send, n, t, o->recv, n, t, o->root, w));
        break;
    case COLL_BARRIER:
        CHECK_MPI(MPI_Barrier(w));
        break;
    default:
        fatal("comm mpi: unknown collective %d", (int)o->kind);
    }
    waits_for_all = 0;
    return (CommRun){ COMM_SENT_MODEL, 0, ALGO_MPI };  // the library does not say what it sent
}

const CommBackend comm_backend_mpi = { .name = "mpi", .run = mpi_run };
