// comm_ring: the ring algorithms over any group of ranks, for the backends
// written by hand (ring itself; the hierarchical one runs them inside a node and
// across nodes). Buffers are host memory; bytes are counted by comm_p2p.
#ifndef COMM_RING_H
#define COMM_RING_H

#include "comm_backend.h"
#include "comm_p2p.h"

// A buffer of n elements cut into g->size chunks that differ by one element at
// most: chunk k is [chunk_first(g, n, k), + chunk_len(g, n, k)).
static inline size_t chunk_first(const Group *g, size_t n, int k) { return n * (size_t)k / (size_t)g->size; }
static inline size_t chunk_len(const Group *g, size_t n, int k) {
    return chunk_first(g, n, k + 1) - chunk_first(g, n, k);
}

// In place on n elements: afterwards chunk g->me holds the sum (op) over the group.
void ring_reduce_scatter_inplace(const Group *g, char *buf, size_t n, DType dt, RedOp op);
// In place on n elements, where chunk g->me is complete: afterwards every chunk is.
void ring_all_gather_inplace(const Group *g, char *buf, size_t n, DType dt);
// The one then the other: every member holds the sum of all n elements.
void ring_all_reduce(const Group *g, char *buf, size_t n, DType dt, RedOp op);
// send: g->size slices of count; recv gets the sum of slice g->me (the API's form).
void ring_reduce_scatter(const Group *g, const char *send, char *recv, size_t count, DType dt);
// recv gets every member's count elements of send, in member order.
void ring_all_gather(const Group *g, const char *send, char *recv, size_t count, DType dt);

// What this rank sent since p2p_reset, as the collective's result: the end of
// every hand-written backend's run.
static inline CommRun counted_run(Algo algo) {
    P2PCount c = p2p_count();
    return (CommRun){ c.sent, c.inter, algo };
}

// Broadcast, reduce, scatter and barrier over the world, as every hand-written
// backend runs them (a chain around the ring; the root sends each its slice),
// with algo named in the result. The caller has called p2p_reset.
CommRun hand_written_rooted(const CommOp *o, Algo algo);

#endif
