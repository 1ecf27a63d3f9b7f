// comm_model: what a collective costs, as Thakur, Rabenseifner and Gropp
// (2005) write it: a message costs alpha, a byte sent beta, a byte reduced
// gamma, so each algorithm's time is a sum of those along the critical path,
// with a link between nodes adding its own latency and per-byte cost to the
// steps that cross it. Two terms more, because the code here has them: a
// constant per call (the hand-off to the comm thread, the same whatever the
// algorithm) and a cost per byte copied locally (the scratch copies that a
// reduce-scatter or all-gather out of place makes, which MPICH avoids with
// datatypes and the lecture's code does not). Pure arithmetic: bench_comm fits alpha, beta, gamma to
// measurements; --comm auto takes, for each call, the algorithm it predicts
// fastest, as Open MPI's decision rules and NCCL's tuner do.
#ifndef COMM_MODEL_H
#define COMM_MODEL_H

#include "comm_kinds.h"

// Fitted constants, in seconds: per call, per message, per byte sent, per byte
// reduced, per byte copied.
typedef struct { double call, alpha, beta, gamma, delta; } CommFit;

// The critical path of one collective: the calls, messages and bytes on it,
// bytes reduced and bytes copied, each counted times how many ranks share a
// core while it runs (at least 1: over shared memory every step is work for a
// core, and with more busy ranks than cores a step takes that many times
// longer; a tree step keeps fewer ranks busy than a ring step); and the
// messages and bytes that cross a node boundary, as they are (a wire's time,
// not a core's).
typedef struct { double call, msgs, bytes, reduced, copied, inter_msgs, inter_bytes; } CommCost;

// The path of algo running kind on a payload of n bytes (an all-reduce's
// vector; all N slices of a reduce-scatter or all-gather) at N ranks, K to a
// node (consecutive ranks; K = N: one node) with `cores` cores to a node. For
// the algorithms written here (not mpi or nccl, whose inside is not ours).
CommCost comm_cost(Algo algo, CollKind kind, double n, int N, int K, int cores);
// Seconds for that path, with the link between nodes adding link_alpha per
// message and link_beta per byte that crosses it (a wire's time: not shared).
double comm_time(const CommCost *c, const CommFit *f, double link_alpha, double link_beta);
// The algorithms comm_cost knows, and whether algo can run at this N and K.
int comm_modelled(Algo algo, int N, int K);

// The least-squares fit to measured times t[i] of paths c[i] (n of them), each
// weighed by 1/t so that small and large sizes count alike, of the constants
// in `which` (FIT_CALL | FIT_ALPHA ...); the others are kept from `from`. Every
// constant stays at 0 or above. *err: the root mean square of the relative errors.
enum { FIT_CALL = 1, FIT_ALPHA = 2, FIT_BETA = 4, FIT_GAMMA = 8, FIT_DELTA = 16, FIT_ALL = 31 };
CommFit comm_fit(const CommCost *c, const double *t, int n, unsigned which, const CommFit *from, double *err);
// The fit this machine had when the course was written (bench_comm --fit).
CommFit comm_fit_default(void);

// Measured decisions, kept in the fit's file beside the constants: at N ranks
// on one node, a collective of `kind` on a payload of `bytes` bytes ran
// fastest with `algo` (Open MPI's own, ALGO_MPI, unless another led it by
// COMM_RULE_LEAD), as make comm-fit measured it. Where rules exist for a kind and N, auto follows
// the nearest one and the model decides only elsewhere (other N, nodes): the
// model's error (20-40% here) is larger than many of the gaps it must decide,
// and a measured table is what Open MPI's tuned component reads from a site.
typedef struct { CollKind kind; int N; double bytes; Algo algo; } CommRule;
#define COMM_MAX_RULES 256
typedef struct { int n; CommRule rule[COMM_MAX_RULES]; } CommRules;

// The rule for a payload of `bytes` at N ranks: of kind's rules at N, the one
// whose size is nearest in ratio (a tie: the smaller); ALGO_N if there is none.
Algo comm_rule_pick(const CommRules *r, CollKind kind, double bytes, int N);
// Which of n candidates measured at one size becomes its rule: the fastest,
// unless Open MPI's own (algo ALGO_MPI) is among them and none is
// COMM_RULE_LEAD faster than it; an index into secs and algo. A rule is one
// measurement, and one configuration measured in another launch moves by as
// much: a smaller lead is as likely gone in the next run, and there the call
// auto must never lose to is the library's own.
#define COMM_RULE_LEAD 0.10
int comm_rule_choose(const double *secs, const Algo *algo, int n);
// Replaces r's rules for (kind, N) by `add`; NULL or a one-line reason (full).
const char *comm_rules_set(CommRules *r, CollKind kind, int N, const CommRule *add, int n);

// Reads a fit written by comm_fit_write, with its rules (r NULL: not wanted);
// NULL or a one-line reason.
const char *comm_fit_read(const char *path, CommFit *f, CommRules *r);
// Writes the fit (text: one "name value" per line, then one "rule KIND N BYTES
// ALGO" line per rule; r may be NULL); NULL or a one-line reason.
const char *comm_fit_write(const char *path, const CommFit *f, const CommRules *r, const char *comment);
// The fit --comm auto uses: the file ZC_COMM_FIT names (set but empty: the
// built-in one, no rules), else the one `make comm-fit` measured for this
// build (comm_fit in the folder above the program's bin/), else the built-in
// one. *from says which, for the report. NULL or a one-line reason.
const char *comm_fit_load(CommFit *f, CommRules *r, const char **from);
// The last comm_fit_load's *from in this process (NULL: none loaded), for the report.
const char *comm_fit_loaded_from(void);

#endif
