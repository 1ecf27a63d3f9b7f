// comm_staging: collectives over GPU buffers with backends that read host
// memory (mpi, ring, naive), and over host buffers with nccl. The comm thread
// waits for the compute stream's work that produced the input, copies each
// buffer that is on the wrong side into a staging buffer (page-locked host
// memory, or GPU memory for nccl), runs the collective there and copies the
// result back. This is what lets several ranks share one GPU, which NCCL refuses.
#include "base.h"
#include "comm_backend.h"
#include "gpu.h"
#include "mem.h"

// Grow-only staging buffers, used by the comm thread alone.
typedef struct { char *buf; size_t cap; } Stage;
static Stage host_stage, gpu_stage;

// What this rank reads and writes: the payload, except the one slice an
// all-gather sends and a reduce-scatter or scatter receives.
static size_t send_bytes(const CommOp *o) {
    size_t p = comm_payload_bytes(o);
    return o->kind == COLL_ALL_GATHER ? p / (size_t)rt.world : p;
}

static size_t recv_bytes(const CommOp *o) {
    size_t p = comm_payload_bytes(o);
    return o->kind == COLL_REDUCE_SCATTER || o->kind == COLL_SCATTER ? p / (size_t)rt.world : p;
}

void comm_staging_bytes(size_t *host, size_t *gpu) {
    *host = host_stage.cap;
    *gpu = gpu_stage.cap;
}

static char *stage(int gpu, size_t bytes) {
    Stage *st = gpu ? &gpu_stage : &host_stage;
    if (bytes > st->cap) {
        mem_free(st->buf);
        st->buf = gpu ? mem_alloc_gpu(MEM_COMM_BUFFERS, bytes) : mem_alloc_pinned(MEM_COMM_BUFFERS, bytes);
        st->cap = bytes;
        // GPU memory is allocated in the compute stream's order; the comm stream
        // may use it once that allocation has happened.
        if (gpu) gpu_sync();
    }
    return st->buf;
}

static void copy_on_comm_stream(void *dst, const void *src, size_t bytes) {
    if (!bytes) return;
    CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, gpu_comm_stream()));
    CHECK_CUDA(cudaStreamSynchronize(gpu_comm_stream()));
}

static int wrong_side(const void *p, size_t bytes, int want_gpu) {
    return p && bytes && gpu_is_device(p) != want_gpu;
}

CommRun comm_run_staged(const CommBackend *b, const CommOp *op, void *ready) {
    gpu_bind_thread();
    int want_gpu = b->gpu_buffers;
    if (want_gpu) CHECK_CUDA(cudaStreamWaitEvent(gpu_comm_stream(), (cudaEvent_t)ready, 0));
    else CHECK_CUDA(cudaEventSynchronize((cudaEvent_t)ready));

    CommOp o = *op;
    const char *S = op->send;
    char *R = op->recv;
    size_t sb = send_bytes(op), rb = recv_bytes(op);
    int s_wrong = wrong_side(S, sb, want_gpu), r_wrong = wrong_side(R, rb, want_gpu);
    if (!s_wrong && !r_wrong) return b->run(&o);

    char *staged_recv = NULL;
    if (S && R && R < S + sb && S < R + rb) {
        // In place (one buffer, or a slot inside the other): stage the union.
        const char *lo = S < R ? S : R;
        size_t span = (size_t)((S + sb > R + rb ? S + sb : R + rb) - lo);
        char *buf = stage(want_gpu, span);
        copy_on_comm_stream(buf + (S - lo), S, sb);
        o.send = buf + (S - lo);
        o.recv = staged_recv = buf + (R - lo);
    } else {
        size_t at = s_wrong ? (sb + 255) & ~(size_t)255 : 0;
        char *buf = stage(want_gpu, at + (r_wrong ? rb : 0));
        if (s_wrong) {
            copy_on_comm_stream(buf, S, sb);
            o.send = buf;
        }
        if (r_wrong) o.recv = staged_recv = buf + at;
    }
    CommRun done = b->run(&o);
    if (staged_recv) copy_on_comm_stream(R, staged_recv, rb);
    return done;
}

void comm_staging_free(void) {
    mem_free(host_stage.buf);
    mem_free(gpu_stage.buf);
    host_stage.buf = gpu_stage.buf = NULL;
    host_stage.cap = gpu_stage.cap = 0;
}
