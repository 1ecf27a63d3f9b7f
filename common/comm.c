// comm: the request queue, the comm thread that drains it, and byte accounting.
// Backends only run one collective at a time.
#include "comm.h"
#include "comm_backend.h"
#include "base.h"
#include "comm_p2p.h"
#include "file.h"
#include "mem.h"
#include "clock.h"
#include "print.h"
#ifdef ZC_CUDA
#include "gpu.h"
#endif

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#define QCAP 1024

typedef struct {
    CommOp op;
    int metric;        // counted under metrics, not training traffic
    double t_launch, t_start, t_end;
    unsigned long marks;   // compute_marks() at the launch
    unsigned long needed;  // compute_marks() when first waited for (itself or a later request)
    uint64_t seq;          // its number among the collectives of its kind (from 1)
    const char *phase;     // what the caller was doing at the launch (comm_phase)
    int layer;
    uint64_t in_hash;      // strict: a hash of the input at the launch
    size_t frees;          // strict: mem's count of freed blocks at the launch
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
    int strict;        // grading mode (comm_set_strict)
    long released;     // strict: the thread runs requests up to this one
    long waiting;      // the request the caller waits for, or -1
    long needed;       // the last request the caller has waited for
    const CommBackend *backend;
    CommObserver observer;
    const char *phase; // what the caller does now (comm_phase)
    int layer;
    uint64_t seq[COLL_NKIND];  // collectives of each kind launched (comm_reset_stats restarts them)
    CommStats stats;
} q = { .lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
        .done = PTHREAD_COND_INITIALIZER, .released = -1, .waiting = -1, .needed = -1, .layer = -1 };

static const CommBackend *backends[] = {
    &comm_backend_mpi, &comm_backend_ring, &comm_backend_naive, &comm_backend_tree, &comm_backend_rd,
    &comm_backend_rabenseifner, &comm_backend_hier, &comm_backend_auto,
#ifdef ZC_CUDA
    &comm_backend_nccl,
#endif
};
#define NBACKENDS (sizeof backends / sizeof backends[0])

// ----------------------------------------------------------------------------
// accounting

// Called with the lock held, when the collective is done. run.sent: the bytes
// the backend sent, or COMM_SENT_MODEL to count the ring model's.
static void account(CommCount *c, const CommOp *o, CommRun run) {
    uint64_t sent = run.sent;
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
    c->inter_xn += sent == COMM_SENT_MODEL ? 0 : run.inter * n;
}

// ----------------------------------------------------------------------------
// grading mode: poison where a collective leaves bytes undefined, and the input
// it reads checked to be the one it was given

// A NaN (or, for integers, a pattern) of each type, as the bytes it is stored in.
static void poison_value(DType dt, unsigned char *v) {
    uint32_t f32 = 0x7fc0dead, i32 = 0x5a5a5a5a;
    uint64_t f64 = 0x7ff8deaddeaddeadull;
    uint16_t b16 = 0x7fc1, h16 = 0x7e01;
    switch (dt) {
    case DT_F32: memcpy(v, &f32, 4); break;
    case DT_F64: memcpy(v, &f64, 8); break;
    case DT_I32: memcpy(v, &i32, 4); break;
    case DT_BF16: memcpy(v, &b16, 2); break;
    case DT_F16: memcpy(v, &h16, 2); break;
    }
}

// Fills bytes at p (the host's) with the esz bytes at v, repeated: v once,
// then copies of what is filled, doubling, and 64 KiB at a time from there (a
// block still in the cache). A call per element took 4-5% of a graded
// lecture 5 run's processor time (test_lc5 at N = 4).
static void fill(unsigned char *p, size_t bytes, const unsigned char *v, size_t esz) {
    if (bytes < esz) return;
    memcpy(p, v, esz);
    for (size_t done = esz; done < bytes;) {
        size_t k = done < 65536 ? done : 65536;
        if (k > bytes - done) k = bytes - done;
        memcpy(p + done, p, k);
        done += k;
    }
}

// Fills n elements of type dt at p with poison, on the host or the GPU.
static void poison(void *p, size_t n, DType dt) {
    // A GPU buffer is poisoned from here, a chunk at a time; one per thread,
    // since the caller (at a launch) and the comm thread (after a run) both poison.
    static _Thread_local unsigned char pattern[1 << 16];
    size_t esz = dtype_size(dt), per = sizeof pattern / esz;
    unsigned char v[8];
    poison_value(dt, v);
    if (!mem_is_gpu(p)) {
        fill(p, n * esz, v, esz);
        return;
    }
    fill(pattern, per * esz, v, esz);
    for (size_t i = 0; i < n; i += per)
        mem_copy((char *)p + i * esz, pattern, (n - i < per ? n - i : per) * esz);
}

// Where a collective's input lies: what the launch promises not to change
// before the wait. Empty for a rank that only receives.
static void input_of(const CommOp *o, const void **p, size_t *bytes) {
    size_t esz = dtype_size(o->dt), N = (size_t)rt.world;
    int root = rt.rank == o->root;
    *p = o->send;
    switch (o->kind) {
    case COLL_ALL_REDUCE: *bytes = o->count * esz; break;
    case COLL_REDUCE_SCATTER: *bytes = N * o->count * esz; break;
    case COLL_ALL_GATHER: *bytes = o->count * esz; break;
    case COLL_BROADCAST: *bytes = root ? o->count * esz : 0; break;
    case COLL_REDUCE: *bytes = o->count * esz; break;
    case COLL_SCATTER: *bytes = root ? N * o->count * esz : 0; break;
    default: *bytes = 0; break;
    }
}

static uint64_t input_hash(const CommOp *o) {
    const void *p;
    size_t bytes;
    input_of(o, &p, &bytes);
    if (!bytes) return 0;
    if (!mem_is_gpu(p)) return XXH3_64bits(p, bytes);
    // A GPU buffer is hashed through host memory, a chunk at a time. mem_copy
    // runs on the compute stream and waits for it, so the hash at the launch
    // sees what the kernels queued before it wrote, and the one before the run
    // what was queued since: a kernel writing into an input in flight too.
    static _Thread_local unsigned char chunk[1 << 16];
    FileHash h;
    file_hash_begin(&h);
    for (size_t i = 0; i < bytes; i += sizeof chunk) {
        size_t n = bytes - i < sizeof chunk ? bytes - i : sizeof chunk;
        mem_copy(chunk, (const char *)p + i, n);
        file_hash_add(&h, chunk, n);
    }
    return file_hash_value(&h);
}

static int overlaps(const void *a, size_t an, const void *b, size_t bn) {
    return (const char *)a < (const char *)b + bn && (const char *)b < (const char *)a + an;
}

// At the launch: the outputs that are not inputs hold poison until the wait.
static void poison_outputs(const CommOp *o) {
    size_t esz = dtype_size(o->dt), N = (size_t)rt.world, n = o->count;
    char *recv = o->recv, *slot = recv + (size_t)rt.rank * n * esz;
    int root = rt.rank == o->root;
    switch (o->kind) {
    case COLL_REDUCE_SCATTER:
        if (!overlaps(o->send, N * n * esz, recv, n * esz)) poison(recv, n, o->dt);
        break;
    case COLL_ALL_GATHER:  // in place, only this rank's slot is input
        if (o->send == slot) {
            poison(recv, (size_t)rt.rank * n, o->dt);
            poison(slot + n * esz, (N - 1 - (size_t)rt.rank) * n, o->dt);
        } else {
            poison(recv, N * n, o->dt);
        }
        break;
    case COLL_BROADCAST: if (!root) poison(recv, n, o->dt); break;
    case COLL_REDUCE: if (root && o->send != o->recv) poison(recv, n, o->dt); break;
    case COLL_SCATTER:
        if (!root || !overlaps(o->send, N * n * esz, recv, n * esz)) poison(recv, n, o->dt);
        break;
    default: break;
    }
}

// After the run: an in-place reduce-scatter leaves the rest of its buffer undefined.
static void poison_leftovers(const CommOp *o) {
    size_t esz = dtype_size(o->dt), N = (size_t)rt.world, n = o->count;
    char *send = (char *)o->send, *slot = send + (size_t)rt.rank * n * esz;
    if (o->kind != COLL_REDUCE_SCATTER || o->recv != slot) return;
    poison(send, (size_t)rt.rank * n, o->dt);
    poison(slot + n * esz, (N - 1 - (size_t)rt.rank) * n, o->dt);
}

// What the caller was doing (comm_phase): "forward, layer 2", "optimizer", or "".
static void phase_text(const char *phase, int layer, char *buf, size_t len) {
    if (phase && layer >= 0) snprintf(buf, len, "%s, layer %d", phase, layer);
    else snprintf(buf, len, "%s", phase ? phase : "");
}

// One line naming a request: "all_gather #3 (forward, layer 2; 4.1 KiB)".
static void describe_slot(const Slot *s, char *buf, size_t len) {
    char where[64];
    phase_text(s->phase, s->layer, where, sizeof where);
    snprintf(buf, len, "%s #%llu (%s%s%s)", coll_name(s->op.kind), (unsigned long long)s->seq, where,
             where[0] ? "; " : "", human_bytes((double)comm_payload_bytes(&s->op)));
}

static void name_slot(const void *slot, char *buf, size_t len) { describe_slot(slot, buf, len); }

// Before the run (the caller is blocked in a wait): the input is still what it
// was at the launch, or the run stops with the reason.
// The same for its output, which the run writes (the poison at the launch
// wrote it all already).
static void output_of(const CommOp *o, void **p, size_t *bytes) {
    size_t esz = dtype_size(o->dt), N = (size_t)rt.world;
    int root = rt.rank == o->root;
    *p = o->recv;
    switch (o->kind) {
    case COLL_ALL_GATHER: *bytes = N * o->count * esz; break;
    case COLL_REDUCE: *bytes = root ? o->count * esz : 0; break;
    case COLL_ALL_REDUCE: case COLL_REDUCE_SCATTER: case COLL_BROADCAST: case COLL_SCATTER:
        *bytes = o->count * esz; break;
    default: *bytes = 0; break;
    }
}

// A freed buffer is named before it is read or written: in grading mode its
// pages are out of reach (mem), and the hash or the run would fault.
static void check_input(const Slot *s) {
    const void *p;
    void *out;
    size_t bytes, out_bytes;
    input_of(&s->op, &p, &bytes);
    output_of(&s->op, &out, &out_bytes);
    int was_freed = bytes && mem_freed_since(p, bytes, s->frees);
    char what[160];
    if (out_bytes && mem_freed_since(out, out_bytes, s->frees)) {
        describe_slot(s, what, sizeof what);
        fatal("comm: the output of %s was freed before the collective completed: a buffer belongs to the comm "
              "thread from the launch until comm_wait returns (a request never waited for, or waited for after "
              "the free?)", what);
    }
    if (!was_freed && input_hash(&s->op) == s->in_hash) return;
    describe_slot(s, what, sizeof what);
    fatal("comm: the input of %s %s before the collective completed: a buffer belongs to the comm thread from "
          "the launch until comm_wait returns", what, was_freed ? "was freed" : "was written");
}

// ----------------------------------------------------------------------------
// the comm thread

static CommRun run_slot(Slot *s) {
#ifdef ZC_CUDA
    if (rt.device == DEV_CUDA) return comm_run_staged(q.backend, &s->op, s->ready);
#endif
    return q.backend->run(&s->op);
}

// A request the thread may run now: in strict mode, only once it is waited for.
static int runnable(void) { return q.finished < q.head && (!q.strict || q.finished <= q.released); }

static void *comm_thread(void *arg) {
    (void)arg;
    pthread_mutex_lock(&q.lock);
    for (;;) {
        while (!runnable() && !q.stop) pthread_cond_wait(&q.work, &q.lock);
        if (!runnable()) break;  // stop requested and nothing left to run
        Slot *s = &q.slot[q.finished % QCAP];
        CommObserver observer = q.observer;
        int strict = q.strict;
        pthread_mutex_unlock(&q.lock);
        if (strict) check_input(s);
        p2p_begin(name_slot, s, strict);
        s->t_start = now_s();
        CommRun run = run_slot(s);
        s->t_end = now_s();
        p2p_begin(NULL, NULL, 0);
        if (strict) poison_leftovers(&s->op);
        if (observer) observer(s->op.kind, s->t_launch, s->t_start, s->t_end, comm_payload_bytes(&s->op));
        pthread_mutex_lock(&q.lock);
        account(s->metric ? &q.stats.metrics : &q.stats.kind[s->op.kind], &s->op, run);
        if (!s->metric && (unsigned)run.algo < ALGO_N) q.stats.algo[s->op.kind][run.algo]++;
        __atomic_store_n(&q.finished, q.finished + 1, __ATOMIC_RELEASE);  // comm_progress reads it unlocked
        pthread_cond_broadcast(&q.done);
    }
    pthread_mutex_unlock(&q.lock);
    return NULL;
}

void comm_init(void) {
    q.backend = &comm_backend_mpi;
    q.strict = getenv("ZC_GRADING") != NULL;
    q.stop = 0;
    if (pthread_create(&q.thread, NULL, comm_thread, NULL) != 0)
        fatal("comm_init: pthread_create failed");
    q.running = 1;
}

void comm_finalize(void) {
    if (!q.running) return;
    pthread_mutex_lock(&q.lock);
    q.stop = 1;
    q.released = q.head - 1;  // what was never waited for still runs
    pthread_cond_signal(&q.work);
    pthread_mutex_unlock(&q.lock);
    if (pthread_join(q.thread, NULL) != 0) fatal("comm_finalize: pthread_join failed");
    q.running = 0;
    for (size_t i = 0; i < NBACKENDS; i++) {
        if (backends[i]->release) backends[i]->release();
        if (backends[i]->close) backends[i]->close();
    }
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
            // What the old one keeps between calls goes, unless the new one keeps the same.
            if (q.backend->release && q.backend->release != backends[i]->release) q.backend->release();
            if (backends[i]->open) backends[i]->open();
            q.backend = backends[i];
            return 1;
        }
    return 0;
}

const char *comm_backend_name(void) { return q.backend->name; }
int comm_counts_sent(void) { return q.backend->counts_sent; }
void comm_staging_held(size_t *host, size_t *gpu) {
    *host = *gpu = 0;
#ifdef ZC_CUDA
    comm_staging_bytes(host, gpu);
#endif
}
void comm_release_buffers(void) {
    comm_wait(q.head - 1);
    if (q.backend->release) q.backend->release();
#ifdef ZC_CUDA
    comm_staging_free();
#endif
}
int comm_nodes(void) { return p2p_nodes(); }
int comm_ranks_per_node(void) { return p2p_per_node(); }
int comm_node_of(int rank) { return p2p_node_of(rank); }
const char *comm_node_name(int node) { return p2p_node_name(node); }
void comm_link(double *latency, double *per_byte) { p2p_link(latency, per_byte); }

void comm_set_strict(int on) {
    comm_wait(q.head - 1);  // what was launched before runs under the old rule
    pthread_mutex_lock(&q.lock);
    q.strict = on;
    pthread_mutex_unlock(&q.lock);
}

int comm_strict(void) { return q.strict; }

void comm_phase(const char *name, int layer) {
    pthread_mutex_lock(&q.lock);
    q.phase = name;
    q.layer = layer;
    pthread_mutex_unlock(&q.lock);
    mem_phase(name, layer);
}

// Without the lock: a watchdog asks, and must get an answer even from a
// process whose lock a runaway thread holds.
unsigned long comm_progress(void) {
    return (unsigned long)__atomic_load_n(&q.finished, __ATOMIC_ACQUIRE) + compute_marks();
}

CommBlock comm_blocked(int *from) {
    if (pthread_mutex_trylock(&q.lock) != 0) return COMM_FREE;
    int waiting = q.waiting >= 0 && q.finished <= q.waiting, idle = q.finished == q.head;
    pthread_mutex_unlock(&q.lock);
    if (!waiting && !idle) return COMM_FREE;  // the caller computes while the comm thread runs
    // Waiting, the message is the comm thread's; idle, the caller's own.
    *from = p2p_waits_for();
    if (*from >= 0) return COMM_BLOCKED_RECV;
    return waiting && comm_mpi_waits_for_all() ? COMM_BLOCKED_ALL : COMM_FREE;
}

void comm_describe(char *buf, size_t len) {
    char what[160] = "", where[64];
    int tries = 0;
    while (pthread_mutex_trylock(&q.lock) != 0)  // a second, then say so: the watchdog must not hang here
        if (++tries == 100) {
            snprintf(buf, len, "holds the communication queue's lock and does not let go (inside a comm_ call "
                     "that loops: a request number that is not one, or a count that is not)");
            return;
        } else usleep(10000);
    int waiting = q.waiting >= 0 && q.finished <= q.waiting, running = runnable();
    if (q.finished < q.head) describe_slot(&q.slot[q.finished % QCAP], what, sizeof what);
    phase_text(q.phase, q.layer, where, sizeof where);
    pthread_mutex_unlock(&q.lock);
    const char *in = where[0] ? "in " : "in no phase";
    char msg[160], running_p2p[160];
    p2p_describe(msg, sizeof msg);
    p2p_running(running_p2p, sizeof running_p2p);
    if (waiting && msg[0]) snprintf(buf, len, "waits in %s, %s", what, msg);
    else if (waiting) snprintf(buf, len, "waits in %s", what);
    else if (msg[0]) snprintf(buf, len, "is in %s, outside any collective, %s", running_p2p, msg);
    else if (running)
        snprintf(buf, len, "is not waiting (%s%s; %s runs meanwhile): it computes, or loops", in, where, what);
    else snprintf(buf, len, "is not in a collective (%s%s): it computes, or loops", in, where);
}

void comm_observe(CommObserver fn) {
    pthread_mutex_lock(&q.lock);
    q.observer = fn;
    pthread_mutex_unlock(&q.lock);
}

const char *comm_backends(void) {
    static char names[128];
    names[0] = '\0';
    for (size_t i = 0; i < NBACKENDS; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? " " : "",
                 backends[i]->name);
    return names;
}

// ----------------------------------------------------------------------------
// the counters

double comm_sent_bytes(const CommCount *c) { return (double)c->sent_xn / rt.world; }
double comm_inter_bytes(const CommCount *c) { return (double)c->inter_xn / rt.world; }

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
    memset(q.seq, 0, sizeof q.seq);
    pthread_mutex_unlock(&q.lock);
}

// ----------------------------------------------------------------------------
// requests

static CommReq enqueue(CommOp op, int metric) {
    if (!q.running) fatal("comm: collective %s before comm_init", coll_name(op.kind));
    int strict = q.strict;  // changed by the caller thread alone (comm_set_strict)
    if (strict) poison_outputs(&op);  // before the lock: the thread cannot run it yet
    uint64_t hash = strict ? input_hash(&op) : 0;
    pthread_mutex_lock(&q.lock);
    while (q.head - q.finished >= QCAP) {
        if (q.released < q.finished) {  // strict and full: the oldest must run to make room
            q.released = q.finished;
            pthread_cond_signal(&q.work);
        }
        pthread_cond_wait(&q.done, &q.lock);
    }
    Slot *slot = &q.slot[q.head % QCAP];
    slot->op = op;
    slot->metric = metric;
    slot->t_launch = now_s();
    slot->marks = compute_marks();
    slot->seq = ++q.seq[op.kind];
    slot->phase = q.phase;
    slot->layer = q.layer;
    slot->in_hash = hash;
    slot->frees = strict ? mem_frees() : 0;
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

// Called with the lock held. A request no one launched would be waited for
// forever: fatal, at once (-1 is "none": comm_wait(-1) returns at once).
static void check_launched(const char *fn, CommReq req) {
    if (req >= -1 && req < q.head) return;
    CommReq last = q.head - 1;
    pthread_mutex_unlock(&q.lock);
    fatal("%s: request %ld was never launched (requests so far: 0 to %ld)", fn, req, last);
}

void comm_wait(CommReq req) {
    unsigned long marks = compute_marks();
    pthread_mutex_lock(&q.lock);
    check_launched("comm_wait", req);
    for (; q.needed < req; q.needed++) q.slot[(q.needed + 1) % QCAP].needed = marks;
    if (q.released < req) {
        q.released = req;
        pthread_cond_signal(&q.work);
    }
    q.waiting = req;
    while (q.finished <= req) pthread_cond_wait(&q.done, &q.lock);
    q.waiting = -1;
    pthread_mutex_unlock(&q.lock);
}

int comm_test(CommReq req) {
    pthread_mutex_lock(&q.lock);
    check_launched("comm_test", req);
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
    o->waits++;
    o->covered += q.slot[req % QCAP].needed > q.slot[req % QCAP].marks;  // the first wait counts
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

