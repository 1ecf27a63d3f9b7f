// comm_p2p: counted point-to-point, groups, nodes and the emulated link. The
// tables of where ranks are hold a few ints per rank: bookkeeping, like mem's
// own table, so they live outside mem (and outside the memory report).
#include "comm_p2p.h"
#include "base.h"
#include "clock.h"
#include "file.h"
#include "mem.h"
#include "mpi_check.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#define TAG 7001
#define NODE_NAME 64  // a host name as the reports show it (longer ones are cut)

static struct {
    int *node_of, *local_of;      // [world] each
    int *node_ranks, *cross_ranks; // this rank's node; the ranks of its local index
    int nodes, per_node, node_size;
    char (*names)[NODE_NAME];     // [nodes]: each node's host name (by host), or NULL (emulated)
    double latency, per_byte;     // the emulated link (0: none)
    P2PCount count;
    char *scratch[P2P_SCRATCH];
    size_t scratch_bytes[P2P_SCRATCH];
} p;

// ----------------------------------------------------------------------------
// where the ranks are

static int *table(int n) {
    int *t = realloc(NULL, (size_t)(n > 0 ? n : 1) * sizeof(int));
    if (!t) fatal("comm p2p: out of memory for a table of %d ranks", n);
    return t;
}

// Node of every rank by host: the world rank of each node's first rank, ranked.
static void nodes_by_host(void) {
    MPI_Comm node;
    int local = 0, lead = rt.rank;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    CHECK_MPI(MPI_Comm_rank(node, &local));
    CHECK_MPI(MPI_Bcast(&lead, 1, MPI_INT, 0, node));
    CHECK_MPI(MPI_Comm_free(&node));
    int *leads = table(rt.world), *ahead = table(rt.world);
    CHECK_MPI(MPI_Allgather(&lead, 1, MPI_INT, leads, 1, MPI_INT, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Allgather(&local, 1, MPI_INT, p.local_of, 1, MPI_INT, MPI_COMM_WORLD));
    for (int q = 0, k = 0; q < rt.world; q++) ahead[q] = k, k += leads[q] == q;  // leaders before rank q
    for (int r = 0; r < rt.world; r++) p.node_of[r] = ahead[leads[r]];  // a node's index: its leader's rank among them
    // Each node's name, for the reports: its leader's host name.
    char mine[MPI_MAX_PROCESSOR_NAME] = "", (*all)[NODE_NAME] = realloc(NULL, (size_t)rt.world * NODE_NAME);
    int len = 0;
    if (!all) fatal("comm p2p: out of memory for the names of %d ranks' hosts", rt.world);
    CHECK_MPI(MPI_Get_processor_name(mine, &len));
    char cut[NODE_NAME];
    snprintf(cut, sizeof cut, "%.*s", (int)sizeof cut - 1, mine);  // a longer name is cut, on purpose
    CHECK_MPI(MPI_Allgather(cut, NODE_NAME, MPI_CHAR, all, NODE_NAME, MPI_CHAR, MPI_COMM_WORLD));
    for (int r = 0, k = 0; r < rt.world; r++)
        if (leads[r] == r) memmove(all[k++], all[r], NODE_NAME);  // in rank order, so k <= r
    p.names = all;
    free(leads);
    free(ahead);
}

const char *p2p_set_nodes(int ranks_per_node) {
    static char why[160];
    int N = rt.world;
    if (ranks_per_node > 0 && N % ranks_per_node) {
        snprintf(why, sizeof why, "nodes of %d ranks: %d does not divide the %d ranks", ranks_per_node, ranks_per_node,
                 N);
        return why;
    }
    free(p.node_of);
    free(p.local_of);
    free(p.node_ranks);
    free(p.cross_ranks);
    free(p.names);
    p.names = NULL;
    p.node_of = table(N);
    p.local_of = table(N);
    if (ranks_per_node > 0)
        for (int r = 0; r < N; r++) p.node_of[r] = r / ranks_per_node, p.local_of[r] = r % ranks_per_node;
    else
        nodes_by_host();
    p.nodes = 0;
    for (int r = 0; r < N; r++)
        if (p.node_of[r] + 1 > p.nodes) p.nodes = p.node_of[r] + 1;
    int mine = p.node_of[rt.rank], me = p.local_of[rt.rank], *size = table(p.nodes);
    p.node_ranks = table(N);
    p.cross_ranks = table(p.nodes);
    p.node_size = 0;
    for (int j = 0; j < p.nodes; j++) p.cross_ranks[j] = -1, size[j] = 0;
    for (int r = 0; r < N; r++) {
        if (p.node_of[r] == mine) p.node_ranks[p.node_size++] = r;
        if (p.local_of[r] == me) p.cross_ranks[p.node_of[r]] = r;
        size[p.node_of[r]]++;
    }
    p.per_node = N / p.nodes;  // if every node holds as many; else 0
    for (int j = 0; j < p.nodes; j++)
        if (size[j] != p.per_node) p.per_node = 0;
    free(size);
    return NULL;
}

int p2p_nodes(void) { return p.nodes; }
int p2p_per_node(void) { return p.per_node; }
int p2p_node_of(int rank) { return p.node_of ? p.node_of[rank] : 0; }
const char *p2p_node_name(int node) { return p.names && node >= 0 && node < p.nodes ? p.names[node] : NULL; }
int p2p_local_of(int rank) { return p.local_of ? p.local_of[rank] : rank; }

Group p2p_world(void) { return (Group){ rt.world, rt.rank, NULL }; }

Group p2p_node(void) { return (Group){ p.node_size, p.local_of[rt.rank], p.node_ranks }; }

Group p2p_cross(void) { return (Group){ p.nodes, p.node_of[rt.rank], p.cross_ranks }; }

int p2p_mod(const Group *g, int k) { return ((k % g->size) + g->size) % g->size; }

// ----------------------------------------------------------------------------
// the emulated link

// A number with a unit from units (name, factor), e.g. "20us"; -1 if none fits.
static double with_unit(const char *s, const char *const *units, const double *factor) {
    char *end;
    double x = strtod(s, &end);
    if (end == s || !(x >= 0) || !isfinite(x) || (unsigned char)s[0] <= ' ') return -1;  // no leading space
    for (int i = 0; units[i]; i++)
        if (strcmp(end, units[i]) == 0) return x * factor[i];
    return -1;
}

const char *p2p_set_link(const char *spec) {
    static char why[200];
    p.latency = p.per_byte = 0;
    if (!spec || !*spec) return NULL;
    static const char *const times[] = { "s", "ms", "us", "ns", NULL }, *const rates[] = { "B/s", "KB/s", "MB/s",
                                                                                         "GB/s", NULL };
    static const double tf[] = { 1, 1e-3, 1e-6, 1e-9 }, rf[] = { 1, 1e3, 1e6, 1e9 };
    char copy[128], *comma;
    snprintf(copy, sizeof copy, "%s", spec);
    double lat = -1, bw = -1;
    if (strncmp(copy, "inter:", 6) == 0 && (comma = strchr(copy + 6, ','))) {
        *comma = '\0';
        lat = with_unit(copy + 6, times, tf);
        bw = with_unit(comma + 1, rates, rf);
    }
    if (strlen(spec) >= sizeof copy || lat < 0 || lat > 1 || !(bw > 0)) {
        snprintf(why, sizeof why, "ZC_LINK='%.60s': expected inter:LATENCY,BANDWIDTH, e.g. inter:20us,1GB/s "
                 "(latency 0 to 1 s, bandwidth above 0 B/s)", file_shown(spec));
        return why;
    }
    p.latency = lat;
    p.per_byte = 1.0 / bw;
    return NULL;
}

void p2p_link(double *latency, double *per_byte) {
    *latency = p.latency;
    *per_byte = p.per_byte;
}

// A message of bytes to world rank `to` on another node leaves only after the
// link's latency and its bytes at the link's bandwidth. A sleep wakes up tens
// of microseconds late, so it covers all but the last 200 us, and the rest is
// waited out yielding the core to whoever needs it: to within microseconds.
static void cross_link(int to, size_t bytes) {
    if (p.latency == 0 && p.per_byte == 0) return;
    if (p2p_node_of(to) == p2p_node_of(rt.rank)) return;
    p.count.delayed++;
    double until = now_s() + p.latency + (double)bytes * p.per_byte, sleep_to = until - 200e-6;
    if (sleep_to > now_s()) {
        struct timespec ts = { (time_t)sleep_to, (long)((sleep_to - (double)(time_t)sleep_to) * 1e9) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {}
    }
    while (now_s() < until) sched_yield();
}

// ----------------------------------------------------------------------------
// counted messages

void p2p_reset(void) { p.count = (P2PCount){ 0, 0, 0 }; }

// Whole 8-byte words: a scratch first sized in floats holds doubles later,
// and grading mode starts a block of 4n + 4 bytes only 4-aligned (mem).
void *p2p_scratch(int slot, size_t bytes) {
    bytes = (bytes + 7) / 8 * 8;
    if (bytes > p.scratch_bytes[slot]) {
        mem_free(p.scratch[slot]);
        p.scratch[slot] = mem_alloc_host(MEM_COMM_BUFFERS, bytes);
        p.scratch_bytes[slot] = bytes;
    }
    return p.scratch[slot];
}

void p2p_release(void) {
    for (int s = 0; s < P2P_SCRATCH; s++) {
        mem_free(p.scratch[s]);
        p.scratch[s] = NULL;
        p.scratch_bytes[s] = 0;
    }
}
P2PCount p2p_count(void) { return p.count; }

static int bytes_int(size_t bytes) {
    if (bytes > INT_MAX) fatal("comm p2p: a message of %zu bytes exceeds the MPI int limit", bytes);
    return (int)bytes;
}

static int world_rank(const Group *g, int member) { return g->rank ? g->rank[member] : member; }

// The collective in progress (written by the comm thread alone) and the
// message it is in (written by the comm thread, read by a watchdog).
static struct {
    _Atomic P2PNamer name;      // read by a watchdog: set after ctx, cleared first
    const void *_Atomic ctx;
    int strict;
} run;
enum { IN_NONE, IN_SEND, IN_RECV, IN_BOTH };
static struct {
    _Atomic int kind, to, from;
    _Atomic size_t out, in;
} in_msg;

void p2p_begin(P2PNamer name, const void *ctx, int strict) {
    if (name) run.ctx = ctx;  // a watchdog that still sees the last name gets a context that outlives it
    run.name = name;
    run.strict = name && strict;
}

void p2p_text(const void *ctx, char *buf, size_t len) { snprintf(buf, len, "%s", (const char *)ctx); }

void p2p_running(char *buf, size_t len) {
    P2PNamer name = run.name;
    if (name) name(run.ctx, buf, len);
    else if (len) buf[0] = '\0';
}

static void entering(int kind, int to, size_t out, int from, size_t in) {
    in_msg.to = to;
    in_msg.from = from;
    in_msg.out = out;
    in_msg.in = in;
    in_msg.kind = kind;
}

void p2p_describe(char *buf, size_t len) {
    int kind = in_msg.kind;
    size_t out = in_msg.out, in = in_msg.in;
    int to = in_msg.to, from = in_msg.from;
    if (kind == IN_SEND) snprintf(buf, len, "sending %zu B to rank %d", out, to);
    else if (kind == IN_RECV) snprintf(buf, len, "receiving %zu B from rank %d", in, from);
    else if (kind == IN_BOTH)
        snprintf(buf, len, "sending %zu B to rank %d and receiving %zu B from rank %d", out, to, in, from);
    else if (len) buf[0] = '\0';
}

// Strict: waits for the next message from world rank f and stops the run
// unless it holds exactly `bytes` (MPI would cut a longer one short with an
// error that names neither side, and take a shorter one without a word).
static void expect_length(int f, size_t bytes) {
    MPI_Status st;
    int count = 0;
    CHECK_MPI(MPI_Probe(f, TAG, MPI_COMM_WORLD, &st));
    CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    if ((size_t)count != bytes) {
        char what[160];
        p2p_running(what, sizeof what);
        fatal("in %s: rank %d sent a message of %d bytes where this rank expected %zu: the two ranks disagree on the "
              "length of the chunk they pass", what, f, count, bytes);
    }
}

// Messages completed, sent or received: a watchdog reads it, unlocked, to tell
// a collective that is slow from one that stands still.
static _Atomic unsigned long messages;
unsigned long p2p_messages(void) { return messages; }

// Per peer, for the same watchdog: a message counts as sent before the rank
// says it is in it, as received after the rank stops saying it waits for it
// (so counts read before the state never show a message taken by a rank
// still seen waiting), and a receiver whose count matches its sender's has
// nothing on the way from it.
static _Atomic unsigned long sent_to[P2P_TRACK], received_from[P2P_TRACK];
unsigned long p2p_sent_to(int rank) { return rank >= 0 && rank < P2P_TRACK ? sent_to[rank] : 0; }
unsigned long p2p_received_from(int rank) { return rank >= 0 && rank < P2P_TRACK ? received_from[rank] : 0; }
static void sending(int to) {
    if (to < P2P_TRACK) sent_to[to]++;
}
static void received(int from) {
    if (from < P2P_TRACK) received_from[from]++;
}

int p2p_waits_for(void) {
    int kind = in_msg.kind;
    return kind == IN_RECV || kind == IN_BOTH ? in_msg.from : -1;
}

static void counted(int to, size_t bytes) {
    messages++;
    p.count.sent += bytes;
    if (p2p_node_of(to) != p2p_node_of(rt.rank)) p.count.inter += bytes;
}

void send_recv(const Group *g, const void *out, size_t out_bytes, int to, void *in, size_t in_bytes, int from) {
    int t = world_rank(g, to), f = world_rank(g, from);
    sending(t);
    entering(IN_BOTH, t, out_bytes, f, in_bytes);
    cross_link(t, out_bytes);
    if (run.strict) {  // the send in flight while the length is checked: still no deadlock
        MPI_Request r;
        CHECK_MPI(MPI_Isend(out, bytes_int(out_bytes), MPI_BYTE, t, TAG, MPI_COMM_WORLD, &r));
        expect_length(f, in_bytes);
        CHECK_MPI(MPI_Recv(in, bytes_int(in_bytes), MPI_BYTE, f, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else
        CHECK_MPI(MPI_Sendrecv(out, bytes_int(out_bytes), MPI_BYTE, t, TAG, in, bytes_int(in_bytes), MPI_BYTE, f,
                               TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    in_msg.kind = IN_NONE;
    received(f);
    counted(t, out_bytes);
}

void send_to(const Group *g, const void *buf, size_t bytes, int to) {
    int t = world_rank(g, to);
    sending(t);
    entering(IN_SEND, t, bytes, -1, 0);
    cross_link(t, bytes);
    CHECK_MPI(MPI_Send(buf, bytes_int(bytes), MPI_BYTE, t, TAG, MPI_COMM_WORLD));
    in_msg.kind = IN_NONE;
    counted(t, bytes);
}

void recv_from(const Group *g, void *buf, size_t bytes, int from) {
    int f = world_rank(g, from);
    entering(IN_RECV, -1, 0, f, bytes);
    if (run.strict) expect_length(f, bytes);
    CHECK_MPI(MPI_Recv(buf, bytes_int(bytes), MPI_BYTE, f, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    in_msg.kind = IN_NONE;
    received(f);
    messages++;
}
