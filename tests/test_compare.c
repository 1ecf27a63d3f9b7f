// test_compare: the parsing of summary lines by tools/compare: a good line
// gives every value, and each way a line can be malformed gives a reason; and
// the loss curve's moving average against a sum written out.
#define COMPARE_TEST
#include "check_unit.h"

#include "../tools/compare.c"

static const char *good =
    "summary stage=lc2_zero1 ranks=4 device=cpu params=107547 steps=3000 final_loss=1.895169 "
    "model_state_bytes=1075472 peak_bytes=7487040 comm_bytes_per_step=645288 step_ms=3.387 "
    "model_state_formula=1075472 mem_params=430188 mem_grads=430188 mem_master_params=0 mem_adam_m=107548 "
    "mem_adam_v=107548 peak_params=430188 peak_grads=860376 peak_master_params=0 peak_adam_m=107548 "
    "peak_adam_v=107548 peak_activations=455424 peak_comm_buffers=27136 peak_data=5930976 peak_workspace=17408\n";

START_TEST(test_good_line) {
    Summary s;
    ck_assert_ptr_null(parse_summary(good, &s));
    ck_assert_str_eq(s.name, "lc2_zero1");
    ck_assert_double_eq(s.v[K_RANKS], 4);
    ck_assert_double_eq(s.v[K_STATE], 1075472);
    ck_assert_double_eq(s.v[K_COMM], 645288);
    ck_assert_double_eq_tol(s.v[K_LOSS], 1.895169, 1e-12);
    ck_assert_double_eq(s.v[K_MEM + 3], 107548);
    ck_assert_double_eq(s.v[K_PEAK_OF + P_DATA], 5930976);
    // The peak's parts: grads beyond the slices are in flight.
    PeakParts q = peak_parts(&s);
    ck_assert_double_eq(q.state, 430188 + 430188 + 107548 + 107548);
    ck_assert_double_eq(q.grads_in_flight, 860376 - 430188);
    ck_assert_double_eq(q.acts, 455424);
    ck_assert_double_eq(q.buffers, 27136);
    ck_assert_double_eq(q.work, 17408);
}
END_TEST

START_TEST(test_malformed_lines) {
    struct { const char *line, *says; } cases[] = {
        { "step 1/3 | loss 3.2", "does not start with 'summary '" },
        { "summary ranks=4", "no stage=" },
        { "summary stage=x ranks=4 params=12", "no model_state_formula=" },
        { "summary stage=x ranks=four", "ranks=four is not a number" },
        { "summary stage=x ranks", "'ranks' is not key=value" },
        { "summary stage=x ranks=", "'ranks=' is not key=value" },
        { "summary stage=x final_loss=nan", "final_loss=nan is not a number" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Summary s;
        const char *why = parse_summary(cases[i].line, &s);
        ck_assert_msg(why && strstr(why, cases[i].says), "'%s': got '%s', want '%s'", cases[i].line,
                      why ? why : "(accepted)", cases[i].says);
    }
    // Every key is required: dropping any one is refused.
    for (int k = 0; k < NKEYS; k++) {
        char line[2048], key[64];
        snprintf(key, sizeof key, " %s=", keys[k]);
        snprintf(line, sizeof line, "%s", good);
        char *at = strstr(line, key), *end = strchr(at + 1, ' ');
        if (end) memmove(at, end, strlen(end) + 1);
        else *at = '\0';
        Summary s;
        ck_assert_msg(parse_summary(line, &s) != NULL, "a line without %s was accepted", keys[k]);
    }
}
END_TEST

// A trailing mean over 3 steps, fewer at the start: 1, 1.5, 2, 3, 4 for 1..5;
// and a window of 1 returns the curve unchanged.
START_TEST(test_moving_average) {
    const char *curve = "1 1\n2 2\n3 3\n4 4\n5 5\n";
    double want[] = { 1, 1.5, 2, 3, 4 };
    for (int window = 1; window <= 3; window += 2) {
        FILE *in = fmemopen((void *)curve, strlen(curve), "r");
        char outbuf[256] = "";
        FILE *out = fmemopen(outbuf, sizeof outbuf, "w");
        ck_assert_int_eq(moving_average(in, out, window), 5);
        fclose(in);
        fclose(out);
        char *p = outbuf;
        for (int i = 0; i < 5; i++) {
            long step;
            double mean;
            int used;
            ck_assert_int_eq(sscanf(p, "%ld %lf%n", &step, &mean, &used), 2);
            p += used;
            ck_assert_int_eq(step, i + 1);
            ck_assert_double_eq_tol(mean, window == 1 ? i + 1 : want[i], 1e-12);
        }
    }
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("compare");
    TCase *tc = tcase_create("summary lines");
    tcase_add_test(tc, test_good_line);
    tcase_add_test(tc, test_malformed_lines);
    tcase_add_test(tc, test_moving_average);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN("test_compare", suite)
