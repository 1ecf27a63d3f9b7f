// base: identity, fatal errors, rank-0 printing and timers.
#include "base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

Runtime rt = { 0, 1, 0, DEV_CPU, "zero-course" };

static void (*abort_hook)(void);

// ----------------------------------------------------------------------------
// errors

void base_set_abort(void (*abort_all)(void)) { abort_hook = abort_all; }

void fatal(const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "rank %d: %s\n", rt.rank, msg);
    fflush(stderr);
    if (abort_hook) abort_hook();
    exit(1);
}

// ----------------------------------------------------------------------------
// printing and time

void print0(const char *fmt, ...) {
    if (rt.rank != 0) return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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
