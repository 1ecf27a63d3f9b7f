// comm: the request queue, the comm thread that drains it, and byte accounting.
// Backends only run one collective at a time.
#include "comm.h"
#include "base.h"
#ifdef ZC_CUDA
#include "gpu.h"
#endif

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define QCAP 1024

typedef struct {
    CommOp op;
    int metric;        // counted under metrics, not training traffic
    double t_launch, t_start, t_end;
#ifdef ZC_CUDA
    cudaEvent_t ready;  // the compute stream's work before the request (CUDA runs)
#endif
} Slot;

static struct {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    Slot slot[QCAP];
    long head;         // requests made so far (the next ticket)
    long finished;     // requests the thread has completed
    int running, stop;
    const CommBackend *backend;
    CommObserver observer;
    long delay_us;     // ZC_COMM_DELAY_US: each collective starts this much later
    CommStats stats;
} q = { .lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
        .done = PTHREAD_COND_INITIALIZER };

static const CommBackend *backends[] = {
    &comm_backend_mpi, &comm_backend_ring, &comm_backend_naive,
#ifdef ZC_CUDA
    &comm_backend_nccl,
#endif
};
#define NBACKENDS (sizeof backends / sizeof backends[0])

// ----------------------------------------------------------------------------
// accounting

// Called with the lock held, when the collective is done. sent: the bytes the
// backend sent, or COMM_SENT_MODEL to count the ring model's.
static void account(CommCount *c, const CommOp *o, uint64_t sent) {
    uint64_t n = (uint64_t)rt.world, payload = comm_payload_bytes(o), model = 0;
    switch (o->kind) {
    case COLL_ALL_REDUCE: model = 2 * (n - 1) * payload; break;
    case COLL_SCATTER: model = (n - 1) * payload / n; break;
    case COLL_BARRIER: break;
    default: model = (n - 1) * payload; break;
    }
    c->calls++;
    c->payload += payload;
    c->sent_xn += sent == COMM_SENT_MODEL ? model : sent * n;
}

// ----------------------------------------------------------------------------
// the comm thread

static uint64_t run_slot(Slot *s) {
#ifdef ZC_CUDA
    if (rt.device == DEV_CUDA) return comm_run_staged(q.backend, &s->op, s->ready);
#endif
    return q.backend->run(&s->op);
}

static void *comm_thread(void *arg) {
    (void)arg;
    pthread_mutex_lock(&q.lock);
    for (;;) {
        while (q.finished == q.head && !q.stop) pthread_cond_wait(&q.work, &q.lock);
        if (q.finished == q.head) break;  // stop requested and nothing queued
        Slot *s = &q.slot[q.finished % QCAP];
        CommObserver observer = q.observer;
        pthread_mutex_unlock(&q.lock);
        if (q.delay_us > 0) usleep((useconds_t)q.delay_us);
        s->t_start = now_s();
        uint64_t sent = run_slot(s);
        s->t_end = now_s();
        if (observer) observer(s->op.kind, s->t_launch, s->t_start, s->t_end, comm_payload_bytes(&s->op));
        pthread_mutex_lock(&q.lock);
        account(s->metric ? &q.stats.metrics : &q.stats.kind[s->op.kind], &s->op, sent);
        q.finished++;
        pthread_cond_broadcast(&q.done);
    }
    pthread_mutex_unlock(&q.lock);
    return NULL;
}

void comm_init(void) {
    q.backend = &comm_backend_mpi;
    const char *delay = getenv("ZC_COMM_DELAY_US");
    q.delay_us = delay ? atol(delay) : 0;
    q.stop = 0;
    if (pthread_create(&q.thread, NULL, comm_thread, NULL) != 0)
        fatal("comm_init: pthread_create failed");
    q.running = 1;
}

void comm_finalize(void) {
    if (!q.running) return;
    pthread_mutex_lock(&q.lock);
    q.stop = 1;
    pthread_cond_signal(&q.work);
    pthread_mutex_unlock(&q.lock);
    if (pthread_join(q.thread, NULL) != 0) fatal("comm_finalize: pthread_join failed");
    q.running = 0;
    for (size_t i = 0; i < NBACKENDS; i++)
        if (backends[i]->close) backends[i]->close();
#ifdef ZC_CUDA
    comm_staging_free();
    for (int i = 0; i < QCAP; i++)
        if (q.slot[i].ready) CHECK_CUDA(cudaEventDestroy(q.slot[i].ready));
#endif
}

int comm_use(const char *name) {
    for (size_t i = 0; i < NBACKENDS; i++)
        if (strcmp(backends[i]->name, name) == 0) {
            comm_wait(q.head - 1);  // nothing of the old backend stays in flight
            if (backends[i]->gpu_buffers && rt.device != DEV_CUDA) return 0;
            if (backends[i]->open) backends[i]->open();
            q.backend = backends[i];
            return 1;
        }
    return 0;
}

const CommBackend *comm_backend(void) { return q.backend; }

void comm_observe(CommObserver fn) {
    pthread_mutex_lock(&q.lock);
    q.observer = fn;
    pthread_mutex_unlock(&q.lock);
}

const char *comm_backends(void) {
    static char names[64];
    names[0] = '\0';
    for (size_t i = 0; i < NBACKENDS; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? " " : "",
                 backends[i]->name);
    return names;
}

// ----------------------------------------------------------------------------
// the counters

double comm_sent_bytes(const CommCount *c) { return (double)c->sent_xn / rt.world; }

double comm_total_sent_bytes(const CommStats *s) {
    uint64_t xn = 0;
    for (int k = 0; k < COLL_NKIND; k++) xn += s->kind[k].sent_xn;
    return (double)xn / rt.world;
}

CommStats comm_stats(void) {
    pthread_mutex_lock(&q.lock);
    CommStats s = q.stats;
    pthread_mutex_unlock(&q.lock);
    return s;
}

void comm_reset_stats(void) {
    pthread_mutex_lock(&q.lock);
    memset(&q.stats, 0, sizeof q.stats);
    pthread_mutex_unlock(&q.lock);
}

// ----------------------------------------------------------------------------
// requests

static CommReq enqueue(CommOp op, int metric) {
    if (!q.running) fatal("comm: collective %s before comm_init", coll_name(op.kind));
    pthread_mutex_lock(&q.lock);
    while (q.head - q.finished >= QCAP) pthread_cond_wait(&q.done, &q.lock);
    q.slot[q.head % QCAP].op = op;
    q.slot[q.head % QCAP].metric = metric;
    q.slot[q.head % QCAP].t_launch = now_s();
#ifdef ZC_CUDA
    if (rt.device == DEV_CUDA) {  // the collective starts after what is queued now
        Slot *s = &q.slot[q.head % QCAP];
        if (!s->ready) CHECK_CUDA(cudaEventCreateWithFlags(&s->ready, cudaEventDisableTiming));
        CHECK_CUDA(cudaEventRecord(s->ready, gpu_compute_stream()));
    }
#endif
    CommReq r = q.head++;
    pthread_cond_signal(&q.work);
    pthread_mutex_unlock(&q.lock);
    return r;
}

void comm_wait(CommReq req) {
    pthread_mutex_lock(&q.lock);
    while (q.finished <= req) pthread_cond_wait(&q.done, &q.lock);
    pthread_mutex_unlock(&q.lock);
}

int comm_test(CommReq req) {
    pthread_mutex_lock(&q.lock);
    int done = q.finished > req;
    pthread_mutex_unlock(&q.lock);
    return done;
}

void comm_req_times(CommReq req, double *start, double *end) {
    comm_wait(req);
    *start = q.slot[req % QCAP].t_start;
    *end = q.slot[req % QCAP].t_end;
}

void comm_wait_timed(CommReq req, CommOverlap *o) {
    double waiting_from = now_s(), start, end;
    comm_wait(req);
    comm_req_times(req, &start, &end);
    o->time += end - start;
    o->hidden += fmin(fmax(waiting_from - start, 0.0), end - start);
}

#define OP(...) ((CommOp){ __VA_ARGS__ })

CommReq comm_all_reduce_async(void *buf, size_t count, DType dt, RedOp op) {
    return enqueue(OP(.kind = COLL_ALL_REDUCE, .send = buf, .recv = buf, .count = count,
                      .dt = dt, .op = op), 0);
}
CommReq comm_reduce_scatter_async(const void *send, void *recv, size_t recvcount, DType dt) {
    size_t esz = dtype_size(dt);
    const char *s = send, *r = recv;
    int inplace = r == s + (size_t)rt.rank * recvcount * esz;
    if (!inplace && r < s + (size_t)rt.world * recvcount * esz && s < r + recvcount * esz)
        fatal("comm_reduce_scatter: send and recv overlap (in place means recv = send + rank*recvcount)");
    return enqueue(OP(.kind = COLL_REDUCE_SCATTER, .send = send, .recv = recv,
                      .count = recvcount, .dt = dt, .op = OP_SUM), 0);
}
CommReq comm_all_gather_async(const void *send, void *recv, size_t sendcount, DType dt) {
    return enqueue(OP(.kind = COLL_ALL_GATHER, .send = send, .recv = recv, .count = sendcount,
                      .dt = dt), 0);
}
CommReq comm_broadcast_async(void *buf, size_t count, DType dt, int root) {
    return enqueue(OP(.kind = COLL_BROADCAST, .send = buf, .recv = buf, .count = count,
                      .dt = dt, .root = root), 0);
}
CommReq comm_reduce_async(const void *send, void *recv, size_t count, DType dt, RedOp op,
                          int root) {
    return enqueue(OP(.kind = COLL_REDUCE, .send = send, .recv = recv, .count = count,
                      .dt = dt, .op = op, .root = root), 0);
}
CommReq comm_scatter_async(const void *send, void *recv, size_t recvcount, DType dt, int root) {
    return enqueue(OP(.kind = COLL_SCATTER, .send = send, .recv = recv, .count = recvcount,
                      .dt = dt, .root = root), 0);
}

void comm_all_reduce(void *buf, size_t count, DType dt, RedOp op) {
    comm_wait(comm_all_reduce_async(buf, count, dt, op));
}
void comm_reduce_scatter(const void *send, void *recv, size_t recvcount, DType dt) {
    comm_wait(comm_reduce_scatter_async(send, recv, recvcount, dt));
}
void comm_all_gather(const void *send, void *recv, size_t sendcount, DType dt) {
    comm_wait(comm_all_gather_async(send, recv, sendcount, dt));
}
void comm_broadcast(void *buf, size_t count, DType dt, int root) {
    comm_wait(comm_broadcast_async(buf, count, dt, root));
}
void comm_reduce(const void *send, void *recv, size_t count, DType dt, RedOp op, int root) {
    comm_wait(comm_reduce_async(send, recv, count, dt, op, root));
}
void comm_scatter(const void *send, void *recv, size_t recvcount, DType dt, int root) {
    comm_wait(comm_scatter_async(send, recv, recvcount, dt, root));
}
void comm_barrier(void) { comm_wait(enqueue(OP(.kind = COLL_BARRIER), 0)); }

static void metric(void *v, int n, DType dt, RedOp op) {
    comm_wait(enqueue(OP(.kind = COLL_ALL_REDUCE, .send = v, .recv = v, .count = (size_t)n,
                         .dt = dt, .op = op), 1));
}
void comm_metric_sum(double *v, int n) { metric(v, n, DT_F64, OP_SUM); }
void comm_metric_max(double *v, int n) { metric(v, n, DT_F64, OP_MAX); }
void comm_agree_min(int *v) { metric(v, 1, DT_I32, OP_MIN); }

