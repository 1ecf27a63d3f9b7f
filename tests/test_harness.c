// test_harness: the grading harness held to what it claims (tests/check_mpi.h).
// Its checks are made to fail or hang on purpose; tests/test_harness.sh runs
// them and reads the verdicts: a check that fails on one rank only fails on
// every rank, with that rank's message; the checks after a failing one still
// run and are recorded; a check that spins without progress is stopped for
// that, not at its whole budget; one whose messages pass while no collective
// ever completes is stopped as a loop; one whose messages pass slowly is not
// stopped; one that waits yielding its core, beside busy processes, is stopped
// for no progress; one whose threads all sleep is stopped as asleep; one that
// computes forever (progress at every step) is stopped at its processor time;
// ranks that all wait on one another are stopped as a deadlock, proven, and
// ranks that wait for one that computes are not.
#include "check_mpi.h"

#include <math.h>
#include <signal.h>

// ----------------------------------------------------------------------------
// the checks

START_TEST(last_rank_fails) {
    ck_assert_msg(rt.rank != rt.world - 1, "rank %d fails, alone", rt.rank);  // not agreed: the harness must
}
END_TEST

START_TEST(passes) {
    int one = 1;
    comm_agree_min(&one);
    ck_assert_int_eq(one, 1);
}
END_TEST

START_TEST(spins) {
    for (volatile unsigned long i = 0;; i++) {}  // processor time, no progress
}
END_TEST

// One message each way with the ring's neighbours.
static void exchange(void) {
    Group g = p2p_world();
    int out = g.me, in = -1;
    send_recv(&g, &out, sizeof out, p2p_mod(&g, g.me + 1), &in, sizeof in, p2p_mod(&g, g.me - 1));
    ck_assert_int_eq(in, p2p_mod(&g, g.me - 1));
}

START_TEST(exchanges) {
    for (;;) exchange();  // messages, and never a collective
}
END_TEST

// A seventh of the stall's processor time between messages, sixteen times:
// more than twice the stall in all, and no verdict, for messages are progress.
// (A rank waiting for a slower one spins meanwhile: a seventh leaves room for
// a partner that gets a third of a core.)
START_TEST(exchanges_slowly) {
    for (int round = 0; round < 16; round++) {
        double t0 = cpu_s();
        while (cpu_s() - t0 < GRADED_STALL * graded_scale() / 7) {}
        exchange();
    }
}
END_TEST

// Every rank waits to receive from its left neighbour, which never sends.
START_TEST(deadlocks) {
    Group g = p2p_world();
    int in;
    recv_from(&g, &in, sizeof in, p2p_mod(&g, g.me - 1));
}
END_TEST

// Rank 0 waits for a message from rank 1; the others wait in MPI's barrier,
// which rank 0 never joins.
START_TEST(deadlocks_in_a_barrier) {
    Group g = p2p_world();
    int in;
    if (g.me == 0) recv_from(&g, &in, sizeof in, 1);
    else comm_barrier();
}
END_TEST

// Rank 0 computes a while (no compute launched: no progress) before it sends
// to every other rank, which waits meanwhile: slow, not a deadlock.
START_TEST(waits_for_slow_rank) {
    Group g = p2p_world();
    int v = 7;
    if (g.me == 0) {
        double t0 = cpu_s();
        while (cpu_s() - t0 < GRADED_STALL * graded_scale() / 3) {}
        for (int r = 1; r < g.size; r++) send_to(&g, &v, sizeof v, r);
    } else {
        recv_from(&g, &v, sizeof v, 0);
    }
    CK_ALL(v == 7, "rank %d received %d", g.me, v);
}
END_TEST

// The deadlock proof's rule and the fair share, on states made up here
// rather than met: each case the one the rule exists for, at this N. (A
// real all-in-MPI stall long enough to be read twice, or a starved rank, is
// not something a check can bring about on every machine.)
static void held(int block, int from, WaitState *w, int r) { w[r].block = block, w[r].from = from; }
START_TEST(proof_rules) {
    static WaitState w[P2P_TRACK];
    int N = rt.world;
    memset(w, 0, sizeof w);
    for (int r = 0; r < N; r++) held(COMM_BLOCKED_RECV, (r + N - 1) % N, w, r);
    ck_assert_msg(deadlocked(w), "N=%d: every rank waits to receive from its left, nothing on its way: no deadlock", N);
    w[N - 1].sent[0] = 1;  // rank 0's left has sent it one message more than it has received
    ck_assert_msg(!deadlocked(w), "N=%d: a deadlock though a message to rank 0 is on its way", N);
    w[0].received[N - 1] = 1;
    ck_assert_msg(deadlocked(w), "N=%d: the message received, every rank waits again: no deadlock", N);
    for (int r = 0; r < N; r++) held(COMM_BLOCKED_ALL, -1, w, r);
    ck_assert_msg(!deadlocked(w), "N=%d: every rank inside MPI's collective (which may just be slow) is a deadlock", N);
    held(COMM_BLOCKED_RECV, 1, w, 0);
    ck_assert_msg(deadlocked(w), "N=%d: rank 0 waits for rank 1, in MPI's collective with the rest: no deadlock", N);
    held(COMM_FREE, -1, w, N - 1);
    ck_assert_msg(!deadlocked(w), "N=%d: a deadlock though rank %d is at work", N, N - 1);
    for (int r = 0; r < N; r++) held(COMM_BLOCKED_RECV, (r + 1) % N, w, r);
    held(COMM_BLOCKED_RECV, N, w, 0);
    ck_assert_msg(!deadlocked(w), "N=%d: a deadlock with a rank waiting for rank %d, which does not exist", N, N);
    held(COMM_BLOCKED_RECV, -1, w, 0);
    ck_assert_msg(!deadlocked(w), "N=%d: a deadlock with a rank waiting for no rank", N);
    // A task at work gets the cores over the tasks that want one, at most a core.
    const double share[][3] = { { 2, 6, 1.0 / 3 }, { 2, 3, 2.0 / 3 }, { 2, 1, 1 }, { 4, 4, 1 }, { 2, 0, 1 } };
    for (size_t i = 0; i < sizeof share / sizeof share[0]; i++)
        ck_assert_msg(fabs(fair_share(share[i][0], (long)share[i][1]) - share[i][2]) < 1e-12,
                      "the fair share of %g cores among %g tasks: %g, not %g", share[i][0], share[i][1],
                      fair_share(share[i][0], (long)share[i][1]), share[i][2]);
}
END_TEST

// Rank 1 stands still in MPI's barrier (rank 0 computes first), so that its
// watchdog leaves that state; then, the barrier done, it stops itself
// (SIGSTOP: its watchdog too) before it sends to rank 0, which waits for it.
// tests/test_harness.sh lets it go on seconds later. Rank 1's state on file
// is the one it left in the barrier: read again and again, never written
// again, it is no proof of anything (with rank 0's wait it would read as a
// deadlock).
START_TEST(waits_for_stopped_rank) {
    Group g = p2p_world();
    int v = 0;
    if (g.me == 0) {
        double t0 = now_s();
        while (now_s() - t0 < 1.5) {}  // six looks of rank 1's in the barrier
    }
    comm_barrier();
    if (g.me == 1) {
        raise(SIGSTOP);
        v = 7;
        send_to(&g, &v, sizeof v, 0);
    } else if (g.me == 0) {
        recv_from(&g, &v, sizeof v, 1);
    }
    CK_ALL(v == 7 || g.me > 1, "rank %d has %d", g.me, v);
}
END_TEST

START_TEST(yields) {
    for (;;) sched_yield();  // a rank waiting as Open MPI waits, for what never comes
}
END_TEST

START_TEST(computes) {
    for (;;) {  // compute launched again and again, as an endless loop of training steps
        compute_mark();
        for (volatile int i = 0; i < 100000; i++) {}
    }
}
END_TEST

START_TEST(sleeps) {
    for (;;) pause();  // no processor time, no progress
}
END_TEST

// ----------------------------------------------------------------------------
// the table: the last two run only where ZC_CHECKS names them (no N is 0)

static int checks(Graded *g) {
    int n = 0;
    g[n++] = (Graded){ "h.last_rank_fails", 0, "2 3", "a check that fails on the last rank only", last_rank_fails };
    g[n++] = (Graded){ "h.passes", 0, "2 3", "a check after it, which passes", passes };
    g[n++] = (Graded){ "h.proof_rules", 0, "2 3", "the deadlock proof's rule and the fair share", proof_rules };
    g[n++] = (Graded){ "h.spins", 0, "0", "a loop with no progress", spins };
    g[n++] = (Graded){ "h.exchanges", 0, "0", "messages forever, no collective", exchanges };
    g[n++] = (Graded){ "h.exchanges_slowly", 0, "0", "messages, far apart", exchanges_slowly };
    g[n++] = (Graded){ "h.deadlocks", 0, "0", "every rank receives, none sends", deadlocks };
    g[n++] = (Graded){ "h.deadlocks_in_a_barrier", 0, "0", "a receive against MPI's barrier", deadlocks_in_a_barrier };
    g[n++] = (Graded){ "h.waits_for_slow_rank", 0, "0", "receives from a rank that computes", waits_for_slow_rank };
    g[n++] = (Graded){ "h.waits_for_stopped_rank", 0, "0", "receives from a rank stopped after a barrier",
                       waits_for_stopped_rank };
    g[n++] = (Graded){ "h.yields", 0, "0", "a wait that yields, for nothing", yields };
    g[n++] = (Graded){ "h.sleeps", 0, "0", "every thread asleep", sleeps };
    g[n++] = (Graded){ "h.computes", 0, "0", "compute launched forever", computes };
    return n;
}

static void setup(void) {}

GRADED_MAIN("test_harness", checks, setup)
