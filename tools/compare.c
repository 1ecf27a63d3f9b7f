// compare: the course side by side, from what the stages printed. Reads the
// summary line (the last line of each stage's output; README, "What to look at
// in the output") from RUN_DIR/<stage>.log and the loss curve from RUN_DIR/<stage>.loss, prints one
// table, and writes two plots with gnuplot into PLOT_DIR (PNG and SVG):
// memory.* (model state per rank by category, measured, stacked per stage: the
// picture of the ZeRO paper's figure), peak.* (what each stage's peak is made
// of: the model state, what is in flight, and what ZeRO does not shard) and
// loss.* (every stage's loss curve, as a moving average).
//   build/bin/compare build/run build/plots
// A single process; no MPI. Bad input: one line on stderr, exit status 2.
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The course's stages in order: the Makefile's list (STAGES), passed in at compile time.
#ifndef ZC_STAGES
#error "compile with -DZC_STAGES='\"lc0_adam lc1_distributed_adam ...\"' (make does)"
#endif
#define MAX_STAGES 16

// The keys the table and plots need, in the order they are stored.
static const char *keys[] = { "ranks", "params", "model_state_formula", "model_state_bytes", "peak_bytes",
                              "comm_bytes_per_step", "step_ms", "final_loss", "mem_params", "mem_grads",
                              "mem_master_params", "mem_adam_m", "mem_adam_v", "peak_params", "peak_grads",
                              "peak_master_params", "peak_adam_m", "peak_adam_v", "peak_activations",
                              "peak_comm_buffers", "peak_data", "peak_workspace" };
#define NKEYS 22
enum { K_RANKS, K_PARAMS, K_FORMULA, K_STATE, K_PEAK, K_COMM, K_MS, K_LOSS, K_MEM,
       K_PEAK_OF = K_MEM + 5 };  // mem_*: the model state's five categories now; peak_*: every category's peak
enum { P_PARAMS, P_GRADS, P_MASTER, P_M, P_V, P_ACTS, P_BUFFERS, P_DATA, P_WORK };  // after K_PEAK_OF

typedef struct {
    char name[64];
    double v[NKEYS];
} Summary;

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "compare: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

// ----------------------------------------------------------------------------
// parsing

// Parses one summary line into s; returns NULL or what is wrong with it.
const char *parse_summary(const char *line, Summary *s) {
    static char why[256];
    char buf[2048];
    int have[NKEYS] = { 0 };
    memset(s, 0, sizeof *s);
    if (strncmp(line, "summary ", 8) != 0) return "does not start with 'summary '";
    snprintf(buf, sizeof buf, "%s", line + 8);
    for (char *tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n")) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1]) {
            snprintf(why, sizeof why, "'%s' is not key=value", tok);
            return why;
        }
        *eq = '\0';
        const char *val = eq + 1;
        if (strcmp(tok, "stage") == 0) {
            snprintf(s->name, sizeof s->name, "%s", val);
            continue;
        }
        for (int k = 0; k < NKEYS; k++) {
            if (strcmp(tok, keys[k]) != 0) continue;
            char *end;
            errno = 0;
            s->v[k] = strtod(val, &end);
            if (*end || errno || !isfinite(s->v[k])) {
                snprintf(why, sizeof why, "%s=%s is not a number", tok, val);
                return why;
            }
            have[k] = 1;
        }
    }
    if (!s->name[0]) return "no stage=";
    for (int k = 0; k < NKEYS; k++)
        if (!have[k]) {
            snprintf(why, sizeof why, "no %s=", keys[k]);
            return why;
        }
    return NULL;
}

// The last line of path that starts with "summary ", parsed; 0 if no file.
int read_log(const char *path, Summary *s) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[2048], last[2048] = "";
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "summary ", 8) == 0) snprintf(last, sizeof last, "%s", line);
    fclose(f);
    if (!last[0]) die("%s: no summary line (did the stage finish?)", path);
    const char *why = parse_summary(last, s);
    if (why) die("%s: malformed summary line: %s", path, why);
    return 1;
}

// ----------------------------------------------------------------------------
// output

void print_table(const Summary *s, int n) {
    printf("%-20s %5s %9s %14s %14s %11s %12s %9s %10s\n", "stage", "ranks", "params", "state_formula",
           "state_measured", "peak_B", "comm_B/step", "step_ms", "final_loss");
    for (int i = 0; i < n; i++)
        printf("%-20s %5.0f %9.0f %14.0f %14.0f %11.0f %12.0f %9.3f %10.6f\n", s[i].name, s[i].v[K_RANKS],
               s[i].v[K_PARAMS], s[i].v[K_FORMULA], s[i].v[K_STATE], s[i].v[K_PEAK], s[i].v[K_COMM], s[i].v[K_MS],
               s[i].v[K_LOSS]);
}

static FILE *open_or_fail(const char *dir, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) die("cannot write %s: %s", path, strerror(errno));
    return f;
}

// The loss curve as a trailing moving average over window steps (fewer at the
// start): the raw per-step loss is a band of noise in which six stages that
// follow one curve cannot be told apart. Reads "step loss" lines from in and
// writes "step mean" lines to out; returns the number of steps.
#define LOSS_WINDOW 100
long moving_average(FILE *in, FILE *out, int window) {
    double ring[LOSS_WINDOW], sum = 0;
    long n = 0, step;
    double loss;
    if (window > LOSS_WINDOW) window = LOSS_WINDOW;
    while (fscanf(in, "%ld %lf", &step, &loss) == 2) {
        if (n >= window) sum -= ring[n % window];
        ring[n % window] = loss;
        sum += loss;
        n++;
        fprintf(out, "%ld %.6f\n", step, sum / (double)(n < window ? n : window));
    }
    return n;
}

// RUN_DIR/<stage>.loss averaged into PLOT_DIR/<stage>.loss.avg; 0 if there is no loss log.
static int average_loss(const char *run_dir, const char *plot_dir, const char *stage) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.loss", run_dir, stage);
    FILE *in = fopen(path, "r");
    if (!in) return 0;
    snprintf(path, sizeof path, "%s.loss.avg", stage);
    FILE *out = open_or_fail(plot_dir, path);
    long n = moving_average(in, out, LOSS_WINDOW);
    fclose(in);
    if (fclose(out) != 0) die("cannot write %s/%s: %s", plot_dir, path, strerror(errno));
    return n > 0;
}

// What a stage's peak is made of, each category at its own peak: the model
// state it keeps, and on top of it what is only there for a while (full
// gradients in flight; comm buffers, which in lc4 and lc5 are the gathered
// layers; workspace, lc5's fp32 copies) or is not sharded at all (activations, data).
typedef struct { double state, grads_in_flight, buffers, acts, data, work; } PeakParts;
PeakParts peak_parts(const Summary *s) {
    const double *m = s->v + K_MEM, *p = s->v + K_PEAK_OF;
    PeakParts r;
    r.state = m[0] + m[1] + m[2] + m[3] + m[4];
    r.grads_in_flight = fmax(p[P_GRADS] - m[1], 0);
    r.acts = p[P_ACTS];
    r.buffers = p[P_BUFFERS];
    r.data = p[P_DATA];
    r.work = p[P_WORK];
    return r;
}

static void write_memory_data(const Summary *s, int n, const char *plot_dir) {
    const double mib = 1048576.0;
    FILE *d = open_or_fail(plot_dir, "memory.dat");
    fprintf(d, "# stage params grads master_params adam_m adam_v (MiB per rank, measured)\n");
    for (int i = 0; i < n; i++) {
        fprintf(d, "%s", s[i].name);
        for (int k = K_MEM; k < K_PEAK_OF; k++) fprintf(d, " %.6f", s[i].v[k] / mib);
        fprintf(d, "\n");
    }
    fclose(d);
    d = open_or_fail(plot_dir, "peak.dat");
    fprintf(d, "# stage model_state grads_in_flight comm_buffers activations data workspace peak "
               "(MiB per rank, each category at its own peak; peak: the total's)\n");
    for (int i = 0; i < n; i++) {
        PeakParts q = peak_parts(&s[i]);
        fprintf(d, "%s %.6f %.6f %.6f %.6f %.6f %.6f %.6f\n", s[i].name, q.state / mib, q.grads_in_flight / mib,
                q.buffers / mib, q.acts / mib, q.data / mib, q.work / mib, s[i].v[K_PEAK] / mib);
    }
    fclose(d);
}

void write_plots(const Summary *s, int n, const char *run_dir, const char *plot_dir) {
    write_memory_data(s, n, plot_dir);
    int have_loss[MAX_STAGES];
    for (int i = 0; i < n; i++) have_loss[i] = average_loss(run_dir, plot_dir, s[i].name);
    FILE *g = open_or_fail(plot_dir, "course.gp");
    fprintf(g, "# gnuplot script written by tools/compare; run from %s\n", plot_dir);
    for (int t = 0; t < 2; t++) {
        const char *term = t ? "svg size 960,540 noenhanced" : "png size 960,540 noenhanced";
        const char *ext = t ? "svg" : "png";
        fprintf(g, "reset\nset terminal %s\nset output 'memory.%s'\n", term, ext);
        fprintf(g, "set title 'Model state per rank, measured (MiB)'\nset style data histograms\n"
                   "set style histogram rowstacked\nset style fill solid 0.8 border -1\nset boxwidth 0.7\n"
                   "set xtics rotate by -20\nset key outside right\nset ylabel 'MiB per rank'\n"
                   "plot 'memory.dat' using 2:xtic(1) title 'params', '' using 3 title 'grads', "
                   "'' using 4 title 'master params', '' using 5 title 'Adam m', '' using 6 title 'Adam v'\n");
        fprintf(g, "reset\nset terminal %s\nset output 'peak.%s'\n", term, ext);
        fprintf(g, "set title 'What each peak is made of: every category at its own peak (the bar is at least the peak)'\n"
                   "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\n"
                   "set boxwidth 0.7\nset xtics rotate by -20\nset key below\nset ylabel 'MiB per rank'\n"
                   "plot 'peak.dat' using 2:xtic(1) title 'model state', '' using 3 title 'gradients in flight', "
                   "'' using 4 title 'comm buffers (lc4, lc5: gathered layers)', '' using 5 title 'activations', "
                   "'' using 6 title 'data', '' using 7 title 'workspace'\n");
        fprintf(g, "reset\nset terminal %s\nset output 'loss.%s'\n"
                   "set title 'Loss, moving average over %d steps, every stage'\n"
                   "set xlabel 'step'\nset ylabel 'loss'\nset key top right\nplot", term, ext, LOSS_WINDOW);
        int first = 1;
        for (int i = 0; i < n; i++) {
            if (!have_loss[i]) continue;
            fprintf(g, "%s '%s.loss.avg' using 1:2 with lines title '%s'", first ? "" : ",", s[i].name, s[i].name);
            first = 0;
        }
        if (first) fprintf(g, " 0 notitle");
        fprintf(g, "\n");
    }
    fclose(g);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && gnuplot course.gp 2>gnuplot.err", plot_dir);
    if (system(cmd) != 0) die("gnuplot failed (see %s/gnuplot.err); is gnuplot-nox installed?", plot_dir);
}

#ifndef COMPARE_TEST
int main(int argc, char **argv) {
    if (argc != 3) die("usage: compare RUN_DIR PLOT_DIR (the logs of make run, where to put the plots)");
    Summary s[MAX_STAGES];
    char stages[] = ZC_STAGES;
    int n = 0;
    char *rest = NULL;  // strtok_r: read_log tokenizes with strtok meanwhile
    for (char *stage = strtok_r(stages, " ", &rest); stage && n < MAX_STAGES; stage = strtok_r(NULL, " ", &rest)) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.log", argv[1], stage);
        if (read_log(path, &s[n])) n++;
    }
    if (n == 0) die("%s: no stage logs (run make run first)", argv[1]);
    print_table(s, n);
    write_plots(s, n, argv[1], argv[2]);
    printf("\nplots: %s/memory.png, %s/peak.png and %s/loss.png (and .svg)\n", argv[2], argv[2], argv[2]);
    return 0;
}
#endif
