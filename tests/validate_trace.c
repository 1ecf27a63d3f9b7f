// validate_trace FILE [RANKS]: exit 0 if FILE is valid JSON (a full recursive-
// descent check, RFC 8259), a Chrome trace with a traceEvents array, every
// (pid, tid) track's "B" and "E" events balanced and never closing more than
// it opened, and, given RANKS, compute and communication events from every rank.
// Events are one per line, as common/trace.c writes them. Used by test_cli.sh.
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *p, *end;

static void ws(void) { while (p < end && isspace((unsigned char)*p)) p++; }
static int value(int depth);

static int string(void) {
    if (p >= end || *p != '"') return 0;
    for (p++; p < end && *p != '"'; p++) {
        if ((unsigned char)*p < 0x20) return 0;
        if (*p == '\\') {
            p++;
            if (p >= end || !strchr("\"\\/bfnrtu", *p)) return 0;
            if (*p == 'u') {
                for (int i = 0; i < 4; i++)
                    if (++p >= end || !isxdigit((unsigned char)*p)) return 0;
            }
        }
    }
    if (p >= end) return 0;
    p++;
    return 1;
}

static int number(void) {
    const char *s = p;
    if (p < end && *p == '-') p++;
    if (p < end && *p == '0') p++;
    else if (p < end && isdigit((unsigned char)*p)) while (p < end && isdigit((unsigned char)*p)) p++;
    else return 0;
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !isdigit((unsigned char)*p)) return 0;
        while (p < end && isdigit((unsigned char)*p)) p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || !isdigit((unsigned char)*p)) return 0;
        while (p < end && isdigit((unsigned char)*p)) p++;
    }
    return p > s;
}

static int literal(const char *w) {
    size_t n = strlen(w);
    if ((size_t)(end - p) < n || strncmp(p, w, n)) return 0;
    p += n;
    return 1;
}

static int members(char close, int depth, int object) {
    ws();
    if (p < end && *p == close) { p++; return 1; }
    for (;;) {
        ws();
        if (object) {
            if (!string()) return 0;
            ws();
            if (p >= end || *p++ != ':') return 0;
        }
        if (!value(depth + 1)) return 0;
        ws();
        if (p < end && *p == ',') { p++; continue; }
        if (p < end && *p == close) { p++; return 1; }
        return 0;
    }
}

static int value(int depth) {
    ws();
    if (p >= end || depth > 64) return 0;
    if (*p == '{') { p++; return members('}', depth, 1); }
    if (*p == '[') { p++; return members(']', depth, 0); }
    if (*p == '"') return string();
    if (*p == 't') return literal("true");
    if (*p == 'f') return literal("false");
    if (*p == 'n') return literal("null");
    return number();
}

#define MAXP 1024

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: validate_trace FILE [RANKS]\n"); return 2; }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { fprintf(stderr, "validate_trace: cannot open %s\n", argv[1]); return 1; }
    static char buf[64 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = buf;
    end = buf + n;
    if (!value(0)) { fprintf(stderr, "validate_trace: not valid JSON near byte %ld\n", (long)(p - buf)); return 1; }
    ws();
    if (p != end) { fprintf(stderr, "validate_trace: trailing bytes after the JSON value\n"); return 1; }
    if (!strstr(buf, "\"traceEvents\":[")) { fprintf(stderr, "validate_trace: no traceEvents\n"); return 1; }
    static int open_[MAXP][2], compute[MAXP], comm[MAXP];
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        char *ph = strstr(line, "\"ph\":\""), *pid = strstr(line, "\"pid\":"), *tid = strstr(line, "\"tid\":");
        if (!ph || !pid) continue;
        int r = atoi(pid + 6), t = tid ? atoi(tid + 6) : 0;
        if (r < 0 || r >= MAXP || t < 0 || t > 1) { fprintf(stderr, "validate_trace: bad pid/tid\n"); return 1; }
        char kind = ph[6];
        if (kind == 'B') open_[r][t]++, compute[r]++;
        if (kind == 'E' && --open_[r][t] < 0) {
            fprintf(stderr, "validate_trace: rank %d track %d ends an event it never began\n", r, t);
            return 1;
        }
        if (kind == 'X' && t == 1) comm[r]++;
    }
    int ranks = argc > 2 ? atoi(argv[2]) : 0;
    for (int r = 0; r < MAXP; r++)
        for (int t = 0; t < 2; t++)
            if (open_[r][t]) { fprintf(stderr, "validate_trace: rank %d track %d leaves %d events open\n", r, t, open_[r][t]); return 1; }
    for (int r = 0; r < ranks; r++)
        if (!compute[r] || !comm[r]) {
            fprintf(stderr, "validate_trace: rank %d has %d compute and %d communication events\n", r, compute[r], comm[r]);
            return 1;
        }
    printf("validate_trace: %s is valid, balanced, %d ranks\n", argv[1], ranks);
    return 0;
}
