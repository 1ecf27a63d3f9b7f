// clock: the monotonic clock and the count of compute launched.
#include "clock.h"

#include <stdatomic.h>
#include <time.h>

double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static atomic_ulong marks;
void compute_mark(void) { atomic_fetch_add_explicit(&marks, 1, memory_order_relaxed); }
unsigned long compute_marks(void) { return atomic_load_explicit(&marks, memory_order_relaxed); }
