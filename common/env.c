// env: the ZC_* environment variables, their ranges, and their strict reading.
#include "env.h"
#include "file.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

// ----------------------------------------------------------------------------
// the table

typedef struct {
    const char *name;
    double lo, hi;            // a number in [lo, hi]; lo > hi: not a number (checked by its reader)
    const char *unit;         // how the refusal names the value; for a word: the words it may be
    int word;                 // 1: one of the words in unit, whole
    int decimal;              // 1: any finite number in [lo, hi], not only a whole one
} Var;

static const Var vars[] = {
    { "ZC_START_TIMEOUT_S", 1, 86400, "whole seconds", 0, 0 },
    { "ZC_HOST_MEM_MB", 1, 1e9, "whole MiB", 0, 0 },
    { "ZC_TRACE_LIMIT_KB", 1, 1e9, "whole KiB", 0, 0 },
    { "ZC_LINK", 1, 0, NULL, 0, 0 },
    { "ZC_COMM_FIT", 1, 0, NULL, 0, 0 },
    { "ZC_POOL_RELEASE", 0, 1, "0 or 1", 0, 0 },
    { "ZC_CKPT_KILL_AT", 1, 1e9, "a step", 0, 0 },
    { "ZC_GRADING", 1, 0, NULL, 0, 0 },
    { "ZC_GEMM", 1, 0, "openblas onednn", 1, 0 },
    { "ZC_TIME_SCALE", 0.01, 100, "a factor", 0, 1 },
    { "ZC_WATCHDOG_LOG", 1, 0, NULL, 0, 0 },
};
#define NVARS (int)(sizeof vars / sizeof vars[0])

const char *env_variable(int i) { return i >= 0 && i < NVARS ? vars[i].name : NULL; }

static const Var *find(const char *name) {
    for (int i = 0; i < NVARS; i++)
        if (strcmp(vars[i].name, name) == 0) return &vars[i];
    return NULL;
}

// ----------------------------------------------------------------------------
// reading

// 1 and *x if s is, whole, a number in [v->lo, v->hi] (a whole one unless
// v->decimal; never inf or nan, which strtod takes).
static int parse(const Var *v, const char *s, double *x) {
    char *end;
    errno = 0;
    double n = v->decimal ? strtod(s, &end) : (double)strtoll(s, &end, 10);
    if (end == s || *end || errno || isspace((unsigned char)s[0]) || !isfinite(n) || n < v->lo || n > v->hi) return 0;
    *x = n;
    return 1;
}

// 1 if s is, whole, one of the space-separated words.
static int one_of(const char *words, const char *s) {
    size_t n = strlen(s);
    if (strpbrk(s, " \t\n\r\v\f")) return 0;  // one word, not several
    for (const char *p = words; n && (p = strstr(p, s)) != NULL; p += n)
        if ((p == words || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
    return 0;
}

const char *env_check(void) {
    static char why[300];
    for (int i = 0; i < NVARS; i++) {
        const char *s = getenv(vars[i].name);
        double x;
        if (s && vars[i].word && !one_of(vars[i].unit, s)) {
            snprintf(why, sizeof why, "%s='%s': expected one of: %s", vars[i].name, file_shown(s), vars[i].unit);
            return why;
        }
        if (!s || vars[i].lo > vars[i].hi || parse(&vars[i], s, &x)) continue;
        snprintf(why, sizeof why, "%s='%s': expected %s in [%.15g, %.15g]", vars[i].name, file_shown(s), vars[i].unit,
                 vars[i].lo, vars[i].hi);
        return why;
    }
    return NULL;
}

double env_number(const char *name, double dflt) {
    const Var *v = find(name);
    const char *s = getenv(name);
    double x;
    return v && s && parse(v, s, &x) ? x : dflt;
}

uint64_t env_value_hash(int i) {
    const char *s = i >= 0 && i < NVARS ? getenv(vars[i].name) : NULL;
    return s ? XXH3_64bits(s, strlen(s)) : 0x5eedULL;  // unset: not the hash of any value
}
