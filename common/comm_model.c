// comm_model: each algorithm's critical path, step by step as the code in
// comm_ring.c, comm_tree.c, comm_rd.c and comm_hier.c runs it; the fit; the
// measured rules; the file that keeps both.
#include "comm_model.h"
#include "file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// ----------------------------------------------------------------------------
// steps

typedef struct {
    CommCost c;
    int N, K, cores;
} Path;

// How many ranks share a core of a node while `busy` ranks of all N work.
static double share(const Path *p, double busy) {
    double on_node = busy * p->K / p->N;
    return p->cores > 0 && on_node > p->cores ? on_node / p->cores : 1.0;
}

static void copy(Path *p, double bytes) { p->c.copied += share(p, p->N) * bytes; }

// One step of the path: a message of bytes, reduced bytes added after it, with
// `busy` ranks at work; it crosses nodes if any of the step's messages does.
static void step(Path *p, double bytes, double reduced, int crosses, double busy) {
    double s = share(p, busy);
    p->c.msgs += s;
    p->c.bytes += s * bytes;
    p->c.reduced += s * reduced;
    if (crosses) p->c.inter_msgs += 1, p->c.inter_bytes += bytes;
}

static int node(const Path *p, int r) { return r / p->K; }

// 1 if some pair (r, r + d), both ranks below hi, lies on two nodes.
static int pair_crosses(const Path *p, int d, int hi) {
    for (int r = 0; r + d < hi; r++)
        if (node(p, r) != node(p, r + d)) return 1;
    return 0;
}

static int ceil_lg(int N) {
    int k = 0;
    while ((1 << k) < N) k++;
    return k;
}

// ----------------------------------------------------------------------------
// the algorithms

// N-1 steps of n/N each (a ring's phase); every step crosses if the ring does.
static void ring_phase(Path *p, int members, double n, int reduce, int crosses) {
    for (int s = 0; s < members - 1; s++) step(p, n / members, reduce ? n / members : 0, crosses, p->N);
}

static void naive(Path *p, CollKind kind, double n) {
    int N = p->N, far = N - (p->K < N ? p->K : N);  // ranks off rank 0's node
    double in = kind == COLL_ALL_GATHER ? n / N : n, out = kind == COLL_REDUCE_SCATTER ? n / N : n;
    int reduce = kind != COLL_ALL_GATHER;
    for (int k = 1; k < N; k++) step(p, in, reduce ? in : 0, k >= N - far, 2);  // rank 0 and one other
    for (int k = 1; k < N; k++) step(p, out, 0, k >= N - far, 2);
}

// The ranks at work in a binomial tree's step of distance d: the pairs
// (r, r + d) with r a multiple of 2d.
static double tree_busy(int N, int d) {
    int pairs = 0;
    for (int r = 0; r + d < N; r += 2 * d) pairs++;
    return 2.0 * pairs;
}

static void tree(Path *p, CollKind kind, double n) {
    int N = p->N, L = ceil_lg(N);
    for (int k = 0; k < L; k++) {  // up: reduce, or gather (the root's child at step k sends 2^k slices)
        int d = 1 << k;
        double bytes = kind == COLL_ALL_GATHER ? n * (double)(d < N - d ? d : N - d) / N : n;
        step(p, bytes, kind == COLL_ALL_GATHER ? 0 : n, pair_crosses(p, d, N), tree_busy(N, d));
    }
    for (int k = L - 1; k >= 0; k--) {  // down: broadcast, or scatter
        int d = 1 << k;
        double bytes = kind == COLL_REDUCE_SCATTER ? n * (double)(d < N - d ? d : N - d) / N : n;
        step(p, bytes, 0, pair_crosses(p, d, N), tree_busy(N, d));
    }
}

// Recursive doubling and halving on the p virtual ranks, with the fold.
static void halving_doubling(Path *p, Algo algo, CollKind kind, double n) {
    int N = p->N, v = 1;
    while (2 * v <= N) v *= 2;
    int rem = N - v;
    // virtual rank w runs on real rank real(w); step d pairs w with w ^ d
    #define REAL(w) ((w) < rem ? 2 * (w) + 1 : (w) + rem)
    int fold_crosses = 0;
    for (int r = 0; r + 1 < 2 * rem; r += 2) fold_crosses |= node(p, r) != node(p, r + 1);
    if (rem) {
        double in = kind == COLL_ALL_GATHER ? n / N : n;
        step(p, in, kind == COLL_ALL_GATHER ? 0 : in, fold_crosses, 2 * rem);
    }
    int reduce_scatter = kind == COLL_REDUCE_SCATTER || (kind == COLL_ALL_REDUCE && algo == ALGO_RABENSEIFNER);
    int all_gather = kind == COLL_ALL_GATHER || (kind == COLL_ALL_REDUCE && algo == ALGO_RABENSEIFNER);
    for (int d = v / 2; reduce_scatter && d > 0; d >>= 1) {
        int crosses = 0;
        for (int w = 0; w < v; w++) crosses |= node(p, REAL(w)) != node(p, REAL(w ^ d));
        step(p, n * d / v, n * d / v, crosses, v);
    }
    for (int d = 1; d < v; d <<= 1) {
        if (!all_gather && !(kind == COLL_ALL_REDUCE && algo == ALGO_RD)) break;
        int crosses = 0;
        for (int w = 0; w < v; w++) crosses |= node(p, REAL(w)) != node(p, REAL(w ^ d));
        double bytes = all_gather ? n * d / v : n;
        step(p, bytes, all_gather ? 0 : n, crosses, v);
    }
    #undef REAL
    if (rem) step(p, kind == COLL_REDUCE_SCATTER ? n / N : n, 0, fold_crosses, 2 * rem);
}

static void hier(Path *p, CollKind kind, double n) {
    int K = p->K, M = p->N / p->K;
    if (kind != COLL_ALL_GATHER) ring_phase(p, K, n, 1, 0);             // reduce-scatter inside the node
    if (kind == COLL_ALL_REDUCE) ring_phase(p, M, n / K, 1, 1), ring_phase(p, M, n / K, 0, 1);
    if (kind == COLL_REDUCE_SCATTER) ring_phase(p, M, n / K, 1, 1);
    if (kind == COLL_ALL_GATHER) ring_phase(p, M, n / K, 0, 1);
    if (kind != COLL_REDUCE_SCATTER) ring_phase(p, K, n, 0, 0);           // all-gather inside the node
}

// The local copies each algorithm makes (comm_ring.c, comm_tree.c, comm_rd.c,
// comm_hier.c), beyond what it sends and reduces. An all-gather out of place
// copies its own slice into place first (the bench's is out of place).
static void copies(Path *p, Algo algo, CollKind kind, double n) {
    double N = p->N, slice = n / N;
    if (kind == COLL_ALL_GATHER) copy(p, slice);
    if (kind == COLL_REDUCE_SCATTER) {
        switch (algo) {
        case ALGO_RING: copy(p, (N + 1) * slice); break;          // the running sum: a slice each step
        case ALGO_NAIVE: copy(p, n); break;                       // rank 0's sum starts as its own
        case ALGO_TREE: case ALGO_RD: case ALGO_RABENSEIFNER: copy(p, n + slice); break;  // scratch, then the result
        case ALGO_HIER: copy(p, n + 2 * slice); break;            // regrouped; the cross ring's running sum
        default: break;
        }
    }
    if (kind == COLL_ALL_GATHER && algo == ALGO_HIER) copy(p, n);  // back to rank order
}

int comm_modelled(Algo algo, int N, int K) {
    if (N < 1 || K < 1 || N % K) return 0;
    switch (algo) {
    case ALGO_NAIVE: case ALGO_RING: case ALGO_TREE: case ALGO_RD: case ALGO_RABENSEIFNER: case ALGO_HIER: return 1;
    default: return 0;
    }
}

CommCost comm_cost(Algo algo, CollKind kind, double n, int N, int K, int cores) {
    Path p = { { 0, 0, 0, 0, 0, 0, 0 }, N, K > 0 && K <= N ? K : N, cores };
    p.c.call = share(&p, N);
    int M = N / p.K;
    switch (algo) {
    case ALGO_NAIVE: naive(&p, kind, n); break;
    case ALGO_RING:
        ring_phase(&p, N, n, kind != COLL_ALL_GATHER, M > 1);
        if (kind == COLL_ALL_REDUCE) ring_phase(&p, N, n, 0, M > 1);
        break;
    case ALGO_TREE: tree(&p, kind, n); break;
    case ALGO_RD: case ALGO_RABENSEIFNER: halving_doubling(&p, algo, kind, n); break;
    case ALGO_HIER: hier(&p, kind, n); break;
    default: break;
    }
    copies(&p, algo, kind, n);
    return p.c;
}

double comm_time(const CommCost *c, const CommFit *f, double link_alpha, double link_beta) {
    return f->call * c->call + f->alpha * c->msgs + f->beta * c->bytes + f->gamma * c->reduced +
           f->delta * c->copied + link_alpha * c->inter_msgs + link_beta * c->inter_bytes;
}

// ----------------------------------------------------------------------------
// fitting

// The terms of one row, in the order of CommFit's fields.
#define NTERMS 5
static void terms(const CommCost *c, double *x) {
    x[0] = c->call, x[1] = c->msgs, x[2] = c->bytes, x[3] = c->reduced, x[4] = c->copied;
}

// Least squares over the terms in `use` (a bit each) of the rows' times less
// the part `fixed` accounts for, each row weighed by 1/t: the normal equations,
// solved by Gaussian elimination. Returns the squared relative residual, or -1
// if a constant came out negative or undetermined.
static double solve_subset(const CommCost *c, const double *t, int n, unsigned use, const double *fixed,
                           double *theta) {
    double A[NTERMS][NTERMS + 1] = { { 0 } };
    int idx[NTERMS], k = 0;
    for (int j = 0; j < NTERMS; j++)
        if (use & (1u << j)) idx[k++] = j;
    for (int i = 0; i < n; i++) {
        double x[NTERMS], y = t[i];
        terms(&c[i], x);
        for (int j = 0; j < NTERMS; j++) y -= fixed[j] * x[j];
        for (int a = 0; a < k; a++) {
            for (int b = 0; b < k; b++) A[a][b] += x[idx[a]] * x[idx[b]] / (t[i] * t[i]);
            A[a][k] += x[idx[a]] * y / (t[i] * t[i]);
        }
    }
    for (int col = 0; col < k; col++) {  // elimination with partial pivoting
        int piv = col;
        for (int r = col + 1; r < k; r++)
            if (fabs(A[r][col]) > fabs(A[piv][col])) piv = r;
        if (fabs(A[piv][col]) < 1e-300) return -1;
        for (int j = 0; j <= k; j++) {
            double tmp = A[col][j];
            A[col][j] = A[piv][j], A[piv][j] = tmp;
        }
        for (int r = 0; r < k; r++) {
            if (r == col) continue;
            double f = A[r][col] / A[col][col];
            for (int j = col; j <= k; j++) A[r][j] -= f * A[col][j];
        }
    }
    memcpy(theta, fixed, NTERMS * sizeof *theta);
    for (int a = 0; a < k; a++) {
        theta[idx[a]] = A[a][k] / A[a][a];
        if (theta[idx[a]] < 0) return -1;
    }
    double res = 0;
    for (int i = 0; i < n; i++) {
        double x[NTERMS], p = 0;
        terms(&c[i], x);
        for (int j = 0; j < NTERMS; j++) p += theta[j] * x[j];
        res += (p - t[i]) * (p - t[i]) / (t[i] * t[i]);
    }
    return res;
}

static void unpack(const CommFit *f, double *x) {
    x[0] = f->call, x[1] = f->alpha, x[2] = f->beta, x[3] = f->gamma, x[4] = f->delta;
}

CommFit comm_fit(const CommCost *c, const double *t, int n, unsigned which, const CommFit *from, double *err) {
    double best = -1, theta[NTERMS], keep[NTERMS], fixed[NTERMS];
    unpack(from, fixed);
    for (int j = 0; j < NTERMS; j++)
        if (which & (1u << j)) fixed[j] = 0;
    memcpy(keep, fixed, sizeof keep);
    for (unsigned use = 1; use < 1u << NTERMS; use++) {  // every subset: the best fit with no negative constant
        if (use & ~which) continue;
        double res = solve_subset(c, t, n, use, fixed, theta);
        if (res >= 0 && (best < 0 || res < best)) {
            best = res;
            memcpy(keep, theta, sizeof keep);
        }
    }
    *err = best >= 0 && n > 0 ? sqrt(best / n) : -1;
    return (CommFit){ keep[0], keep[1], keep[2], keep[3], keep[4] };
}

// ----------------------------------------------------------------------------
// measured rules

Algo comm_rule_pick(const CommRules *r, CollKind kind, double bytes, int N) {
    Algo pick = ALGO_N;
    double best = 0, at = 0;
    for (int i = 0; r && i < r->n; i++) {
        const CommRule *u = &r->rule[i];
        if (u->kind != kind || u->N != N) continue;
        double d = fabs(log(bytes / u->bytes));
        if (pick == ALGO_N || d < best || (d == best && u->bytes < at)) pick = u->algo, best = d, at = u->bytes;
    }
    return pick;
}

int comm_rule_choose(const double *secs, const Algo *algo, int n) {
    int best = 0, lib = -1;
    for (int i = 0; i < n; i++) {
        if (secs[i] < secs[best]) best = i;
        if (algo[i] == ALGO_MPI && lib < 0) lib = i;
    }
    return lib >= 0 && secs[best] > (1 - COMM_RULE_LEAD) * secs[lib] ? lib : best;
}

const char *comm_rules_set(CommRules *r, CollKind kind, int N, const CommRule *add, int n) {
    int kept = 0;
    for (int i = 0; i < r->n; i++)
        if (r->rule[i].kind != kind || r->rule[i].N != N) r->rule[kept++] = r->rule[i];
    static char why[80];
    if (kept + n > COMM_MAX_RULES) {
        snprintf(why, sizeof why, "cost model fit: more than %d rules", COMM_MAX_RULES);
        return why;
    }
    for (int i = 0; i < n; i++) r->rule[kept + i] = add[i];
    r->n = kept + n;
    return NULL;
}

// ----------------------------------------------------------------------------
// the fit on disk

CommFit comm_fit_default(void) {
    // make bench-collectives on the development machine, 2 cores (lc1's README,
    // "The cost model"): the fit at N = 4.
    return (CommFit){ 8.27e-6, 6.72e-7, 9.17e-11, 7.50e-11, 6.10e-11 };
}

// The algorithms and kinds a rule may name: what auto chooses among on one node.
static int rule_algo(const char *name, Algo *a) {
    static const Algo ok[] = { ALGO_MPI, ALGO_NAIVE, ALGO_RING, ALGO_TREE, ALGO_RD, ALGO_RABENSEIFNER };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(name, algo_name(ok[i])) == 0) return *a = ok[i], 1;
    return 0;
}

static int rule_kind(const char *name, CollKind *k) {
    for (int i = COLL_ALL_REDUCE; i <= COLL_ALL_GATHER; i++)
        if (strcmp(name, coll_name((CollKind)i)) == 0) return *k = (CollKind)i, 1;
    return 0;
}

// One "rule KIND N BYTES ALGO" line into r; 0 if it is not one (or r is full,
// or the same kind, N and size came before).
static int parse_rule(const char *line, CommRules *r) {
    char word[8], kind[32], algo[32];
    int N, end = 0;
    double bytes;
    CommRule u;
    if (sscanf(line, "%7s %31s %d %lf %31s %n", word, kind, &N, &bytes, algo, &end) != 5 || line[end] != '\0' ||
        strcmp(word, "rule") || !rule_kind(kind, &u.kind) || !rule_algo(algo, &u.algo) || N < 1 || N > (1 << 20) ||
        !(bytes >= 1 && bytes <= 1e15) || bytes != floor(bytes) || r->n >= COMM_MAX_RULES)
        return 0;
    u.N = N, u.bytes = bytes;
    for (int i = 0; i < r->n; i++)
        if (r->rule[i].kind == u.kind && r->rule[i].N == N && r->rule[i].bytes == bytes) return 0;
    r->rule[r->n++] = u;
    return 1;
}

const char *comm_fit_read(const char *path, CommFit *f, CommRules *rules) {
    static char why[900];
    static CommRules unused;
    CommRules *r = rules ? rules : &unused;
    const char *err = file_check_input(path, "cost model fit");
    if (err) return err;
    FILE *in = fopen(path, "r");
    if (!in) {
        snprintf(why, sizeof why, "cannot open cost model fit '%s': %s", file_shown(path), strerror(errno));
        return why;
    }
    char line[256];
    CommFit got = { -1, -1, -1, -1, -1 };
    int lineno = 0;
    r->n = 0;
    while (fgets(line, sizeof line, in)) {
        char name[32];
        double v;
        int end = 0;
        size_t len = strlen(line);
        lineno++;
        if (line[0] == '#' && len < sizeof line - 1) continue;
        if (line[0] == '\n') continue;
        if (len && line[len - 1] == '\n') line[--len] = '\0';
        double *slot = NULL;
        if (len < sizeof line - 2 && strncmp(line, "rule ", 5) == 0 && parse_rule(line, r)) continue;
        if (len < sizeof line - 2 && sscanf(line, "%31s %lf %n", name, &v, &end) == 2 &&
            line[end] == '\0' && isfinite(v) && v >= 0 && v <= 1)
            slot = strcmp(name, "call") == 0 ? &got.call : strcmp(name, "alpha") == 0 ? &got.alpha :
                   strcmp(name, "beta") == 0 ? &got.beta : strcmp(name, "gamma") == 0 ? &got.gamma :
                   strcmp(name, "delta") == 0 ? &got.delta : NULL;
        if (!slot) {  // a long line, a trailing word, a name the model has not, a byte that is not text
            fclose(in);
            snprintf(why, sizeof why, "cost model fit '%s', line %d: expected 'NAME SECONDS' (NAME one of call, "
                     "alpha, beta, gamma, delta; SECONDS 0 to 1) or 'rule KIND N BYTES ALGO' (KIND all_reduce, "
                     "reduce_scatter or all_gather; ALGO mpi, naive, ring, tree, rd or rabenseifner; at most %d, "
                     "one per KIND, N and BYTES), got '%.60s'", file_shown(path), lineno, COMM_MAX_RULES,
                     file_shown(line));
            return why;
        }
        *slot = v;
    }
    fclose(in);
    if (got.call < 0 || got.alpha < 0 || got.beta < 0 || got.gamma < 0 || got.delta < 0) {
        snprintf(why, sizeof why, "cost model fit '%s': needs the lines call, alpha, beta, gamma and delta",
                 file_shown(path));
        return why;
    }
    *f = got;
    return NULL;
}

const char *comm_fit_write(const char *path, const CommFit *f, const CommRules *r, const char *comment) {
    AtomicFile w;
    const char *err = file_begin(&w, path, "cost model fit");
    if (err) return err;
    int bad = fprintf(w.f, "# %s\ncall %.6e\nalpha %.6e\nbeta %.6e\ngamma %.6e\ndelta %.6e\n", comment, f->call,
                      f->alpha, f->beta, f->gamma, f->delta) < 0;
    if (r && r->n)
        bad |= fprintf(w.f, "# rule KIND N BYTES ALGO: at N ranks on one node, ALGO is the one measured to take for a "
                            "KIND of BYTES (bench_comm --rules; auto takes the nearest size's)\n") < 0;
    for (int i = 0; r && i < r->n; i++)
        bad |= fprintf(w.f, "rule %s %d %.0f %s\n", coll_name(r->rule[i].kind), r->rule[i].N, r->rule[i].bytes,
                       algo_name(r->rule[i].algo)) < 0;
    if (bad) return file_fail(&w, errno);
    return file_commit(&w);
}

// BUILD/comm_fit for a program at BUILD/bin/NAME, or "" if the program's path
// cannot be read (no /proc) or is not that shape.
static const char *cached_fit_path(void) {
    static char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 16);
    if (n <= 0) return "";
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (!slash) return "";
    *slash = '\0';  // BUILD/bin
    slash = strrchr(path, '/');
    if (!slash || strcmp(slash, "/bin") != 0) return "";
    strcpy(slash, "/comm_fit");
    return path;
}

static const char *loaded_from;  // the last comm_fit_load's *from

const char *comm_fit_loaded_from(void) { return loaded_from; }

static const char *load(CommFit *f, CommRules *r, const char **from) {
    static char said[300];
    const char *env = getenv("ZC_COMM_FIT"), *cached;
    *f = comm_fit_default();
    if (r) r->n = 0;
    if (env && !*env) {
        *from = "built in (ZC_COMM_FIT is empty)";
        return NULL;
    }
    if (env) {
        snprintf(said, sizeof said, "ZC_COMM_FIT's, '%s'", file_shown(env));
        *from = said;
        return comm_fit_read(env, f, r);
    }
    struct stat st;
    if (*(cached = cached_fit_path()) && lstat(cached, &st) == 0) {  // there, or a link that is (even to nothing)
        static char why[600];
        if (S_ISLNK(st.st_mode) && access(cached, F_OK) != 0) {
            snprintf(why, sizeof why, "the fit make comm-fit keeps, '%s', is a link to nothing: make comm-fit "
                     "measures it again (or remove the link)", file_shown(cached));
            return why;
        }
        snprintf(said, sizeof said, "measured here by make comm-fit, '%s'", file_shown(cached));
        *from = said;
        return comm_fit_read(cached, f, r);
    }
    *from = "built in, measured on the course's development machine, not this one (make comm-fit measures "
            "this one)";
    return NULL;
}

const char *comm_fit_load(CommFit *f, CommRules *r, const char **from) {
    const char *err = load(f, r, from);
    loaded_from = err ? NULL : *from;
    return err;
}
