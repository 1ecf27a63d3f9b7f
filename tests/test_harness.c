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
    g[n++] = (Graded){ "h.spins", 0, "0", "a loop with no progress", spins };
    g[n++] = (Graded){ "h.exchanges", 0, "0", "messages forever, no collective", exchanges };
    g[n++] = (Graded){ "h.exchanges_slowly", 0, "0", "messages, far apart", exchanges_slowly };
    g[n++] = (Graded){ "h.deadlocks", 0, "0", "every rank receives, none sends", deadlocks };
    g[n++] = (Graded){ "h.deadlocks_in_a_barrier", 0, "0", "a receive against MPI's barrier", deadlocks_in_a_barrier };
    g[n++] = (Graded){ "h.waits_for_slow_rank", 0, "0", "receives from a rank that computes", waits_for_slow_rank };
    g[n++] = (Graded){ "h.yields", 0, "0", "a wait that yields, for nothing", yields };
    g[n++] = (Graded){ "h.sleeps", 0, "0", "every thread asleep", sleeps };
    g[n++] = (Graded){ "h.computes", 0, "0", "compute launched forever", computes };
    return n;
}

static void setup(void) {}

GRADED_MAIN("test_harness", checks, setup)
