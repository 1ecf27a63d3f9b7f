// comm_backend: the payload of a collective and the local reduction that the
// hand-written backends and MPI's 16-bit sums share.
#include "comm_backend.h"
#include "base.h"

const char *coll_name(CollKind k) {
    static const char *names[] = { "all_reduce", "reduce_scatter", "all_gather",
                                   "broadcast", "reduce", "scatter", "barrier" };
    return names[k];
}

const char *algo_name(Algo a) {
    static const char *names[] = { "mpi", "naive", "ring", "tree", "rd", "rabenseifner", "hier", "nccl" };
    return (unsigned)a < ALGO_N ? names[a] : "?";
}

uint64_t comm_payload_bytes(const CommOp *o) {
    uint64_t esz = dtype_size(o->dt), n = (uint64_t)rt.world;
    switch (o->kind) {
    case COLL_ALL_REDUCE:
    case COLL_BROADCAST:
    case COLL_REDUCE: return o->count * esz;
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_GATHER:
    case COLL_SCATTER: return n * o->count * esz;
    default: return 0;
    }
}

// ----------------------------------------------------------------------------
// local reductions, for backends that combine buffers themselves

#define COMBINE(T, a, b) \
    ((op) == OP_SUM ? (T)((a) + (b)) : (op) == OP_MAX ? ((a) > (b) ? (a) : (b)) : ((a) < (b) ? (a) : (b)))

ZC_WIDE void comm_reduce_local(void *acc, const void *x, size_t n, DType dt, RedOp op) {
    if (dt == DT_F32 && op == OP_SUM) {  // the hot case: a loop the compiler vectorizes
        float *restrict a = acc;
        const float *restrict b = x;
        for (size_t i = 0; i < n; i++) a[i] += b[i];
        return;
    }
    if (dt == DT_BF16 && op == OP_SUM) {  // lc5's gradients: vectorized too (COMBINE's choice of op stops it)
        uint16_t *restrict a = acc;
        const uint16_t *restrict b = x;
        for (size_t i = 0; i < n; i++) a[i] = f32_to_bf16(bf16_to_f32(a[i]) + bf16_to_f32(b[i]));
        return;
    }
    switch (dt) {
    case DT_F32: { float *a = acc; const float *b = x; for (size_t i = 0; i < n; i++) a[i] = COMBINE(float, a[i], b[i]); break; }
    case DT_F64: { double *a = acc; const double *b = x; for (size_t i = 0; i < n; i++) a[i] = COMBINE(double, a[i], b[i]); break; }
    case DT_I32: { int *a = acc; const int *b = x; for (size_t i = 0; i < n; i++) a[i] = COMBINE(int, a[i], b[i]); break; }
    case DT_BF16: {
        uint16_t *a = acc;
        const uint16_t *b = x;
        for (size_t i = 0; i < n; i++) {
            float u = bf16_to_f32(a[i]), v = bf16_to_f32(b[i]);
            a[i] = f32_to_bf16(COMBINE(float, u, v));
        }
        break;
    }
    case DT_F16: {
        uint16_t *a = acc;
        const uint16_t *b = x;
        for (size_t i = 0; i < n; i++) {
            float u = f16_to_f32(a[i]), v = f16_to_f32(b[i]);
            a[i] = f32_to_f16(COMBINE(float, u, v));
        }
        break;
    }
    }
}
