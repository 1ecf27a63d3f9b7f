// report: what every stage prints and how it keeps time. Progress lines while
// it trains, words sampled from the model, the memory and communication reports
// beside the stage's formulas, and the summary line that tools parse.
#ifndef REPORT_H
#define REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "args.h"
#include "comm.h"
#include "file.h"
#include "mem.h"

// ----------------------------------------------------------------------------
// while training

// Names the parameter tensor ("layers.1.weight") in which this rank holds a
// value that is not finite, or returns NULL: a stage's answer when the loss is
// not finite.
typedef const char *(*FindNonFinite)(void *trainer);

typedef struct {
    const Args *a;            // steps, log_every, batch, loss_log
    FindNonFinite find;
    void *trainer;
    AtomicFile loss_log;      // rank 0's, while training (loss_log.f NULL: none)
    long logged;              // the last step in the loss log (a resumed run's continues the saved one's)
    double step_start, window_start;
    long window_steps;        // steps since the last progress line
    long steps;               // steps run since progress_start
} Progress;

// Training starts: --trace starts recording, the comm counters, memory peaks
// and step times restart, and rank 0 opens --loss-log (rt_setup checked both).
// Every rank calls it; find(trainer) names a tensor if the loss is not finite.
void progress_start(Progress *p, const Args *a, FindNonFinite find, void *trainer);
// A step begins (its time is measured from here).
void progress_begin_step(Progress *p);
// Step s (from 0) has ended with this mean loss (the same on every rank): waits
// for the device, records the step time, logs the loss, and every --log-every
// steps prints a progress line (mean time and throughput since the last one)
// ending with extra. A loss that is not finite stops every rank with exit
// status 1, naming the step and the tensor; the loss log keeps the steps so far.
// A run resumed at step s > 0 keeps the log's lines of steps 1..s first.
void progress_end_step(Progress *p, long s, double loss, const char *extra);
// A checkpoint of `done` steps was saved (checkpoint calls it): the loss log so
// far is kept on disk, so that a run resumed from that checkpoint, after this
// one is lost, continues it.
void progress_checkpointed(long done);
// Every rank calls it after step s with the same why: if not NULL, the loss log
// is kept and every rank stops with exit status 1, rank 0 printing "step s+1: why".
void progress_stop_if(Progress *p, long s, const char *why);
// Training ends: returns the communication counted since progress_start (and
// the steps it covers: fewer than --steps after --resume), then
// writes the trace and the loss log (fatal if either could not be written).
CommStats progress_end(Progress *p);
// For a FindNonFinite: the name of layer l's tensor (weight or bias) holding a
// value that is not finite among elements [first, first + count) of the layer's
// flat segment (weight, then bias), which are at x; or NULL.
const char *nonfinite_layer(int l, int out, int in, const float *x, size_t first, size_t count);

// ----------------------------------------------------------------------------
// after training

// Fills probs [VOCAB] with the model's probabilities of the symbol that follows
// the T symbols in ctx.
typedef void (*NextSymbol)(void *model, const uint8_t *ctx, float *probs);
// Rank 0 prints --sample words drawn from the model, one symbol at a time, from
// the seed's sampling stream. collective: every rank runs the loop (its forward
// needs every rank) and takes rank 0's draw; else rank 0 alone.
void report_samples(const Args *a, int T, int collective, NextSymbol next, void *model);

// Max over ranks of what the memory report measured.
typedef struct {
    size_t state;             // model-state bytes now
    size_t peak;              // peak of the total
    double formula;           // the stage's formula
    char fields[640];         // " mem_params=B ... mem_adam_v=B", then each category's
                              // peak " peak_params=B ... peak_workspace=B", for the summary line
} MemReport;

// Rank 0 prints the memory report: max over ranks of current and peak MiB per
// category, the total, then the stage's formula (text and bytes) beside the
// measured model state. Collective.
MemReport report_memory(const char *formula, double formula_bytes);
// Max over ranks of one category's peak bytes. Collective.
double report_peak(MemCat cat);
// Rank 0 prints the gradients' peak: the slices a rank keeps (b bytes x its
// shard_numel) and the full gradients in flight beside them, against a full
// bΨ. Collective (ZeRO-2 and -3).
void report_grads_at_peak(size_t b, size_t shard_numel, size_t numel);
// Rank 0 prints the peak of the layers gathered for compute, against a full bΨ.
// Collective (ZeRO-3).
void report_gathered_at_peak(size_t b, size_t numel, int prefetch);
// Rank 0 prints one row per collective kind in s (taken right after training),
// divided by its steps: calls, payload bytes and bytes sent per rank; then the
// stage's theory (text and bytes) beside the measured total.
void report_comm(const CommStats *s, const char *theory, double theory_bytes);
// Rank 0 prints what one kind of request cost per step, and how much of it ran
// under compute (rank 0's figures; note says what was overlapped).
void report_overlap(const char *what, const CommOverlap *o, long steps, const char *note);
// Rank 0 prints the summary line, the last line of stdout.
void report_summary(const char *stage, const Args *a, size_t params, double final_loss,
                    const MemReport *mem, const CommStats *comm);

#endif
