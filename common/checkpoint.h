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

typedef struct {
    const char *stage;
    const Args *a;              // the model's shape, the seed, the batch, the paths
    size_t examples;            // in the data set: a checkpoint continues on the same data
    long step;                  // optimizer steps done
    long adam_step;             // Adam's step count
    int nkinds;
    StateKind kind[STATE_MAX_KINDS];
    int nvalues;                // scalar state by name (lc5's loss scale), as doubles
    const char *value_name[STATE_MAX_VALUES];
    double value[STATE_MAX_VALUES];
} TrainState;

// Starts a description of the state a stage keeps.
void state_begin(TrainState *s, const char *stage, const Args *a, size_t examples, long step, long adam_step);
// Adds a kind of state.
void state_add(TrainState *s, const char *name, void *buf, DType dt, int sliced);
// Adds a scalar; state_get reads it back after checkpoint_resume.
void state_value(TrainState *s, const char *name, double v);
double state_get(const TrainState *s, const char *name);

// 1 if a checkpoint is due once `done` steps are done: every --save-every steps
// and at the last step, when --save-dir is set.
int checkpoint_due(const Args *a, long done);
// Collective: saves s into --save-dir/step-NNNNNNNN. A failed write stops every
// rank (exit 1) and leaves the previous checkpoints as they were.
void checkpoint_save(const TrainState *s);
// Collective: fills s's buffers, step, Adam step and values from the
// checkpoint --resume names (a checkpoint folder, or a --save-dir: its latest).
// A checkpoint that cannot be used (another model, another stage's state, a
// missing or corrupt file, no manifest) stops every rank, exit 2, one line.
void checkpoint_resume(TrainState *s);
// Collective: rank 0 prints what the saves cost (bytes per rank, time per save),
// if there were any.
void checkpoint_report(void);

#endif
