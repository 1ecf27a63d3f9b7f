// ref: the reference runs of tests/ref_configs, as lc0 produced them (loss per
// step and the final model under $ZC_REF), for grading later stages against lc0.
#ifndef REF_H
#define REF_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/safetensors.h"
#include "../common/mlp.h"
#include "../common/rt.h"

#define REF_MAX 8
#define REF_MAX_STEPS 1000

typedef struct {
    char name[64];
    char *argv[64];            // "test" then the options of both fields
    int argc;
    char text[512];            // storage argv points into
    double loss[REF_MAX_STEPS];
    long steps;
    char model[512];           // path of lc0's final model
} RefRun;

static inline const char *ref_dir(void) {
    const char *d = getenv("ZC_REF");
    if (!d) fatal("ZC_REF is not set: run the suites through tests/run.sh, which makes the references");
    return d;
}

// Where a check writes files of its own: ZC_SCRATCH (the grader's and the runner's
// folder for this run, so that two grades at once never write the same file),
// else the references' folder.
static inline const char *scratch_dir(void) {
    const char *d = getenv("ZC_SCRATCH");
    return d && *d ? d : ref_dir();
}

// Splits "a b c" into argv (in place).
static inline void ref_split(RefRun *r, char *s) {
    for (char *tok = strtok(s, " \t\n"); tok && r->argc < 63; tok = strtok(NULL, " \t\n"))
        r->argv[r->argc++] = tok;
}

// Reads tests/ref_configs and each run's loss log; returns the number of runs.
static inline int ref_load(RefRun *runs) {
    FILE *f = fopen("tests/ref_configs", "r");
    if (!f) fatal("cannot open tests/ref_configs (run from the project root)");
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < REF_MAX) {
        if (line[0] == '#' || line[0] == '\n') continue;
        RefRun *r = &runs[n];
        memset(r, 0, sizeof *r);
        snprintf(r->text, sizeof r->text, "%s", line);
        char *bar = strchr(r->text, '|');
        if (!bar) fatal("tests/ref_configs: no | in '%s'", line);
        *bar = '\0';
        snprintf(r->name, sizeof r->name, "%.63s", r->text);
        char *bar2 = strchr(bar + 1, '|');
        if (bar2) *bar2 = ' ';
        r->argv[r->argc++] = "test";
        ref_split(r, bar + 1);
        r->argv[r->argc++] = "--sample";
        r->argv[r->argc++] = "0";
        r->argv[r->argc++] = "--log-every";
        r->argv[r->argc++] = "0";
        char path[512];
        snprintf(path, sizeof path, "%s/%s.loss", ref_dir(), r->name);
        FILE *lf = fopen(path, "r");
        if (!lf) fatal("missing reference %s (made by tests/run.sh)", path);
        long s;
        double v;
        while (fscanf(lf, "%ld %lf", &s, &v) == 2 && r->steps < REF_MAX_STEPS) r->loss[r->steps++] = v;
        fclose(lf);
        snprintf(r->model, sizeof r->model, "%s/%s.safetensors", ref_dir(), r->name);
        n++;
    }
    fclose(f);
    return n;
}

#endif
