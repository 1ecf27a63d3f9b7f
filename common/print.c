// print: rank 0's printf and human-readable sizes.
#include "print.h"
#include "base.h"

#include <stdarg.h>
#include <stdio.h>

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
