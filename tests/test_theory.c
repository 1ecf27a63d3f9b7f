// test_theory: the formulas of common/theory against the ZeRO paper's figure
// (Ψ = 7.5B, N = 64, mixed precision: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB) and
// against the course's own fp32 model, where the stages measure them.
#include "check_unit.h"

#include <math.h>

#include "../common/theory.h"

START_TEST(test_paper_figure) {
    const double want[] = { 120.0, 31.4, 16.6, 1.9 };  // GB, as the paper prints them
    for (int s = ZERO_DDP; s <= ZERO_3; s++) {
        double gb = theory_model_state((ZeroStage)s, 7.5e9, 7.5e9, 64, 2, 12) / 1e9;
        ck_assert_msg(fabs(round(gb * 10) / 10 - want[s]) < 1e-9, "%s: %.3f GB, paper says %.1f",
                      zero_stage_name((ZeroStage)s), gb, want[s]);
    }
}
END_TEST

START_TEST(test_course_model) {
    // The default model at N = 4 (Ψ = 103,451, Ψ_pad = 103,452), fp32: what
    // lc1 to lc4 measure, to the byte (see the README's table).
    const double state[] = { 1655216, 1034512, 724160, 413808 };
    for (int s = ZERO_DDP; s <= ZERO_3; s++)
        ck_assert_double_eq(theory_model_state((ZeroStage)s, 103451, 103452, 4, 4, 8), state[s]);
    ck_assert_double_eq(theory_comm(ZERO_DDP, 103451, 103452, 4, 4), 620706);
    ck_assert_double_eq(theory_comm(ZERO_1, 103451, 103452, 4, 4), 620712);
    ck_assert_double_eq(theory_comm(ZERO_2, 103451, 103452, 4, 4), 620712);
    ck_assert_double_eq(theory_comm(ZERO_3, 103451, 103452, 4, 4), 931068);
    // One rank: every stage is DDP.
    for (int s = ZERO_DDP; s <= ZERO_3; s++) {
        ck_assert_double_eq(theory_model_state((ZeroStage)s, 1000, 1000, 1, 4, 8), 16000);
        ck_assert_double_eq(theory_comm((ZeroStage)s, 1000, 1000, 1, 4), 0);
    }
}
END_TEST

// The texts the reports print: each stage's terms, with the run's numbers, and
// numbers that agree with the arithmetic above (the default model at N = 4).
START_TEST(test_texts) {
    ck_assert_str_eq(theory_model_state_text(ZERO_DDP, 103451, 103451, 4, 4, 8), "16Ψ = 16 x 103451");
    ck_assert_str_eq(theory_model_state_text(ZERO_1, 103451, 103452, 4, 4, 8),
                     "4Ψ + 4Ψ + 8Ψ_pad/N = 8 x 103451 + 8 x 103452/4");
    ck_assert_str_eq(theory_model_state_text(ZERO_2, 103451, 103452, 4, 4, 8),
                     "4Ψ + 12Ψ_pad/N = 4 x 103451 + 12 x 103452/4");
    ck_assert_str_eq(theory_model_state_text(ZERO_3, 103451, 103452, 4, 4, 8), "16Ψ_pad/N = 16 x 103452/4");
    ck_assert_str_eq(theory_model_state_text(ZERO_3, 103451, 103452, 4, 2, 12),
                     "(2 + 2 + 4 + 4 + 4)Ψ_pad/N = 16 x 103452/4");
    Traffic t = { .stage = ZERO_DDP, .b = 4, .psi = 103451, .psi_pad = 103452, .n = 4 };
    ck_assert_str_eq(theory_traffic_text(&t), "all_reduce 2(N-1)/N x 4Ψ = 2 x 3/4 x 4 x 103451");
    t.stage = ZERO_1, t.clip = 1;
    ck_assert_str_eq(theory_traffic_text(&t), "reduce_scatter (N-1)/N x 4Ψ_pad + all_gather (N-1)/N x 4Ψ_pad + clip "
                                              "all_reduce 2(N-1)/N x 8 (Ψ_pad = 103452)");
    t.grad_allreduce = 1, t.clip = 0;
    ck_assert_str_eq(theory_traffic_text(&t), "all_reduce 2(N-1)/N x 4Ψ + all_gather (N-1)/N x 4Ψ_pad (Ψ_pad = 103452)");
    t.stage = ZERO_2, t.accum = 3;
    ck_assert_str_eq(theory_traffic_text(&t),
                     "3 x reduce_scatter (N-1)/N x 4Ψ_pad + all_gather (N-1)/N x 4Ψ_pad (Ψ_pad = 103452)");
    t = (Traffic){ .stage = ZERO_3, .b = 2, .accum = 1, .overflow_flag = 1, .clip = 1, .dtype = "bf16",
                   .psi = 103451, .psi_pad = 103452, .n = 4 };
    ck_assert_str_eq(theory_traffic_text(&t), "1 x (all_gather (N-1)/N x 2Ψ_pad + all_gather (N-1)/N x 2(Ψ_pad - last "
                                              "layer) + reduce_scatter (N-1)/N x 2Ψ_pad) + overflow flag all_reduce "
                                              "2(N-1)/N x 4 + clip all_reduce 2(N-1)/N x 8 (Ψ_pad = 103452, bf16)");
}
END_TEST

START_TEST(test_ring_model) {
    // What one rank sends in the ring algorithm: 2(N-1)/N of the buffer in an
    // all-reduce, (N-1)/N in a reduce-scatter or an all-gather; nothing alone.
    ck_assert_double_eq(theory_all_reduce(1000, 4), 1500);
    ck_assert_double_eq(theory_gather(1000, 4), 750);
    ck_assert_double_eq(theory_all_reduce(1000, 1), 0);
    ck_assert_double_eq(theory_gather(1000, 1), 0);
    ck_assert_double_eq(theory_gather(24, 3), 16);
    // The stages' formulas are made of them: ZeRO-1's reduce-scatter plus
    // all-gather is one all-reduce's worth; ZeRO-3 adds a gather.
    ck_assert_double_eq(theory_comm(ZERO_1, 99, 100, 4, 4), 2 * theory_gather(400, 4));
    ck_assert_double_eq(theory_comm(ZERO_3, 99, 100, 4, 2), 3 * theory_gather(200, 4));
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("theory");
    TCase *tc = tcase_create("formulas");
    tcase_add_test(tc, test_paper_figure);
    tcase_add_test(tc, test_course_model);
    tcase_add_test(tc, test_ring_model);
    tcase_add_test(tc, test_texts);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN("test_theory", suite)
