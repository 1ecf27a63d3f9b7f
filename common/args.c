// args: the option table, parsing and validation.
#include "args.h"
#include "file.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { T_INT, T_LONG, T_U64, T_FLOAT, T_STR, T_CHOICE, T_CHOICE_OR_NUM } OptType;

typedef struct {
    const char *name;
    OptType type;
    size_t offset;        // of the field in Args
    const char *def;      // default, parsed like a user's value (NULL: none)
    double lo, hi;        // inclusive range for numbers
    const char *choices;  // for T_CHOICE and T_CHOICE_OR_NUM, space separated
    const char *help;
} Opt;

#define F(field) offsetof(Args, field)
static const Opt opts[] = {
    { "data", T_STR, F(data), "/usr/share/dict/words", 0, 0, NULL, "word list, one word per line" },
    { "context", T_INT, F(context), "5", 1, 32, NULL, "characters of context T" },
    { "hidden", T_INT, F(hidden), "128", 1, 65536, NULL, "width of the hidden layers" },
    { "layers", T_INT, F(layers), "6", 0, 64, NULL, "hidden Linear+ReLU layers L" },
    { "batch", T_INT, F(batch), "384", 1, 1 << 20, NULL, "global batch B (examples per step)" },
    { "accum", T_INT, F(accum), "1", 1, 1024, NULL, "micro-batches per step" },
    { "steps", T_LONG, F(steps), "3000", 1, 1e9, NULL, "optimizer steps" },
    { "lr", T_FLOAT, F(lr), "0.003", 1e-9, 10, NULL, "learning rate" },
    { "beta1", T_FLOAT, F(beta1), "0.9", 0, 0.999999, NULL, "Adam beta1" },
    { "beta2", T_FLOAT, F(beta2), "0.999", 0, 0.999999, NULL, "Adam beta2" },
    { "eps", T_FLOAT, F(eps), "1e-8", 1e-30, 1, NULL, "Adam epsilon" },
    { "weight-decay", T_FLOAT, F(weight_decay), "0", 0, 100, NULL, "decoupled weight decay (AdamW); 0 = Adam" },
    { "clip", T_FLOAT, F(clip), "0", 0, 1e9, NULL, "global gradient-norm clipping; 0 = off" },
    { "seed", T_U64, F(seed), "1337", 0, 9.2e18, NULL, "seed for init, shuffling and sampling" },
    { "log-every", T_INT, F(log_every), "100", 0, 1e9, NULL, "print a progress line every k steps; 0 = none" },
    { "sample", T_INT, F(sample), "10", 0, 10000, NULL, "words to sample from the trained model" },
    { "init", T_STR, F(init), NULL, 0, 0, NULL, "start from this safetensors model instead of the seeded init" },
    { "save-model", T_STR, F(save_model), NULL, 0, 0, NULL, "write the trained model here (safetensors)" },
    { "save-every", T_LONG, F(save_every), "0", 0, 1e9, NULL,
      "save a training checkpoint every k steps and at the end (needs --save-dir); 0 = at the end only" },
    { "save-dir", T_STR, F(save_dir), NULL, 0, 0, NULL,
      "directory of training checkpoints (one folder per saved step; the last two kept)" },
    { "resume", T_STR, F(resume), NULL, 0, 0, NULL,
      "continue training from this checkpoint, or from the latest one in this --save-dir" },
    { "resume-if-any", T_STR, F(resume_if_any), NULL, 0, 0, NULL,
      "--resume from this folder if it holds a checkpoint, else start from the start (job scripts: the first "
      "run finds none)" },
    { "trace", T_STR, F(trace), NULL, 0, 0, NULL, "write a Chrome trace of the run here (Perfetto, chrome://tracing)" },
    { "loss-log", T_STR, F(loss_log), NULL, 0, 0, NULL, "write every step's loss here (text: step loss)" },
    { "device", T_CHOICE, F(device), "cpu", 0, 0, "cpu cuda", "where to compute" },
    { "comm", T_CHOICE, F(comm), "mpi", 0, 0, "mpi ring naive tree rd rabenseifner hier auto nccl",
      "collectives: the MPI library's; written here: ring, through rank 0, binomial tree, recursive doubling, "
      "Rabenseifner's halving and doubling, hierarchical (nodes), or the one the cost model predicts fastest "
      "for each call; or NCCL (GPU)" },
    { "ranks-per-node", T_INT, F(ranks_per_node), "0", 0, 1 << 20, NULL,
      "emulate nodes of this many consecutive ranks (for --comm hier and ZC_LINK); 0 = one node per host" },
    { "grad-sync", T_CHOICE, F(grad_sync), "reduce_scatter", 0, 0, "reduce_scatter allreduce",
      "how sharded stages sum gradients" },
    { "prefetch", T_INT, F(prefetch), "1", 0, 1, NULL,
      "1: gather the next layer's params while this one computes; 0: gather on demand" },
    { "dtype", T_CHOICE, F(dtype), "bf16", 0, 0, "bf16 fp16 fp32", "type of params and grads (mixed precision)" },
    { "loss-scale", T_CHOICE_OR_NUM, F(loss_scale), "auto", 1, 1e9, "auto dynamic none",
      "dynamic, none or a static scale; auto: dynamic for fp16, none otherwise" },
    { "initial-scale", T_FLOAT, F(initial_scale), "65536", 1, 16777216, NULL,
      "where a dynamic loss scale starts (it stays within [1, 2^24])" },
    { "scale-window", T_INT, F(scale_window), "1000", 1, 1e9, NULL,
      "clean steps before a dynamic loss scale doubles" },
    { "bucket-mb", T_FLOAT, F(bucket_mb), "0", 0, 1e6, NULL,
      "MiB of consecutive layers per reduce-scatter; 0 = one layer each" },
};
#define NOPTS (sizeof opts / sizeof opts[0])

// ----------------------------------------------------------------------------
// parsing one value

static int fail(char *err, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return ARGS_ERROR;
}

static void describe_range(const Opt *o, char *buf, size_t len) {
    if (o->type == T_CHOICE) snprintf(buf, len, "one of: %s", o->choices);
    else if (o->type == T_CHOICE_OR_NUM)
        snprintf(buf, len, "one of: %s, or a number in [%g, %g]", o->choices, o->lo, o->hi);
    else if (o->type == T_STR) snprintf(buf, len, "a path");
    else if (o->type == T_FLOAT) snprintf(buf, len, "a number in [%g, %g]", o->lo, o->hi);
    else snprintf(buf, len, "an integer in [%.0f, %.0f]", o->lo, o->hi);
}

int args_has_word(const char *list, const char *w) {
    size_t n = strlen(w);
    if (n == 0 || strpbrk(w, " \t\n\r\v\f")) return 0;  // one whole word, or none
    for (const char *p = list; (p = strstr(p, w)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
    return 0;
}

// 1 if all of v is a finite number within o's range, stored in *x.
static int in_range(const Opt *o, const char *v, double *x) {
    char *end = NULL;
    errno = 0;
    *x = strtod(v, &end);
    return end != v && *end == '\0' && errno != ERANGE && isfinite(*x) && *x >= o->lo && *x <= o->hi;
}

static int set_value(Args *a, const Opt *o, const char *v, char *err, size_t len) {
    char range[160];
    describe_range(o, range, sizeof range);
    void *field = (char *)a + o->offset;
    double x;
    if (*v == '\0') return fail(err, len, "--%s: empty value (expected %s)", o->name, range);
    if (o->type == T_CHOICE_OR_NUM) {
        if (!args_has_word(o->choices, v) && !in_range(o, v, &x))
            return fail(err, len, "--%s %s: expected %s", o->name, file_shown(v), range);
        *(const char **)field = v;
        return ARGS_OK;
    }
    if (o->type == T_STR || o->type == T_CHOICE) {
        if (o->type == T_CHOICE && !args_has_word(o->choices, v))
            return fail(err, len, "--%s %s: expected %s", o->name, file_shown(v), range);
        *(const char **)field = v;
        return ARGS_OK;
    }
    int integral = o->type != T_FLOAT;
    if (!in_range(o, v, &x) || (integral && strpbrk(v, ".eExXpPnN") != NULL))
        return fail(err, len, "--%s %s: expected %s", o->name, file_shown(v), range);
    // A value fp32 cannot hold apart from 0 would turn into 0 (clipping off) or
    // lose its precision where it is used.
    if (o->type == T_FLOAT && x != 0 && !isnormal((float)x))
        return fail(err, len, "--%s %s: too small for fp32, where it is used (0, or at least %g)", o->name, file_shown(v),
                    (double)FLT_MIN);
    switch (o->type) {
    case T_INT: *(int *)field = (int)x; break;
    case T_LONG: *(long *)field = (long)x; break;
    case T_U64: *(uint64_t *)field = strtoull(v, NULL, 10); break;
    default: *(float *)field = (float)x; break;
    }
    return ARGS_OK;
}

static const Opt *find(const char *name, size_t n) {
    for (size_t i = 0; i < NOPTS; i++)
        if (strlen(opts[i].name) == n && strncmp(opts[i].name, name, n) == 0) return &opts[i];
    return NULL;
}

// ----------------------------------------------------------------------------
// the command line

int args_parse(Args *a, int argc, char **argv, const char *accepted, int world,
               char *err, size_t errlen) {
    memset(a, 0, sizeof *a);
    for (size_t i = 0; i < NOPTS; i++)
        if (opts[i].def && set_value(a, &opts[i], opts[i].def, err, errlen) != ARGS_OK)
            return ARGS_ERROR;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) return ARGS_HELP;
        if (strncmp(s, "--", 2) != 0)
            return fail(err, errlen, "unexpected argument '%s' (options start with --; see --help)", file_shown(s));
        const char *name = s + 2, *eq = strchr(name, '=');
        size_t n = eq ? (size_t)(eq - name) : strlen(name);
        const Opt *o = find(name, n);
        if (!o) {
            char shown[128];
            snprintf(shown, sizeof shown, "%.*s", (int)(n < sizeof shown ? n : sizeof shown - 1), name);
            return fail(err, errlen, "unknown option '--%s' (see --help)", file_shown(shown));
        }
        if (!args_has_word(accepted, o->name))
            return fail(err, errlen, "option --%s is not used by this stage (see --help)", o->name);
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v) {
            char range[160];
            describe_range(o, range, sizeof range);
            return fail(err, errlen, "--%s: missing value (expected %s)", o->name, range);
        }
        if (set_value(a, o, v, err, errlen) != ARGS_OK) return ARGS_ERROR;
    }
#ifndef ZC_CUDA
    if (strcmp(a->device, "cuda") == 0)
        return fail(err, errlen, "--device cuda: this build has no CUDA support (use --device cpu)");
#endif
    if (strcmp(a->comm, "nccl") == 0 && strcmp(a->device, "cuda") != 0)
        return fail(err, errlen, "--comm nccl: needs --device cuda (NCCL moves GPU memory)");
    if (a->save_every > 0 && !a->save_dir)
        return fail(err, errlen, "--save-every %ld: needs --save-dir (where the checkpoints go)", a->save_every);
    if (a->resume && a->resume_if_any)
        return fail(err, errlen, "--resume and --resume-if-any both given: name the checkpoint once");
    if (a->resume && a->init)
        return fail(err, errlen, "--resume and --init both given: a run starts from one of them");
    long per = (long)world * a->accum;
    if (a->batch % per != 0)
        return fail(err, errlen, "--batch %d: must be divisible by ranks x accum = %d x %d",
                    a->batch, world, a->accum);
    return ARGS_OK;
}

uint64_t args_fingerprint(const Args *a) {
    static FileHash h;
    file_hash_begin(&h);
    for (size_t i = 0; i < NOPTS; i++) {
        const void *field = (const char *)a + opts[i].offset;
        switch (opts[i].type) {
        case T_INT: file_hash_add(&h, field, sizeof(int)); break;
        case T_LONG: file_hash_add(&h, field, sizeof(long)); break;
        case T_U64: file_hash_add(&h, field, sizeof(uint64_t)); break;
        case T_FLOAT: file_hash_add(&h, field, sizeof(float)); break;
        default: {  // strings by their text; an absent one differs from every text
            const char *v = *(const char *const *)field;
            if (v) file_hash_add(&h, v, strlen(v) + 1);
            else file_hash_add(&h, "\xff", 1);
        }
        }
    }
    return file_hash_value(&h);
}

void args_help(const char *prog, const char *accepted) {
    printf("usage: %s [options]   (under mpirun for several ranks)\n", prog);
    for (size_t i = 0; i < NOPTS; i++) {
        const Opt *o = &opts[i];
        if (!args_has_word(accepted, o->name)) continue;
        char range[160];
        describe_range(o, range, sizeof range);
        printf("  --%-14s %s (default %s; %s)\n", o->name, o->help, o->def ? o->def : "none", range);
    }
}
