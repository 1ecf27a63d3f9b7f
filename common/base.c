// base: identity and fatal errors.
#include "base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
