// args: one table of command-line options shared by every stage. A stage names
// the options it understands; anything else, or a value out of range, is a
// one-line reason (rt_args turns it into exit status 2 on every rank). Pure:
// no MPI, no I/O but --help's printout.
#ifndef ARGS_H
#define ARGS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *data, *init, *save_model, *loss_log, *device, *comm, *grad_sync, *dtype, *loss_scale, *trace;
    const char *save_dir, *resume, *resume_if_any;  // training checkpoints
    int context, hidden, layers, batch, accum, log_every, sample, prefetch, scale_window, ranks_per_node;
    long steps, save_every;
    float lr, beta1, beta2, eps, weight_decay, clip, bucket_mb, initial_scale;
    uint64_t seed;
} Args;

enum { ARGS_OK, ARGS_HELP, ARGS_ERROR };

// The options every stage takes: the data, the model, the optimizer, logging,
// model files and training checkpoints. A stage's OPTIONS add its lecture's.
#define ARGS_EVERY_STAGE "data context hidden layers batch accum steps lr beta1 beta2 eps weight-decay clip seed " \
                         "log-every sample init save-model loss-log trace device save-every save-dir resume resume-if-any"

// Fills a from the defaults and argv. accepted: the stage's option names, space
// separated. world: the number of ranks (batch must divide by world x accum).
// Returns ARGS_OK, ARGS_HELP (--help seen) or ARGS_ERROR with a one-line reason in err.
int args_parse(Args *a, int argc, char **argv, const char *accepted, int world,
               char *err, size_t errlen);
// 1 if w is one of the space-separated words of list (an empty w, or one with
// white space in it, is none of them).
int args_has_word(const char *list, const char *w);
// A hash of every setting in a (the values, not how they were spelled): ranks
// that must run with the same options compare it.
uint64_t args_fingerprint(const Args *a);
// Prints the accepted options with their defaults and ranges.
void args_help(const char *prog, const char *accepted);

#endif
