// comm_auto: the backend that chooses, per call, the way Open MPI's tuned
// decision rules and NCCL's tuner pick an algorithm. On one node, where the
// fit's file holds rules measured at this N (make comm-fit), it runs what was
// measured fastest at the nearest size (Open MPI's own collective where no
// other led it clearly: comm_rule_choose); elsewhere it asks the cost model
// (comm_model) what every hand-written algorithm would take for this kind,
// size, N and node layout, and runs the fastest. The file is the one ZC_COMM_FIT names, the one make
// comm-fit measured for this build, or none (the built-in fit, no rules:
// comm_fit_load); rank 0 reads it and every rank takes rank 0's, so every rank
// makes the same choice, as it must: they all have to run the same algorithm.
#include "base.h"
#include "comm_model.h"
#include "comm_backend.h"
#include "comm_p2p.h"
#include "mpi_check.h"

#include <mpi.h>
#include <unistd.h>

static CommFit fit;
static CommRules rules;
static int cores;  // of this node: with more ranks than cores, every step is slower (comm_model)

static void auto_open(void) {
    static int opened;  // the fit is the run's: read and sent once
    if (opened) return;
    opened = 1;
    cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    double v[5];
    if (rt.rank == 0) {
        CommFit f;
        const char *from, *err = comm_fit_load(&f, &rules, &from);
        if (err) fatal_input("--comm auto: %s", err);  // ends every rank: they wait in the broadcast
        v[0] = f.call, v[1] = f.alpha, v[2] = f.beta, v[3] = f.gamma, v[4] = f.delta;
    }
    CHECK_MPI(MPI_Bcast(v, 5, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Bcast(&rules, (int)sizeof rules, MPI_BYTE, 0, MPI_COMM_WORLD));  // one program: one layout
    fit = (CommFit){ v[0], v[1], v[2], v[3], v[4] };
}

// The algorithm measured fastest for o here (one node, a rule at this N), else
// the one the model predicts fastest.
static Algo decide(const CommOp *o, double n) {
    static const Algo candidates[] = { ALGO_RING, ALGO_TREE, ALGO_RD, ALGO_RABENSEIFNER, ALGO_HIER, ALGO_NAIVE };
    int N = rt.world, K = p2p_per_node() ? p2p_per_node() : N;
    double la, lb, best = 0;
    Algo measured = p2p_nodes() < 2 ? comm_rule_pick(&rules, o->kind, n, N) : ALGO_N;
    if (measured != ALGO_N) return measured;
    p2p_link(&la, &lb);
    Algo pick = ALGO_RING;
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        Algo a = candidates[i];
        if (a == ALGO_HIER && (!p2p_per_node() || p2p_nodes() < 2)) continue;  // one node: it is the ring
        CommCost c = comm_cost(a, o->kind, n, N, K, cores);
        double t = comm_time(&c, &fit, la, lb);
        if (i == 0 || t < best) best = t, pick = a;
    }
    return pick;
}

// decide, remembered for the last size of each kind: within a run the choice
// depends on nothing else, a stage asks for the same sizes step after step,
// and deciding (a scan of the rules, a logarithm each) cost a few tenths of a
// microsecond a call, 2-4% of a small all-reduce that auto hands to Open MPI.
// One memory per thread: the comm thread runs the collectives, but a program
// may call a backend itself.
static Algo choose(const CommOp *o) {
    static _Thread_local struct { double n; Algo a; int set; } last[COLL_NKIND];
    double n = (double)comm_payload_bytes(o);
    if (!last[o->kind].set || last[o->kind].n != n) {
        last[o->kind].n = n, last[o->kind].a = decide(o, n);
        last[o->kind].set = 1;
    }
    return last[o->kind].a;
}

static const CommBackend *backend_of(Algo a) {
    switch (a) {
    case ALGO_TREE: return &comm_backend_tree;
    case ALGO_RD: return &comm_backend_rd;
    case ALGO_RABENSEIFNER: return &comm_backend_rabenseifner;
    case ALGO_HIER: return &comm_backend_hier;
    case ALGO_NAIVE: return &comm_backend_naive;
    case ALGO_MPI: return &comm_backend_mpi;  // sends what it does not say: counted by the ring model
    default: return &comm_backend_ring;
    }
}

static CommRun auto_run(const CommOp *o) {
    int chosen = o->kind == COLL_ALL_REDUCE || o->kind == COLL_REDUCE_SCATTER || o->kind == COLL_ALL_GATHER;
    return backend_of(chosen ? choose(o) : ALGO_RING)->run(o);
}

const CommBackend comm_backend_auto = { .name = "auto", .run = auto_run, .counts_sent = 1, .open = auto_open,
                                        .release = p2p_release };
