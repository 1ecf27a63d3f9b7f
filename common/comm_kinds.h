// comm_kinds: the words the stages and the backends share about collectives:
// the reductions, the kinds of collective and the algorithms that run them,
// with their printed names (defined in comm_backend.c). comm.h gives them to
// the stages; comm_backend.h, what a backend implements, to the backends.
#ifndef COMM_KINDS_H
#define COMM_KINDS_H

#include "dtype.h"

typedef enum { OP_SUM, OP_MAX, OP_MIN } RedOp;

typedef enum {
    COLL_ALL_REDUCE, COLL_REDUCE_SCATTER, COLL_ALL_GATHER, COLL_BROADCAST,
    COLL_REDUCE, COLL_SCATTER, COLL_BARRIER, COLL_NKIND
} CollKind;

// The algorithms a collective can run with: each backend is one, but auto,
// which takes for each call the one the cost model predicts fastest.
typedef enum {
    ALGO_MPI, ALGO_NAIVE, ALGO_RING, ALGO_TREE, ALGO_RD, ALGO_RABENSEIFNER, ALGO_HIER, ALGO_NCCL, ALGO_N
} Algo;

// "all_reduce", "reduce_scatter", ...
const char *coll_name(CollKind k);
// "mpi", "ring", "rabenseifner", ...: an algorithm's name, which is its backend's.
const char *algo_name(Algo a);

#endif
