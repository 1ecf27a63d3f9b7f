// trace: events kept in memory per rank, gathered to rank 0 at the end.
// The event list is bookkeeping of the tool, like mem's own table, so it lives
// outside mem (and outside the memory report); the gather buffer is mem's.
#include "trace.h"
#include "base.h"
#include "comm.h"
#include "mem.h"
#include "rt.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    int on;
    double t0;               // time zero, agreed by a barrier
    char *text;              // this rank's events as JSON objects, comma separated
    size_t len, cap;
    int phase_open;          // an event is open on the compute track
    pthread_mutex_t lock;    // the comm thread adds events too
} tr = { .lock = PTHREAD_MUTEX_INITIALIZER };

static double us(double t) { return 1e6 * (t - tr.t0); }

// Appends one event (a JSON object) under the lock.
static void add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add(const char *fmt, ...) {
    char ev[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(ev, sizeof ev, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof ev) fatal("trace: event too long");
    pthread_mutex_lock(&tr.lock);
    if (tr.len + (size_t)n + 3 > tr.cap) {
        size_t cap = tr.cap ? 2 * tr.cap : 1 << 16;
        while (cap < tr.len + (size_t)n + 3) cap *= 2;
        char *t = realloc(tr.text, cap);
        if (!t) fatal("trace: out of memory for %zu bytes of events", cap);
        tr.text = t;
        tr.cap = cap;
    }
    if (tr.len) tr.text[tr.len++] = ',', tr.text[tr.len++] = '\n';
    memcpy(tr.text + tr.len, ev, (size_t)n + 1);
    tr.len += (size_t)n;
    pthread_mutex_unlock(&tr.lock);
}

// A collective ran from launch to end (now_s clock): comm calls this, on its
// thread, once trace_open has registered it.
static void trace_collective(CollKind kind, double launch, double start, double end,
                             uint64_t bytes) {
    if (!tr.on) return;
    add("{\"name\":\"%s\",\"cat\":\"comm\",\"ph\":\"X\",\"pid\":%d,\"tid\":1,\"ts\":%.3f,\"dur\":%.3f,"
        "\"args\":{\"payload_bytes\":%.0f,\"queued_us\":%.3f}}", coll_name(kind), rt.rank, us(launch),
        1e6 * (end - launch), (double)bytes, 1e6 * (start - launch));
}

void trace_open(const char *path) {
    static char reason[512];
    FILE *f = rt.rank == 0 ? fopen(path, "w") : NULL;
    if (rt.rank == 0 && !f) snprintf(reason, sizeof reason, "cannot write trace '%s': %s", path, strerror(errno));
    if (f) fclose(f);
    agree_input(rt.rank == 0 && !f ? reason : NULL);
    comm_barrier();
    tr.t0 = now_s();
    tr.on = 1;
    comm_observe(trace_collective);
    add("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank %d\"}}", rt.rank, rt.rank);
    add("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"compute\"}}", rt.rank);
    add("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":1,\"args\":{\"name\":\"communication\"}}",
        rt.rank);
}

void trace_phase(const char *name, int layer) {
    if (!tr.on) return;
    double t = us(now_s());
    if (tr.phase_open) add("{\"ph\":\"E\",\"pid\":%d,\"tid\":0,\"ts\":%.3f}", rt.rank, t);
    tr.phase_open = name != NULL;
    if (!name) return;
    if (layer >= 0)
        add("{\"name\":\"%s %d\",\"cat\":\"compute\",\"ph\":\"B\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,"
            "\"args\":{\"layer\":%d}}", name, layer, rt.rank, t, layer);
    else
        add("{\"name\":\"%s\",\"cat\":\"compute\",\"ph\":\"B\",\"pid\":%d,\"tid\":0,\"ts\":%.3f}", name, rt.rank, t);
    MemStats m = mem_stats();
    add("{\"name\":\"memory (bytes)\",\"ph\":\"C\",\"pid\":%d,\"ts\":%.3f,\"args\":{\"params\":%zu,\"grads\":%zu,"
        "\"optimizer\":%zu,\"activations\":%zu,\"comm_buffers\":%zu}}", rt.rank, t, m.cur[MEM_PARAMS],
        m.cur[MEM_GRADS], m.cur[MEM_MASTER_PARAMS] + m.cur[MEM_ADAM_M] + m.cur[MEM_ADAM_V],
        m.cur[MEM_ACTIVATIONS], m.cur[MEM_COMM_BUFFERS]);
}

// ----------------------------------------------------------------------------
// writing: every rank's text, padded to the longest, all-gathered

const char *trace_write(const char *path) {
    static char reason[512];
    trace_phase(NULL, 0);
    comm_barrier();  // every collective of every rank has been recorded
    comm_observe(NULL);
    pthread_mutex_lock(&tr.lock);
    tr.on = 0;
    pthread_mutex_unlock(&tr.lock);
    double longest[1] = { (double)tr.len + 1 };
    comm_metric_max(longest, 1);
    size_t words = ((size_t)longest[0] + 3) / 4, bytes = 4 * words;
    // Text, so host memory whatever the device; zeros end each rank's string.
    char *mine = mem_alloc_host(MEM_COMM_BUFFERS, bytes);
    char *all = mem_alloc_host(MEM_COMM_BUFFERS, bytes * (size_t)rt.world);
    memset(mine, 0, bytes);
    if (tr.len) memcpy(mine, tr.text, tr.len);
    comm_all_gather(mine, all, words, DT_I32);
    const char *err = NULL;
    if (rt.rank == 0) {
        FILE *f = fopen(path, "w");
        int ok = f != NULL;
        if (ok) ok = fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f) >= 0;
        for (int r = 0; r < rt.world && ok; r++) {
            const char *text = all + (size_t)r * bytes;
            if (*text) ok = fprintf(f, "%s%s", r ? ",\n" : "", text) >= 0;
        }
        if (ok) ok = fputs("\n]}\n", f) >= 0;
        if (f && fclose(f) != 0) ok = 0;
        if (!ok) {
            snprintf(reason, sizeof reason, "cannot write trace '%s': %s", path, strerror(errno));
            err = reason;
        }
    }
    mem_free(mine);
    mem_free(all);
    free(tr.text);
    tr.text = NULL;
    tr.len = tr.cap = 0;
    return err;
}
