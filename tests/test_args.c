// test_args: the option table. Every kind of bad input is refused with a line
// that names the option; good input lands in the right field.
#include "check_unit.h"

#include <stdarg.h>
#include <string.h>

#include "../common/args.h"

#define ALL "data context hidden layers batch accum steps lr beta1 beta2 eps weight-decay " \
            "clip seed log-every sample init save-model loss-log device comm grad-sync bucket-mb prefetch dtype loss-scale scale-window trace"

static int parse(Args *a, int world, char *err, const char *accepted, ...) {
    char *argv[32] = { "prog" };
    int argc = 1;
    va_list ap;
    va_start(ap, accepted);
    for (char *s; (s = va_arg(ap, char *)) != NULL;) argv[argc++] = s;
    va_end(ap);
    err[0] = '\0';
    return args_parse(a, argc, argv, accepted, world, err, 512);
}

START_TEST(test_defaults_and_values) {
    Args a;
    char err[512];
    ck_assert_int_eq(parse(&a, 1, err, ALL, NULL), ARGS_OK);
    ck_assert_str_eq(a.data, "/usr/share/dict/words");
    ck_assert_int_eq(a.batch, 384);
    ck_assert_int_eq(a.accum, 1);
    ck_assert_float_eq(a.clip, 0.0f);
    ck_assert_str_eq(a.device, "cpu");
    ck_assert_str_eq(a.grad_sync, "reduce_scatter");
    ck_assert_float_eq(a.bucket_mb, 0.0f);
    ck_assert_int_eq(a.prefetch, 1);
    ck_assert_str_eq(a.dtype, "bf16");
    ck_assert_str_eq(a.loss_scale, "auto");
    ck_assert_int_eq(a.scale_window, 1000);
    ck_assert_int_eq(parse(&a, 1, err, ALL, "--loss-scale", "1024", "--dtype", "fp16", NULL), ARGS_OK);
    ck_assert_str_eq(a.loss_scale, "1024");
    ck_assert_int_eq(parse(&a, 1, err, ALL, "--loss-scale", "none", NULL), ARGS_OK);
    ck_assert_ptr_null(a.init);
    ck_assert_int_eq(parse(&a, 4, err, ALL, "--hidden", "17", "--lr=0.5", "--seed", "18446744073709551",
                           "--steps", "12", "--comm", "mpi", "--save-model", "x.st", NULL), ARGS_OK);
    ck_assert_int_eq(a.hidden, 17);
    ck_assert_float_eq(a.lr, 0.5f);
    ck_assert_uint_eq(a.seed, 18446744073709551ull);
    ck_assert_int_eq(a.steps, 12);
    ck_assert_str_eq(a.save_model, "x.st");
    ck_assert_int_eq(parse(&a, 2, err, ALL, "--grad-sync", "allreduce", "--bucket-mb", "0.25", NULL), ARGS_OK);
    ck_assert_str_eq(a.grad_sync, "allreduce");
    ck_assert_float_eq(a.bucket_mb, 0.25f);
    ck_assert_int_eq(parse(&a, 1, err, ALL, "--help", NULL), ARGS_HELP);
}
END_TEST

// Each case: the arguments, and a fragment the one-line reason must contain.
START_TEST(test_bad_input) {
    struct { const char *argv[4]; int world; const char *accepted, *says; } cases[] = {
        { { "--bogus", "1" }, 1, ALL, "unknown option '--bogus'" },
        { { "--hidden" }, 1, ALL, "--hidden: missing value" },
        { { "--hidden", "12x" }, 1, ALL, "--hidden 12x: expected an integer" },
        { { "--hidden", "1.5" }, 1, ALL, "--hidden 1.5" },
        { { "--hidden", "" }, 1, ALL, "--hidden" },
        { { "--context", "0" }, 1, ALL, "--context 0: expected an integer in [1, 32]" },
        { { "--layers", "-1" }, 1, ALL, "--layers -1" },
        { { "--steps", "99999999999999999999" }, 1, ALL, "--steps" },
        { { "--lr", "-1" }, 1, ALL, "--lr -1: expected a number" },
        { { "--lr", "nan" }, 1, ALL, "--lr nan" },
        { { "--beta1", "1" }, 1, ALL, "--beta1 1" },
        { { "--eps", "abc" }, 1, ALL, "--eps abc" },
        { { "--seed", "-3" }, 1, ALL, "--seed -3" },
        { { "--comm", "pigeon" }, 1, ALL, "--comm pigeon: expected one of" },
        { { "--device", "tpu" }, 1, ALL, "--device tpu" },
        { { "--grad-sync", "gossip" }, 1, ALL, "--grad-sync gossip: expected one of: reduce_scatter allreduce" },
        { { "--bucket-mb", "-1" }, 1, ALL, "--bucket-mb -1" },
        { { "--prefetch", "2" }, 1, ALL, "--prefetch 2: expected an integer in [0, 1]" },
        { { "--dtype", "fp8" }, 1, ALL, "--dtype fp8: expected one of: bf16 fp16 fp32" },
        { { "--loss-scale", "huge" }, 1, ALL, "--loss-scale huge: expected one of: auto dynamic none, or a number" },
        { { "--loss-scale", "0.5" }, 1, ALL, "--loss-scale 0.5" },
        { { "--loss-scale", "inf" }, 1, ALL, "--loss-scale inf" },
        { { "--scale-window", "0" }, 1, ALL, "--scale-window 0" },
        { { "--comm", "mpi" }, 1, "data steps", "option --comm is not used by this stage" },
        { { "--batch", "384" }, 5, ALL, "--batch 384: must be divisible by ranks x accum = 5 x 1" },
        { { "--batch", "12", "--accum", "5" }, 1, ALL, "must be divisible" },
        { { "stray" }, 1, ALL, "unexpected argument 'stray'" },
        { { "--data=" }, 1, ALL, "--data: empty value" },
        { { "--loss-scale", "" }, 1, ALL, "--loss-scale: empty value" },
        { { "--loss-scale=" }, 1, ALL, "--loss-scale: empty value" },
        { { "--comm", "" }, 1, ALL, "--comm: empty value" },
        { { "--comm", "mpi ring" }, 1, ALL, "--comm mpi ring: expected one of" },
        { { "--dtype", "bf16 fp16" }, 1, ALL, "--dtype bf16 fp16" },
        { { "--loss-scale", "dynamic none" }, 1, ALL, "--loss-scale dynamic none" },
        { { "--grad-sync", "allreduce " }, 1, ALL, "--grad-sync allreduce " },
#ifndef ZC_CUDA
        { { "--device", "cuda" }, 1, ALL, "--device cuda: this build has no CUDA" },
#endif
        { { "--comm", "nccl" }, 1, ALL, "--comm nccl: needs --device cuda" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[6] = { "prog" };
        int argc = 1;
        for (int k = 0; k < 4 && cases[i].argv[k]; k++) argv[argc++] = (char *)cases[i].argv[k];
        Args a;
        char err[512] = "";
        int r = args_parse(&a, argc, argv, cases[i].accepted, cases[i].world, err, sizeof err);
        ck_assert_msg(r == ARGS_ERROR, "case %zu (%s) accepted", i, cases[i].says);
        ck_assert_msg(strstr(err, cases[i].says) != NULL, "case %zu: '%s' lacks '%s'", i, err,
                      cases[i].says);
        ck_assert_msg(strchr(err, '\n') == NULL, "case %zu: more than one line", i);
    }
}
END_TEST

START_TEST(test_words_and_fingerprint) {
    ck_assert(args_has_word("a bb c", "bb"));
    ck_assert(!args_has_word("a bb c", "b"));
    ck_assert(!args_has_word("a bb c", ""));         // would loop forever on strstr("")
    ck_assert(!args_has_word("a bb c", "a bb"));     // two words are not one
    ck_assert(!args_has_word("a bb c", "bb\t"));
    // The fingerprint follows the values, not their spelling.
    Args x, y;
    char err[512];
    ck_assert_int_eq(parse(&x, 1, err, ALL, "--lr", "0.003", NULL), ARGS_OK);
    ck_assert_int_eq(parse(&y, 1, err, ALL, NULL), ARGS_OK);
    ck_assert_uint_eq(args_fingerprint(&x), args_fingerprint(&y));
    ck_assert_int_eq(parse(&y, 1, err, ALL, "--lr", "0.01", NULL), ARGS_OK);
    ck_assert_uint_ne(args_fingerprint(&x), args_fingerprint(&y));
    ck_assert_int_eq(parse(&y, 1, err, ALL, "--init", "m.st", NULL), ARGS_OK);
    ck_assert_uint_ne(args_fingerprint(&x), args_fingerprint(&y));
    ck_assert_int_eq(parse(&x, 1, err, ALL, "--init", "n.st", NULL), ARGS_OK);
    ck_assert_uint_ne(args_fingerprint(&x), args_fingerprint(&y));
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("args");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_defaults_and_values);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(tc, test_words_and_fingerprint);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN("test_args", suite)
