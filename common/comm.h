// comm: collectives for the stages. Every call goes to one communication thread
// per rank that runs queued collectives in order, like a CUDA stream: an async
// call enqueues and returns a request, a sync call enqueues and waits. Only that
// thread talks to MPI during training. Every call is counted when it completes
// (calls, payload, bytes this rank sent: what a hand-written backend really
// sent, the ring model's figure for a library) so the reports are measured.
#ifndef COMM_H
#define COMM_H

#include <stddef.h>
#include <stdint.h>

#include "comm_kinds.h"

typedef long CommReq;  // a ticket: requests complete in the order they were made

// Counts for one kind of collective. payload is the size of the full buffer the
// collective is about (the whole vector of an all-reduce, all N shards of a
// reduce-scatter or all-gather). sent_xn is the bytes this rank sent times N,
// so the theory stays an exact integer. For the mpi backend it is the ring
// model's: all-reduce 2(N-1)P, reduce-scatter / all-gather (N-1)P; broadcast and
// reduce (N-1)P and scatter (N-1)P/N, which for these rooted collectives is the
// total over ranks spread evenly. inter_xn: the part sent to other nodes (a
// hand-written backend's count; 0 for a library's).
typedef struct { uint64_t calls, payload, sent_xn, inter_xn; } CommCount;

typedef struct {
    CommCount kind[COLL_NKIND];  // training traffic
    CommCount metrics;           // scalar reductions for logging and reports
    uint64_t algo[COLL_NKIND][ALGO_N];  // training calls of each kind by the algorithm that ran
    long steps;                  // the training steps counted (progress_end sets it)
} CommStats;

// What a kind of request cost the caller, summed by comm_wait_timed: seconds it
// ran on the comm thread and the part of that before the caller began to wait
// (a figure of timing); and the waits, and how many requests had compute
// launched by the caller between their launch and the first wait that needed
// them (a fact of order: they had compute to hide under, whatever the load).
typedef struct {
    double time, hidden;
    long waits, covered;
} CommOverlap;

// Told of every finished collective (the trace registers one): its kind, when
// it was launched, started and ended (now_s clock), and its payload in bytes.
// Called on the comm thread.
typedef void (*CommObserver)(CollKind kind, double launch, double start, double end,
                             uint64_t payload);

// Starts the comm thread with the mpi backend (rt_init calls it); strict if
// ZC_GRADING is set in the environment.
void comm_init(void);
// Stops the comm thread (rt_finalize calls it); safe to call twice.
void comm_finalize(void);
// Selects the backend by name ("mpi"); returns 0 if this build has no such backend.
int comm_use(const char *name);
// Names of the backends this build has, space separated.
const char *comm_backends(void);
// The name of the backend in use ("mpi", "ring", "auto", ...).
const char *comm_backend_name(void);
// 1 if the backend in use counts the bytes it really sends (a hand-written
// one); 0 if its counts are the ring model's (a library's).
int comm_counts_sent(void);
// The nodes the ranks are on (by host, or emulated: rt_nodes), and how many
// ranks each holds (0 if they differ).
int comm_nodes(void);
int comm_ranks_per_node(void);
// The node rank r is on (0 to comm_nodes() - 1), and node j's host name (NULL
// where the nodes are emulated with --ranks-per-node).
int comm_node_of(int rank);
const char *comm_node_name(int node);
// The emulated link between nodes (ZC_LINK): extra seconds per message and per byte.
void comm_link(double *latency, double *per_byte);
// Bytes the staging buffers of a CUDA run hold now, page-locked host and GPU
// (part of comm_buffers; 0 without CUDA).
void comm_staging_held(size_t *host, size_t *gpu);
// After what is in flight, gives back what the backends keep between calls
// (scratch, staging); they grow again when next needed.
void comm_release_buffers(void);
// Registers the one observer of finished collectives (NULL: none).
void comm_observe(CommObserver fn);
// Strict (grading) mode, on or off, after what is in flight. In it a request
// runs only when it, or one after it, is waited for; the outputs that are not
// inputs hold poison (NaN; a pattern for integers) from the launch until the
// wait, and the rest of an in-place reduce-scatter's buffer after it; and an
// input written or freed between launch and wait stops the run, naming the
// request. So a use before the wait, a slice taken from the wrong place or an
// early free fails every time, on every backend, whatever the timing.
void comm_set_strict(int on);
// 1 in strict mode.
int comm_strict(void);
// What the caller does now (trace_phase calls it): a request remembers it.
void comm_phase(const char *name, int layer);
// A count that grows while this rank gets anywhere: collectives completed
// plus compute launched (a hang's detector watches it stand still).
unsigned long comm_progress(void);
// What holds this rank, for a watchdog that proves a deadlock (safe from any
// thread): COMM_BLOCKED_RECV, a receive from world rank *from (the caller's
// own, or the comm thread's while the caller waits for it); COMM_BLOCKED_ALL,
// one of MPI's collectives that no rank leaves before every rank is in it,
// while the caller waits for it; COMM_FREE, anything else (a thread computes,
// or sends, or is between messages). Read p2p's message counts before it.
typedef enum { COMM_FREE, COMM_BLOCKED_RECV, COMM_BLOCKED_ALL } CommBlock;
CommBlock comm_blocked(int *from);
// One line on what this rank's collectives do now, for a hang's report:
// "waits in all_gather #3 (forward, layer 2; 4.1 KiB)", or that the caller is
// not in a collective and where it is. Safe from any thread.
void comm_describe(char *buf, size_t len);

// In place: buf holds count elements on every rank.
void comm_all_reduce(void *buf, size_t count, DType dt, RedOp op);
// send holds N*recvcount elements; recv gets this rank's reduced slice (sum).
// In place when recv == send + rank*recvcount (the slice lands in its own slot,
// the rest of send is left undefined); otherwise send and recv must not overlap.
void comm_reduce_scatter(const void *send, void *recv, size_t recvcount, DType dt);
// recv gets N*sendcount elements; in place when send == recv + rank*sendcount.
void comm_all_gather(const void *send, void *recv, size_t sendcount, DType dt);
// buf (count elements) on every rank gets root's.
void comm_broadcast(void *buf, size_t count, DType dt, int root);
// recv (count elements) is written on root only.
void comm_reduce(const void *send, void *recv, size_t count, DType dt, RedOp op, int root);
// send (N*recvcount elements) is read on root only.
void comm_scatter(const void *send, void *recv, size_t recvcount, DType dt, int root);
// Returns when every rank has called it.
void comm_barrier(void);

// The same collectives, returning at once; the buffers belong to the comm
// thread until comm_wait says the request is done.
CommReq comm_all_reduce_async(void *buf, size_t count, DType dt, RedOp op);
CommReq comm_reduce_scatter_async(const void *send, void *recv, size_t recvcount, DType dt);
CommReq comm_all_gather_async(const void *send, void *recv, size_t sendcount, DType dt);
CommReq comm_broadcast_async(void *buf, size_t count, DType dt, int root);
CommReq comm_reduce_async(const void *send, void *recv, size_t count, DType dt, RedOp op, int root);
CommReq comm_scatter_async(const void *send, void *recv, size_t recvcount, DType dt, int root);
// Blocks until the request (and every one before it) is done; -1 (none) returns
// at once, and a request never launched is fatal (it would never be done).
void comm_wait(CommReq req);
// comm_wait, adding to o the time the request ran and the part of it under compute.
void comm_wait_timed(CommReq req, CommOverlap *o);
// 1 if the request is done, without blocking.
int comm_test(CommReq req);
// Start and end (now_s clock) of a finished request's run on the comm thread;
// valid until 1024 further requests have been made.
void comm_req_times(CommReq req, double *start, double *end);

// Scalar reductions outside the training traffic, counted under metrics.
// v[0..n) becomes its sum over the ranks.
void comm_metric_sum(double *v, int n);
// v[0..n) becomes its largest value over the ranks.
void comm_metric_max(double *v, int n);
// *v becomes the smallest over the ranks (a verdict: 0 on any rank, 0 on all).
void comm_agree_min(int *v);

// A copy of this rank's counts since the last reset.
CommStats comm_stats(void);
// Counts start again from zero (after set-up, before the steps counted).
void comm_reset_stats(void);
// Bytes sent per rank under the ring model, from a count.
double comm_sent_bytes(const CommCount *c);
// The part of them sent to other nodes.
double comm_inter_bytes(const CommCount *c);
// Sum over training kinds of the bytes sent per rank.
double comm_total_sent_bytes(const CommStats *s);

#endif
