// comm_p2p: what the hand-written collectives are built from. Point-to-point
// messages over MPI, every byte counted (those to another node apart); groups
// of ranks (the world, this rank's node, the ranks that share this rank's
// index on every node); where each rank is (nodes by host, or emulated with
// --ranks-per-node); and the emulated link between nodes (ZC_LINK), which
// makes every message to another node pay a latency and a bandwidth cap.
#ifndef COMM_P2P_H
#define COMM_P2P_H

#include <stddef.h>
#include <stdint.h>

// Members 0..size-1; member i is world rank rank[i] (rank NULL: i itself).
typedef struct {
    int size, me;
    const int *rank;
} Group;

// Bytes this rank sent since p2p_reset, the part sent to other nodes, and the
// messages the emulated link delayed (those to other nodes, with a link set).
typedef struct { uint64_t sent, inter, delayed; } P2PCount;

// Where the ranks are. ranks_per_node > 0: emulated nodes of that many
// consecutive ranks; 0: one node per host. Collective over MPI, on the main
// thread with nothing in flight. Returns NULL or a one-line reason.
const char *p2p_set_nodes(int ranks_per_node);
// The emulated link between nodes, "inter:LATENCY,BANDWIDTH" (e.g.
// "inter:20us,1GB/s"; units s, ms, us, ns and B/s, KB/s, MB/s, GB/s), or NULL
// or "" for none. Returns NULL or a one-line reason.
const char *p2p_set_link(const char *spec);
// The link's extra seconds per message and per byte (0 without one).
void p2p_link(double *latency, double *per_byte);

int p2p_nodes(void);
// Ranks on every node, or 0 if the nodes differ in size.
int p2p_per_node(void);
int p2p_node_of(int rank);
// Node j's host name (its first rank's), or NULL where nodes are emulated.
const char *p2p_node_name(int node);
// A rank's index among its node's ranks.
int p2p_local_of(int rank);

Group p2p_world(void);
// This rank's node.
Group p2p_node(void);
// The ranks with this rank's local index, one per node, in node order.
Group p2p_cross(void);
// k modulo the group's size (k may be negative): a neighbour in a ring.
int p2p_mod(const Group *g, int k);

void p2p_reset(void);
P2PCount p2p_count(void);
// Messages this rank has completed, sent or received, since it started (never
// reset; safe to read from any thread).
unsigned long p2p_messages(void);

// Scratch for the hand-written collectives, kept from one call to the next
// (grow-only, host memory of the comm_buffers category), so that a large
// collective does not ask the system for fresh pages every call. Three slots,
// each one buffer: an algorithm that calls another gives it the lower ones.
enum { SCRATCH_TMP, SCRATCH_ACC, SCRATCH_WORK, P2P_SCRATCH };
void *p2p_scratch(int slot, size_t bytes);
// Gives the scratch back (on switching backends, and at the end).
void p2p_release(void);

// Writes into buf the name of what runs ("all_reduce #16 (256.0 KiB)").
typedef void (*P2PNamer)(const void *ctx, char *buf, size_t len);
// The collective the comm thread runs now, named by name(ctx, ...) only when a
// message needs it (a name formatted for every collective cost 0.6-0.9 us,
// a few percent of a small message's time); strict (grading): every message
// received must hold exactly the bytes the receiver expects, or the run stops
// saying both. name NULL after the run.
void p2p_begin(P2PNamer name, const void *ctx, int strict);
// A P2PNamer for a fixed text: ctx is the text.
void p2p_text(const void *ctx, char *buf, size_t len);
// What the comm thread is doing in point-to-point at this moment, for a
// watchdog (any thread): "sending 96 B to rank 1 and receiving 96 B from rank
// 2", or "" between messages.
void p2p_describe(char *buf, size_t len);
// The name of what p2p_begin named last into buf ("" after the run).
void p2p_running(char *buf, size_t len);
// For a watchdog that proves a deadlock (any thread, unlocked): the world rank
// this rank waits to receive from in the message it is in now, else -1; and,
// per world rank below P2P_TRACK, the messages this rank began to send to it
// and those it has received from it.
enum { P2P_TRACK = 64 };
int p2p_waits_for(void);
unsigned long p2p_sent_to(int rank);
unsigned long p2p_received_from(int rank);

// Sends out to member `to` and receives in from member `from` at once (no
// deadlock whatever the sizes); counted.
void send_recv(const Group *g, const void *out, size_t out_bytes, int to, void *in, size_t in_bytes, int from);
void send_to(const Group *g, const void *buf, size_t bytes, int to);
void recv_from(const Group *g, void *buf, size_t bytes, int from);

#endif
