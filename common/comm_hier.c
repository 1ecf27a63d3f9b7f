// comm_hier: the hierarchical algorithm, for a cluster of nodes whose links
// between nodes are slower than those inside one (NCCL's choice across nodes).
// With K ranks on each of M nodes, an all-reduce is three rings:
//   1. a reduce-scatter inside each node: local rank l gets chunk l of the
//      node's sum;
//   2. an all-reduce across nodes of that chunk alone, among the M ranks that
//      share local index l (one per node, all K such rings at once);
//   3. an all-gather inside each node.
// Each rank sends 2(K-1)/K of the buffer inside its node and 2(M-1)/M of 1/K
// of it across nodes: the slow link carries 1/K of what a flat ring puts on
// it, and every rank uses its own share of it. Reduce-scatter and all-gather
// are the halves of the same: inside the node by local index, then across.
// Nodes are hosts, or emulated (--ranks-per-node); every node needs as many
// ranks as the others.
#include "base.h"
#include "comm_ring.h"
#include "exercise.h"

#include <string.h>

// ----------------------------------------------------------------------------
// the all-reduce

// In place: every rank ends with the sum (op) of every rank's n elements.
void hier_all_reduce(char *buf, size_t n, DType dt, RedOp op) {
    // EXERCISE lc1.7: the hierarchical all-reduce: inside the node, across nodes, inside again
    //| p2p_node() is this rank's node (K members, this rank member node.me) and
    //| p2p_cross() the ranks with this rank's local index, one per node (M
    //| members). Use the ring of comm_ring.h on each group: a reduce-scatter
    //| inside the node leaves chunk node.me (chunk_first / chunk_len over the
    //| node) summed over the node; an all-reduce across nodes makes that chunk
    //| the sum over every rank; an all-gather inside the node gives every rank
    //| every chunk. Only the middle step crosses nodes, and only with 1/K of the
    //| buffer.
    Group node = p2p_node(), cross = p2p_cross();
    size_t esz = dtype_size(dt), at = chunk_first(&node, n, node.me), len = chunk_len(&node, n, node.me);
    ring_reduce_scatter_inplace(&node, buf, n, dt, op);
    ring_all_reduce(&cross, buf + at * esz, len, dt, op);
    ring_all_gather_inplace(&node, buf, n, dt);
    // STUB: (void)buf, (void)n, (void)dt, (void)op;
    // END EXERCISE
}

// ----------------------------------------------------------------------------
// reduce-scatter and all-gather: the slices regrouped by local index

// Where rank q's slice sits in the regrouped buffer: local index major, so each
// local index's slices (one per node, in node order) are consecutive.
static size_t regrouped(int q) { return (size_t)p2p_local_of(q) * (size_t)p2p_nodes() + (size_t)p2p_node_of(q); }

// send: N slices of count; recv gets the sum of this rank's slice.
static void hier_reduce_scatter(const char *send, char *recv, size_t count, DType dt) {
    Group node = p2p_node(), cross = p2p_cross();
    size_t N = (size_t)rt.world, bytes = count * dtype_size(dt), M = (size_t)p2p_nodes();
    char *work = p2p_scratch(SCRATCH_WORK, N * bytes);  // the rings below use the lower slots
    for (int q = 0; q < rt.world; q++) memcpy(work + regrouped(q) * bytes, send + (size_t)q * bytes, bytes);
    // Inside the node: local rank l gets its index's M slices summed over the node.
    ring_reduce_scatter_inplace(&node, work, N * count, dt, OP_SUM);
    // Across nodes: the member on node j gets slice j of them, summed over nodes: its own.
    ring_reduce_scatter(&cross, work + (size_t)node.me * M * bytes, recv, count, dt);
}

// recv gets every rank's count elements of send, in rank order.
static void hier_all_gather(const char *send, char *recv, size_t count, DType dt) {
    Group node = p2p_node(), cross = p2p_cross();
    size_t N = (size_t)rt.world, bytes = count * dtype_size(dt), M = (size_t)p2p_nodes();
    char *work = p2p_scratch(SCRATCH_WORK, N * bytes);
    ring_all_gather(&cross, send, work + (size_t)node.me * M * bytes, count, dt);
    ring_all_gather_inplace(&node, work, N * count, dt);
    for (int q = 0; q < rt.world; q++) memcpy(recv + (size_t)q * bytes, work + regrouped(q) * bytes, bytes);
}

// ----------------------------------------------------------------------------
// the backend

static CommRun hier_run(const CommOp *o) {
    if (!p2p_per_node()) fatal("comm hier: the nodes hold different numbers of ranks");
    p2p_reset();
    switch (o->kind) {
    case COLL_ALL_REDUCE: hier_all_reduce(o->recv, o->count, o->dt, o->op); break;
    case COLL_REDUCE_SCATTER: hier_reduce_scatter(o->send, o->recv, o->count, o->dt); break;
    case COLL_ALL_GATHER: hier_all_gather(o->send, o->recv, o->count, o->dt); break;
    default: return hand_written_rooted(o, ALGO_HIER);
    }
    return counted_run(ALGO_HIER);
}

const CommBackend comm_backend_hier = { .name = "hier", .run = hier_run, .counts_sent = 1, .release = p2p_release };
