// checkpoint: training checkpoints for the stages (--save-every, --save-dir,
// --resume). A stage describes the state it keeps, kind by kind: a buffer, its
// dtype, and whether it holds every layer whole or this rank's slice of each
// layer (the course's sharding rule; shards.h). Saving, every rank writes what
// it owns into its own file (a kind kept whole by every rank is written once, by
// rank 0); after all have finished, rank 0 writes the manifest, atomically, and
// then the folder's `latest` file, and removes checkpoints older than the one
// before. Resuming, every rank reads the range it owns of every layer from
// whichever saved files hold it, so a checkpoint resumes at any number of ranks
// and in any stage that keeps the same kinds of state. Gradients are not state:
// every step starts them at zero.
#ifndef CHECKPOINT_H
#define CHECKPOINT_H

#include "args.h"
#include "data.h"
#include "dtype.h"

#define STATE_MAX_KINDS 5
#define STATE_MAX_VALUES 8

typedef struct {
    const char *name;           // "params", "m", "v", "master", "params16"
    void *buf;                  // host or GPU
    DType dt;                   // DT_F32, DT_BF16 or DT_F16
    int sliced;                 // 1: this rank's slices (layer l at sum of the ceil(numel/N) before it);
                                // 0: every layer whole (layer l at sum of the numel before it)
} StateKind;

// A scalar of a stage's state (lc5's loss scale), where the stage keeps it.
typedef enum { SV_INT, SV_LONG, SV_FLOAT } StateValueType;
typedef struct {
    const char *name;
    void *p;
    StateValueType type;
    double lo, hi;              // what a resume accepts: the range the options that set it allow
} StateValue;

typedef struct {
    const char *stage;
    const Args *a;              // the model's shape, the seed, the batch, the paths
    const Data *data;           // the data set: a checkpoint continues on the same data
    long step;                  // optimizer steps done
    long *adam_step;            // the stage's Adam step count
    int nkinds;
    StateKind kind[STATE_MAX_KINDS];
    int nvalues;
    StateValue value[STATE_MAX_VALUES];
} TrainState;

// How a stage names its state: fills s with state_begin, state_add, state_value.
typedef void (*DescribeState)(void *trainer, TrainState *s);

// Starts a description of the state a stage keeps.
void state_begin(TrainState *s, const char *stage, const Args *a, const Data *data, long *adam_step);
// Adds a kind of state.
void state_add(TrainState *s, const char *name, void *buf, DType dt, int sliced);
// Adds a scalar kept at p (an int, a long or a float) that a resume accepts
// only in [lo, hi] (and whole, for an int or a long).
void state_value_at(TrainState *s, const char *name, void *p, StateValueType type, double lo, double hi);
#define state_value(s, name, p, lo, hi) \
    state_value_at((s), (name), (p), _Generic(*(p), int: SV_INT, long: SV_LONG, float: SV_FLOAT), (lo), (hi))
// The value of a scalar of the state, whatever its type.
double state_value_get(const StateValue *v);

// Collective, once `done` steps are done: if a checkpoint is due (every
// --save-every steps and at the last step, when --save-dir is set), saves the
// state describe names into --save-dir/step-NNNNNNNN. A failed write stops
// every rank (exit 1) and leaves the previous checkpoints as they were.
void checkpoint_save_if_due(const Args *a, long done, DescribeState describe, void *trainer);
// Collective: fills the state describe names (buffers, Adam's step, values)
// from the checkpoint --resume names (a checkpoint folder, or a --save-dir: its
// latest) and returns the steps it had done. A checkpoint that cannot be used
// (another model, another stage's state, a missing or corrupt file, no
// manifest) stops every rank, exit 2, one line.
long checkpoint_resume(DescribeState describe, void *trainer);
// Collective: rank 0 prints what the saves cost (bytes per rank, time per save),
// if there were any.
void checkpoint_report(void);

#endif
