// base: identity, fatal errors, rank-0 printing and timers.
#include "base.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

Runtime rt = { 0, 1, 0, DEV_CPU, "zero-course" };

static void (*abort_hook)(int status), (*cleanup_hook)(void);

// ----------------------------------------------------------------------------
// errors

void base_set_abort(void (*abort_all)(int status)) { abort_hook = abort_all; }
void base_on_fatal(void (*cleanup)(void)) { cleanup_hook = cleanup; }

static void __attribute__((noreturn)) die(int status, const char *fmt, va_list ap) {
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fflush(stdout);
    fprintf(stderr, "rank %d: %s\n", rt.rank, msg);
    fflush(stderr);
    if (cleanup_hook) cleanup_hook();
    if (abort_hook) abort_hook(status);
    exit(status);
}

void fatal(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    die(1, fmt, ap);
}

void fatal_input(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    die(2, fmt, ap);
}

// ----------------------------------------------------------------------------
// printing and time

const char *human_bytes(double bytes) {
    static char out[4][32];
    static int next;
    char *s = out[next++ % 4];
    if (bytes < 1024) snprintf(s, sizeof out[0], "%.0f B", bytes);
    else if (bytes < 1048576.0) snprintf(s, sizeof out[0], "%.1f KiB", bytes / 1024);
    else if (bytes < 1073741824.0) snprintf(s, sizeof out[0], "%.1f MiB", bytes / 1048576.0);
    else snprintf(s, sizeof out[0], "%.2f GiB", bytes / 1073741824.0);
    return s;
}

void print0(const char *fmt, ...) {
    if (rt.rank != 0) return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

void exercise_todo(const char *id) {
    static const char *told[64];
    static int ntold;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;  // the comm thread runs stubs too
    pthread_mutex_lock(&lock);
    int seen = 0;
    for (int i = 0; i < ntold && !seen; i++) seen = strcmp(told[i], id) == 0;
    if (!seen && ntold < 64) told[ntold++] = id;
    pthread_mutex_unlock(&lock);
    if (!seen && rt.rank == 0) fprintf(stderr, "exercise %s not done yet\n", id);
}

double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static atomic_ulong marks;
void compute_mark(void) { atomic_fetch_add_explicit(&marks, 1, memory_order_relaxed); }
unsigned long compute_marks(void) { return atomic_load_explicit(&marks, memory_order_relaxed); }

#define STEPTIMES 65536
static float steptimes[STEPTIMES];  // static: bookkeeping, not a model buffer
static long nsteptimes;

void steptime_record(double ms) { steptimes[nsteptimes++ % STEPTIMES] = (float)ms; }
void steptime_reset(void) { nsteptimes = 0; }

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

double steptime_median(void) {
    long n = nsteptimes < STEPTIMES ? nsteptimes : STEPTIMES;
    if (n == 0) return 0.0;
    static float sorted[STEPTIMES];
    memcpy(sorted, steptimes, (size_t)n * sizeof(float));
    qsort(sorted, (size_t)n, sizeof(float), cmp_float);
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}
