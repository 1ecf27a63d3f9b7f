// trace: events kept in memory per rank, up to a bound, and written by rank 0
// at the end, gathered a chunk at a time. The event list is bookkeeping of the
// tool, like mem's own table, so it lives outside mem (and outside the memory
// report); the gather buffers are mem's.
#include "trace.h"
#include "base.h"
#include "clock.h"
#include "comm.h"
#include "env.h"
#include "file.h"
#include "mem.h"
#include "print.h"
#include "rt.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Per rank: past this many bytes of events, new events are dropped (and
// counted); ZC_TRACE_LIMIT_KB sets another bound, for tests.
#define DEFAULT_LIMIT ((size_t)64 << 20)
// The bytes of each rank's events gathered at once when the trace is written.
#define GATHER_CHUNK ((size_t)1 << 18)

static struct {
    int on;
    double t0;               // time zero, agreed by a barrier
    char *text;              // this rank's events as JSON objects, comma separated
    size_t len, cap, limit;
    long dropped;            // events past the limit
    int phase_open;          // a "B" event is recorded on the compute track and not yet ended
    pthread_mutex_t lock;    // the comm thread adds events too
} tr = { .lock = PTHREAD_MUTEX_INITIALIZER };

static double us(double t) { return 1e6 * (t - tr.t0); }

// Appends one event (a JSON object) under the lock: dropped past the limit
// unless it must be kept (the "E" that closes a recorded "B"). Returns 1 if kept.
static int add(int must, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add(int must, const char *fmt, ...) {
    char ev[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(ev, sizeof ev, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof ev) fatal("trace: event too long");
    pthread_mutex_lock(&tr.lock);
    int keep = must || tr.len + (size_t)n + 2 <= tr.limit;
    if (keep && tr.len + (size_t)n + 3 > tr.cap) {
        size_t cap = tr.cap ? 2 * tr.cap : 1 << 16;
        while (cap < tr.len + (size_t)n + 3) cap *= 2;
        char *t = realloc(tr.text, cap);
        if (!t) fatal("trace: out of memory for %zu bytes of events", cap);
        tr.text = t;
        tr.cap = cap;
    }
    if (keep) {
        if (tr.len) tr.text[tr.len++] = ',', tr.text[tr.len++] = '\n';
        memcpy(tr.text + tr.len, ev, (size_t)n + 1);
        tr.len += (size_t)n;
    } else {
        tr.dropped++;
    }
    pthread_mutex_unlock(&tr.lock);
    return keep;
}

// A collective ran from launch to end (now_s clock): comm calls this, on its
// thread, once trace_open has registered it.
static void trace_collective(CollKind kind, double launch, double start, double end,
                             uint64_t bytes) {
    if (!tr.on) return;
    add(0, "{\"name\":\"%s\",\"cat\":\"comm\",\"ph\":\"X\",\"pid\":%d,\"tid\":1,\"ts\":%.3f,\"dur\":%.3f,"
        "\"args\":{\"payload_bytes\":%.0f,\"queued_us\":%.3f}}", coll_name(kind), rt.rank, us(launch),
        1e6 * (end - launch), (double)bytes, 1e6 * (start - launch));
}

void trace_open(const char *path) {
    agree_input(rt.rank == 0 ? file_check_output(path, "trace") : NULL);
    tr.limit = (size_t)env_number("ZC_TRACE_LIMIT_KB", DEFAULT_LIMIT >> 10) << 10;
    tr.dropped = 0;
    comm_barrier();
    tr.t0 = now_s();
    tr.on = 1;
    comm_observe(trace_collective);
    add(1, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank %d\"}}", rt.rank, rt.rank);
    add(1, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"compute\"}}", rt.rank);
    add(1, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":1,\"args\":{\"name\":\"communication\"}}",
        rt.rank);
}

void trace_phase(const char *name, int layer) {
    comm_phase(name, layer);  // a hang's report says where the caller was
    if (!tr.on) return;
    double t = us(now_s());
    if (tr.phase_open) add(1, "{\"ph\":\"E\",\"pid\":%d,\"tid\":0,\"ts\":%.3f}", rt.rank, t);
    tr.phase_open = 0;
    if (!name) return;
    if (layer >= 0)
        tr.phase_open = add(0, "{\"name\":\"%s %d\",\"cat\":\"compute\",\"ph\":\"B\",\"pid\":%d,\"tid\":0,"
                            "\"ts\":%.3f,\"args\":{\"layer\":%d}}", name, layer, rt.rank, t, layer);
    else
        tr.phase_open = add(0, "{\"name\":\"%s\",\"cat\":\"compute\",\"ph\":\"B\",\"pid\":%d,\"tid\":0,"
                            "\"ts\":%.3f}", name, rt.rank, t);
    MemStats m = mem_stats();
    add(0, "{\"name\":\"memory (bytes)\",\"ph\":\"C\",\"pid\":%d,\"ts\":%.3f,\"args\":{\"params\":%zu,\"grads\":%zu,"
        "\"optimizer\":%zu,\"activations\":%zu,\"comm_buffers\":%zu,\"workspace\":%zu}}", rt.rank, t,
        m.cur[MEM_PARAMS], m.cur[MEM_GRADS], m.cur[MEM_MASTER_PARAMS] + m.cur[MEM_ADAM_M] + m.cur[MEM_ADAM_V],
        m.cur[MEM_ACTIVATIONS], m.cur[MEM_COMM_BUFFERS], m.cur[MEM_WORKSPACE]);
}

// ----------------------------------------------------------------------------
// writing: in rounds, each rank's next whole events up to a chunk, all-gathered;
// rank 0 writes them (the format does not ask for any order between ranks)

// The next events of this rank's text from *at that fit in cap - 1 bytes, into
// out, zero-terminated; *at moves past them.
static void next_chunk(size_t *at, char *out, size_t cap) {
    size_t from = *at, to = from;
    while (to < tr.len) {  // whole events: they are separated by ",\n"
        const char *sep = memchr(tr.text + to, '\n', tr.len - to);
        size_t next = sep ? (size_t)(sep - tr.text) + 1 : tr.len;
        if (next - from > cap - 1 && to > from) break;
        if (next - from > cap - 1) fatal("trace: an event is longer than %zu bytes", cap);
        to = next;
    }
    size_t n = to - from;
    if (n && tr.text[from + n - 1] == '\n') n -= 2;  // without its ",\n"
    memcpy(out, tr.text + from, n);
    out[n] = '\0';
    *at = to;
}

const char *trace_write(const char *path) {
    trace_phase(NULL, 0);
    comm_barrier();  // every collective of every rank has been recorded
    comm_observe(NULL);
    pthread_mutex_lock(&tr.lock);
    tr.on = 0;
    pthread_mutex_unlock(&tr.lock);
    double dropped[1] = { (double)tr.dropped };
    comm_metric_sum(dropped, 1);
    AtomicFile out;
    const char *err = rt.rank == 0 ? file_begin(&out, path, "trace") : NULL;
    int ok = !err && (rt.rank != 0 || fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", out.f) >= 0);
    // Text, so host memory whatever the device; zeros end each rank's piece.
    char *mine = mem_alloc_host(MEM_COMM_BUFFERS, GATHER_CHUNK);
    char *all = mem_alloc_host(MEM_COMM_BUFFERS, GATHER_CHUNK * (size_t)rt.world);
    size_t at = 0;
    int first = 1;
    for (;;) {
        double left[1] = { (double)(tr.len - at) };
        comm_metric_max(left, 1);
        if (left[0] == 0) break;
        next_chunk(&at, mine, GATHER_CHUNK);
        comm_all_gather(mine, all, GATHER_CHUNK / 4, DT_I32);
        for (int r = 0; r < rt.world && rt.rank == 0 && ok; r++) {
            const char *text = all + (size_t)r * GATHER_CHUNK;
            if (*text) ok = fprintf(out.f, "%s%s", first ? "" : ",\n", text) >= 0, first = 0;
        }
    }
    if (rt.rank == 0 && ok && dropped[0] > 0)
        ok = fprintf(out.f, "%s{\"name\":\"trace truncated\",\"ph\":\"M\",\"pid\":0,\"args\":{\"dropped_events\":%.0f,"
                     "\"limit_bytes_per_rank\":%zu}}", first ? "" : ",\n", dropped[0], tr.limit) >= 0;
    if (rt.rank == 0 && !err) {
        if (ok) ok = fputs("\n]}\n", out.f) >= 0;
        err = ok ? file_commit(&out) : file_fail(&out, errno);
    }
    if (rt.rank == 0 && !err && dropped[0] > 0)
        print0("trace: %.0f events past the bound of %zu KiB of events per rank were dropped\n", dropped[0],
               tr.limit >> 10);
    mem_free(mine);
    mem_free(all);
    free(tr.text);
    tr.text = NULL;
    tr.len = tr.cap = 0;
    return err;
}
