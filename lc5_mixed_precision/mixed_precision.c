// lc5_mixed_precision: ZeRO-3 as in lc4_zero3, with params and grads in 16 bits
// (bf16 by default, or fp16), fp32 master params and Adam state, and loss scaling.
//
// The model: T characters of context, each one-hot over 27 symbols ('.', a-z),
// concatenated into T*27 inputs; L hidden Linear layers with ReLU; a Linear to
// 27 logits; softmax cross-entropy averaged over the batch. Layer l's segment
// is its weight [out, in] then its bias.
//
// What this stage teaches: params, grads and the activations kept for backward
// need not be fp32. Here they are stored, gathered and reduce-scattered in
// --dtype (2 bytes each): half the memory and half the bytes on the wire. Each
// product reads 16-bit operands, sums in fp32 (tensor cores on a GPU) and is
// rounded to the 16-bit type, to nearest even. Adam cannot work in 16 bits (a
// step of 3e-3 on a weight of 1 is less than half of bf16's spacing there,
// 2^-7, and rounds away), so each rank keeps fp32 master params, m and v for
// its slices and rounds the master into the 16-bit params after each step.
// fp16 has 5 exponent bits: gradients below 6e-8 flush to zero. Loss scaling
// multiplies the loss by S before backward and divides the gradients by S in
// fp32 before Adam; a dynamic S starts at 2^16, halves on an overflow and
// doubles after --scale-window clean steps. An overflow (inf or NaN in any
// rank's slices) is agreed by all ranks, and every rank skips that step.
// With --dtype fp32 this stage computes exactly what lc4 does.
//
// Model-state memory per rank: params 2 + grads 2 + master 4 + m 4 + v 4 bytes
// per element of Ψ_pad/N: 16Ψ_pad/N, as lc4, now with the ZeRO paper's K = 12.
// Communication per micro-batch: lc4's collectives with 2-byte elements: about
// 3(N-1)/N x 2Ψ bytes sent per rank, half of lc4's.

// common/, the runtime every stage shares (common/README.md is its map); the
// same includes in every stage, so that a lecture's diff holds none of them.
#include "../common/checkpoint.h"   // training checkpoints: state_begin, state_add, checkpoint_save_if_due, _resume
#include "../common/comm.h"         // collectives, sync and async, counted: comm_all_reduce, comm_wait_timed, CommStats
#include "../common/data.h"         // the word list as examples and batches: data_load, data_batch, VOCAB
#include "../common/exercise.h"     // exercise_todo: what a stub of make exercise says when it runs
#include "../common/kernels.h"      // the arithmetic: matmul, bias, ReLU, softmax_xent, adam_update, fill, casts
#include "../common/mem.h"          // the tracked allocator: mem_alloc, mem_free, one category per kind of buffer
#include "../common/mlp.h"          // the model's shape and its names in a file: mlp_shape, mlp_numel, mlp_specs
#include "../common/print.h"        // print0: what rank 0 says
#include "../common/report.h"       // progress lines, the memory and communication reports, the summary line
#include "../common/rng.h"          // counter-based random numbers: any slice of a layer drawn alone (RNG_STREAM_*)
#include "../common/rt.h"           // the run on every rank: rt_init, rt_args (args.h), agree_input, rt_finalize
#include "../common/safetensors.h"  // model files: st_create, st_append, st_finish (mlp_open reads them)
#include "../common/shards.h"       // the sharding rule from lc2 on: shard_len (a layer's slice per rank)
#include "../common/theory.h"       // the formulas the reports print beside what was measured
#include "../common/trace.h"        // Chrome traces: trace_phase

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The options: every stage's (ARGS_EVERY_STAGE, args.h), then the lecture's own.
#define STAGE "lc5_mixed_precision"
#define OPTIONS ARGS_EVERY_STAGE " comm ranks-per-node bucket-mb prefetch dtype loss-scale initial-scale scale-window"
#define MAX_LAYERS 65

// ----------------------------------------------------------------------------
// the model

typedef struct {
    int in, out;
    size_t off;     // where the layer's segment would start in a full flat buffer
    size_t numel;   // out*in weights then out biases
    size_t pad;     // numel rounded up to a multiple of N
    size_t shard;   // pad/N: the length of every rank's slice
    size_t soff;    // where the layer's slice starts in the shard buffers
} Layer;

typedef struct {
    int T, nlayers;             // context length; Linear layers (hidden + output)
    Layer layer[MAX_LAYERS];
    size_t numel;               // Ψ
    size_t shard_numel;         // Ψ_pad/N: the sum of the layers' slices
    DType dt;                   // of params and grads (--dtype)
    void *params;               // [Ψ_pad/N] of dt: this rank's slices only
    void *grads;                // [Ψ_pad/N] of dt: this rank's slices only
    float *master;              // [Ψ_pad/N] fp32: what Adam updates (params itself in fp32)
} Model;

typedef struct {
    int rows;                   // examples per micro-batch
    void *act[MAX_LAYERS + 1];  // of dt: act[0] the one-hot input, act[l+1] layer l's output
    float *d32;                 // gradient w.r.t. the current activation, in fp32
    void *d16;                  // the same rounded to dt: what the products and the bias read
    float *f32;                 // workspace: a layer's output in fp32 before it is rounded; the logits
    float *unscaled;            // workspace: this rank's slice of a layer's gradient in fp32, unscaled
    uint8_t *ctx;               // [rows][T] context symbols
    int *targets;               // [rows]
} Acts;

typedef struct {
    AdamHyper h;
    float *m, *v;               // [Ψ_pad/N] each: this rank's slices only
    long step;                  // steps taken, for bias correction
} Adam;

// A dynamic scale stays within [MIN_SCALE, MAX_SCALE]: above 2^24 every fp16
// gradient over 2^-8 overflows, and bf16 has fp32's range and needs no scale.
#define MIN_SCALE 1.0f
#define MAX_SCALE 16777216.0f
#define MAX_SKIPS_AT_FLOOR 10  // overflows in a row at the lowest scale that stop the run

typedef struct {
    int dynamic;                // --loss-scale dynamic: the scale adapts
    float scale;                // the loss is multiplied by it before backward
    int window, clean;          // clean steps that double it; clean steps so far
    long skipped;               // steps skipped for an overflow
    int at_floor;               // steps skipped in a row at the lowest scale
    const char *stop;           // NULL, or why training cannot go on (scaler_update)
} Scaler;

// Consecutive layers whose gradients are reduce-scattered together.
typedef struct {
    int lo, hi;                 // layers lo..hi; backward finishes hi first
    size_t count;               // elements per rank: the sum of the layers' slices
    void *buf;                  // their full gradients (dt), rank-major, while needed
    CommReq req;
} Bucket;

typedef struct {
    Args a;
    Model model;
    Adam opt;
    Scaler scaler;
    Acts acts;
    Data data;
    double loss;                // the last step's mean loss over the global batch
    long start;                 // steps done before this run (--resume)
    CommStats comm;             // the communication of the training steps
    void *gathered[MAX_LAYERS];   // layer l's full params (dt) while gathered, else NULL
    CommReq gather_req[MAX_LAYERS]; // its all-gather; -1 once waited for
    CommOverlap ag;             // time of the all-gathers, and of it under compute
    Bucket bucket[MAX_LAYERS];
    int nbuckets;
    Bucket *sending;            // the bucket whose reduce-scatter is in flight
    CommOverlap rs;             // time of the reduce-scatters, and of it under compute
} Trainer;

void model_build(Model *m, const Args *a) {
    memset(m, 0, sizeof *m);
    m->T = a->context;
    m->nlayers = mlp_layers(a->layers);
    for (int l = 0; l < m->nlayers; l++) {
        Layer *L = &m->layer[l];
        mlp_shape(a->context, a->hidden, a->layers, l, &L->out, &L->in);
        L->off = m->numel;
        L->numel = mlp_numel(L->out, L->in);
        L->shard = shard_len(L->numel, rt.world);  // the sharding rule (common/shards.h)
        L->pad = L->shard * rt.world;
        L->soff = m->shard_numel;
        m->numel += L->numel;
        m->shard_numel += L->shard;
    }
    m->dt = strcmp(a->dtype, "fp32") == 0 ? DT_F32 : strcmp(a->dtype, "fp16") == 0 ? DT_F16 : DT_BF16;
    m->params = mem_alloc(MEM_PARAMS, m->shard_numel * dtype_size(m->dt));
    m->grads = mem_alloc(MEM_GRADS, m->shard_numel * dtype_size(m->dt));
    m->master = m->dt == DT_F32 ? m->params : mem_alloc(MEM_MASTER_PARAMS, m->shard_numel * sizeof(float));
}

// How many elements of this rank's slice of a layer are real: the last slices
// of a segment may be partly or wholly padding (a layer smaller than N leaves
// some ranks nothing to own).
size_t own_numel(const Layer *L) {
    size_t first = (size_t)rt.rank * L->shard;
    return first >= L->numel ? 0 : (L->numel - first < L->shard ? L->numel - first : L->shard);
}

// Elements [first, first+count) of layer l's segment as PyTorch's nn.Linear
// draws them: uniform in +-1/sqrt(fan_in), weights then bias. Each element has
// its own random number, so any slice can be drawn on its own.
void init_segment(float *dst, const Layer *L, int l, uint64_t seed, size_t first, size_t count) {
    float bound = 1.0f / sqrtf((float)L->in);
    init_uniform(dst, count, bound, seed, RNG_STREAM_INIT + (uint64_t)l, first);
}

// Draws only this rank's slice of each layer: the same numbers lc0 draws for
// those elements, and the whole model never exists anywhere.
void init_params(Model *m, uint64_t seed) {
    for (int l = 0; l < m->nlayers; l++) {
        const Layer *L = &m->layer[l];
        init_segment(m->master + L->soff, L, l, seed, (size_t)rt.rank * L->shard, own_numel(L));
    }
    cast_from_f32(m->params, m->master, m->dt, m->shard_numel);  // what the layers read: the master in dt
}

// ----------------------------------------------------------------------------
// sharding: the collectives that replace lc1's all-reduce

// Groups layers into buckets from the last layer down, the order backward
// finishes them: a bucket takes the next layer while their padded gradients fit
// in --bucket-mb MiB. With 0, or a layer bigger than that, a layer goes alone.
void buckets_plan(Trainer *t) {
    const Model *m = &t->model;
    double cap = t->a.bucket_mb * 1048576.0, N = rt.world;
    t->nbuckets = 0;
    for (int l = m->nlayers - 1; l >= 0; l--) {
        Bucket *b = t->nbuckets ? &t->bucket[t->nbuckets - 1] : NULL;
        if (b && dtype_size(m->dt) * N * (double)(b->count + m->layer[l].shard) <= cap) {
            b->lo = l;
            b->count += m->layer[l].shard;
            continue;
        }
        b = &t->bucket[t->nbuckets++];
        *b = (Bucket){ .lo = l, .hi = l, .count = m->layer[l].shard };
    }
}

// Waits for the reduce-scatter in flight, then frees its full gradients.
void reduce_scatter_wait(Trainer *t) {
    Bucket *b = t->sending;
    if (!b) return;
    comm_wait_timed(b->req, &t->rs);
    mem_free(b->buf);
    b->buf = NULL;
    t->sending = NULL;
}

// Sends bucket b's gradient: each rank gets the sum over ranks of its slices.
void reduce_scatter_launch(Trainer *t, Bucket *b) {
    reduce_scatter_wait(t);  // one in flight at a time keeps the memory bounded
    const Model *m = &t->model;
    void *shards = dtype_at(m->grads, m->dt, m->layer[b->lo].soff);
    // The reduce-scatter overwrites my slices. Adding what they hold (the earlier
    // micro-batches) to my own contribution keeps it in the sum.
    add_to(dtype_at(b->buf, m->dt, (size_t)rt.rank * b->count), shards, m->dt, b->count);
    b->req = comm_reduce_scatter_async(b->buf, shards, b->count, m->dt);  // pairs added in fp32
    t->sending = b;
}

// Backward has produced g, layer l's full gradient. A bucket of one layer sends
// g itself; a bigger bucket needs its layers' slices rank-major (rank r's slices
// of every layer together), so g is copied in and freed.
void grads_ready(Trainer *t, int l, void *g) {
    const Model *m = &t->model;
    const Layer *L = &m->layer[l];
    Bucket *b = t->bucket;
    while (l < b->lo) b++;
    if (b == t->sending) reduce_scatter_wait(t);  // the previous micro-batch's, still in flight
    if (b->lo == b->hi) {
        b->buf = g;
    } else {
        if (!b->buf) b->buf = mem_alloc(MEM_GRADS, b->count * rt.world * dtype_size(m->dt));
        size_t at = L->soff - m->layer[b->lo].soff;
        for (int r = 0; r < rt.world; r++)
            copy_dt(dtype_at(b->buf, m->dt, (size_t)r * b->count + at),
                    dtype_at(g, m->dt, (size_t)r * L->shard), m->dt, L->shard);
        mem_free(g);
    }
    if (l == b->lo) reduce_scatter_launch(t, b);
}

// Starts the all-gather of layer l's params into a fresh buffer (comm_buffers).
void gather_launch(Trainer *t, int l) {
    const Model *m = &t->model;
    const Layer *L = &m->layer[l];
    t->gathered[l] = mem_alloc(MEM_COMM_BUFFERS, L->pad * dtype_size(m->dt));
    t->gather_req[l] = comm_all_gather_async(dtype_at(m->params, m->dt, L->soff), t->gathered[l], L->shard, m->dt);
}

// Layer l's full params, gathered from every rank's slice, waiting if needed.
// With --prefetch 1 the gather of layer `next` is launched first, so it runs on
// the comm thread while layer l computes.
void *gather_params(Trainer *t, int l, int next) {
    if (!t->gathered[l]) gather_launch(t, l);
    if (t->a.prefetch && next >= 0 && next < t->model.nlayers && !t->gathered[next])
        gather_launch(t, next);
    if (t->gather_req[l] >= 0) comm_wait_timed(t->gather_req[l], &t->ag);
    t->gather_req[l] = -1;
    return t->gathered[l];
}

// The layer has run: its full params go back to mem.
void gather_free(Trainer *t, int l) {
    mem_free(t->gathered[l]);
    t->gathered[l] = NULL;
}

// ----------------------------------------------------------------------------
// forward and backward

void acts_alloc(Acts *x, const Model *m, int rows) {
    memset(x, 0, sizeof *x);
    x->rows = rows;
    int widest = m->layer[0].in;
    size_t e = dtype_size(m->dt), shard = 0;  // the largest slice, for unscaled
    x->act[0] = mem_alloc(MEM_ACTIVATIONS, (size_t)rows * m->layer[0].in * e);
    for (int l = 0; l < m->nlayers; l++) {
        x->act[l + 1] = mem_alloc(MEM_ACTIVATIONS, (size_t)rows * m->layer[l].out * e);
        if (m->layer[l].out > widest) widest = m->layer[l].out;
        if (m->layer[l].shard > shard) shard = m->layer[l].shard;
    }
    x->d32 = mem_alloc(MEM_ACTIVATIONS, (size_t)rows * widest * sizeof(float));
    x->d16 = mem_alloc(MEM_ACTIVATIONS, (size_t)rows * widest * e);
    x->f32 = mem_alloc(MEM_WORKSPACE, (size_t)rows * widest * sizeof(float));
    x->unscaled = mem_alloc(MEM_WORKSPACE, shard * sizeof(float));
    x->ctx = mem_alloc(MEM_DATA, (size_t)rows * m->T);
    x->targets = mem_alloc(MEM_DATA, (size_t)rows * sizeof(int));
}

void acts_free(Acts *x, const Model *m) {
    for (int l = 0; l <= m->nlayers; l++) mem_free(x->act[l]);
    mem_free(x->d32);
    mem_free(x->d16);
    mem_free(x->f32);
    mem_free(x->unscaled);
    mem_free(x->ctx);
    mem_free(x->targets);
}

// Runs rows examples from x->ctx; the logits end up in x->f32, in fp32.
// Collective: every rank gathers each layer's params. The last layer's stay
// gathered, for the backward that usually follows (gather_free them if not).
// Bias and ReLU apply to the fp32 sums; the output is rounded to dt once.
void forward(Trainer *t, int rows) {
    Model *m = &t->model;
    Acts *x = &t->acts;
    one_hot_dt(x->act[0], m->dt, x->ctx, rows, m->T, VOCAB);
    for (int l = 0; l < m->nlayers; l++) {
        trace_phase("forward", l);
        const Layer *L = &m->layer[l];
        float *y = x->f32;
        void *W = gather_params(t, l, l + 1);  // weight [out, in], then the bias
        matmul_dt(y, x->act[l], W, m->dt, rows, L->out, L->in, 0, 1, 0.0f);
        bias_add_dt(y, dtype_at(W, m->dt, (size_t)L->out * L->in), m->dt, rows, L->out);
        if (l < m->nlayers - 1) relu_forward(y, y, (size_t)rows * L->out);
        cast_from_f32(x->act[l + 1], y, m->dt, (size_t)rows * L->out);
        if (l < m->nlayers - 1) gather_free(t, l);
    }
    cast_to_f32(x->f32, x->act[m->nlayers], m->dt, (size_t)rows * VOCAB);  // the loss reads the stored logits
    trace_phase(NULL, 0);
}

// Adds this micro-batch's gradients, summed over ranks, into m->grads: each
// layer's full gradient goes to the comm thread as soon as it is computed.
// Gradients are of the mean loss over the global batch times the loss scale S,
// so each example's share is scaled by S/B here. Returns the sum of the losses.
double forward_backward(Trainer *t, int global_batch) {
    Model *m = &t->model;
    Acts *x = &t->acts;
    int rows = x->rows;
    forward(t, rows);
    float *d = x->d32;
    double loss = softmax_xent(x->f32, x->targets, d, rows, VOCAB,
                               t->scaler.scale / (float)global_batch);
    for (int l = m->nlayers - 1; l >= 0; l--) {
        trace_phase("backward", l);
        const Layer *L = &m->layer[l];
        // Gathered again; the last layer still has its forward gather. Layer 0's
        // backward never reads W (its input is data), but a framework cannot
        // know that and gathers every layer: so does this one (see the README).
        void *W = gather_params(t, l, l - 1);
        cast_from_f32(x->d16, d, m->dt, (size_t)rows * L->out);  // the gradient as stored in dt
        void *g = mem_alloc(MEM_GRADS, L->pad * dtype_size(m->dt));  // zeros, padding included
        matmul_to_dt(g, x->d16, x->act[l], m->dt, L->out, L->in, rows, 1, 0);  // summed in fp32, stored in dt
        bias_grad_dt(dtype_at(g, m->dt, (size_t)L->out * L->in), x->d16, m->dt, rows, L->out);
        grads_ready(t, l, g);  // may launch a reduce-scatter: it runs under what follows
        if (l == 0) {  // the input is data: no gradient needed
            gather_free(t, 0);
            break;
        }
        matmul_dt(d, x->d16, W, m->dt, rows, L->in, L->out, 0, 0, 0.0f);  // d16 is read, d rewritten
        relu_backward_dt(d, d, x->act[l], m->dt, (size_t)rows * L->in);
        gather_free(t, l);
    }
    trace_phase(NULL, 0);
    return loss;
}

// ----------------------------------------------------------------------------
// the optimizer

void adam_alloc(Adam *o, const Args *a, size_t n) {
    o->h = (AdamHyper){ a->lr, a->beta1, a->beta2, a->eps, a->weight_decay };
    o->m = mem_alloc(MEM_ADAM_M, n * sizeof(float));
    o->v = mem_alloc(MEM_ADAM_V, n * sizeof(float));
    o->step = 0;
}

// Backward adds into the gradients, so they must start each step at zero.
void zero_grad(Model *m) {
    zero_dt(m->grads, m->dt, m->shard_numel);
}

// --loss-scale: dynamic starts at --initial-scale (2^16); auto is dynamic for
// fp16 (whose exponent is too small for raw gradients), otherwise none (1).
void scaler_init(Scaler *s, const Args *a) {
    const char *v = a->loss_scale;
    if (strcmp(v, "auto") == 0) v = strcmp(a->dtype, "fp16") == 0 ? "dynamic" : "none";
    *s = (Scaler){ .dynamic = strcmp(v, "dynamic") == 0, .window = a->scale_window };
    s->scale = s->dynamic ? a->initial_scale : strcmp(v, "none") == 0 ? 1.0f : strtof(v, NULL);
}

// After each step: an overflow halves a dynamic scale (never below MIN_SCALE);
// window clean steps in a row double it (never above MAX_SCALE). MAX_SKIPS_AT_FLOOR
// overflows in a row at the lowest scale, where halving cannot help, set s->stop
// (DeepSpeed stops there too; PyTorch's GradScaler has no floor, skips forever).
void scaler_update(Scaler *s, int overflow) {
    float step_scale = s->scale, lowest = s->dynamic ? MIN_SCALE : s->scale;  // this step's; the floor
    // EXERCISE lc5.1: the dynamic loss scale's rule, after each step
    //| An overflow counts a skipped step and breaks the run of clean steps; a
    //| dynamic scale then halves, but never below MIN_SCALE. s->window clean steps
    //| in a row double a dynamic scale, unless that would pass MAX_SCALE, and
    //| start a new run. A static scale never moves.
    if (overflow) {
        s->skipped++;
        s->clean = 0;
        if (s->dynamic) s->scale = fmaxf(s->scale / 2.0f, MIN_SCALE);
    } else if (s->dynamic && ++s->clean == s->window) {
        if (s->scale * 2.0f <= MAX_SCALE) s->scale *= 2.0f;
        s->clean = 0;
    }
    // STUB: (void)s, (void)overflow;
    // END EXERCISE
    s->at_floor = overflow && step_scale <= lowest ? s->at_floor + 1 : 0;
    if (s->at_floor < MAX_SKIPS_AT_FLOOR) return;
    static char why[256];
    snprintf(why, sizeof why, s->dynamic ? "%d steps in a row overflowed with the loss scale at its lowest, %g: "
             "the gradients overflow even unscaled; training stopped" : "%d steps in a row overflowed at the static "
             "loss scale %g (try a smaller --loss-scale, or dynamic); training stopped", s->at_floor, step_scale);
    s->stop = why;
}

// 1 on every rank if no rank's gradient slices hold an inf or NaN.
int grads_finite(Model *m) {
    // EXERCISE lc5.2: did any rank's gradient overflow? (here), and the step skipped if so (optimizer_step)
    //| Each rank sees only its own slices (all_finite_dt); every rank must reach the
    //| same answer, or the ranks that step and those that skip would hold different
    //| models from then on. One int is enough to agree on it.
    int finite = all_finite_dt(m->grads, m->dt, m->shard_numel);
    comm_all_reduce(&finite, 1, DT_I32, OP_MIN);
    return finite;
    // STUB: (void)m;
    // STUB: return 1;
    // END EXERCISE
}

// This rank's gradient slice of layer l in fp32, divided by the loss scale.
float *unscaled_grads(Trainer *t, int l) {
    // EXERCISE lc5.3: this rank's gradient slice of layer l, in fp32, with the loss scale taken out
    //| m->grads holds the slices in dt (layer l's at L->soff; dtype_at finds it),
    //| computed from the loss times t->scaler.scale. Widen own_numel(L) of them into
    //| the fp32 scratch t->acts.unscaled and undo the scale there; return the scratch.
    const Model *m = &t->model;
    const Layer *L = &m->layer[l];
    cast_to_f32(t->acts.unscaled, dtype_at(m->grads, m->dt, L->soff), m->dt, own_numel(L));
    scale(t->acts.unscaled, 1.0f / t->scaler.scale, own_numel(L));
    return t->acts.unscaled;
    // STUB: (void)l;
    // STUB: return t->acts.unscaled;
    // END EXERCISE
}

// The global L2 norm of the gradient (as torch.nn.utils.clip_grad_norm_): each
// rank sums the squares of its slices, then one number is all-reduced, and every
// rank computes the same clipping factor from it.
double grad_norm(Trainer *t) {
    double sq = 0.0;
    for (int l = 0; l < t->model.nlayers; l++)
        sq += sum_squares(unscaled_grads(t, l), own_numel(&t->model.layer[l]));
    comm_all_reduce(&sq, 1, DT_F64, OP_SUM);
    return sqrt(sq);
}

// Updates this rank's slice of every layer in fp32, from the unscaled gradient
// times clip; the layers read the result rounded to dt.
void adam_step(Trainer *t, float clip) {
    // EXERCISE lc5.4: one Adam step on the fp32 master, then the 16-bit params rounded from it
    //| For each layer: this rank's gradient slice, unscaled (unscaled_grads) and
    //| times clip; Adam on the master slice (m->master at L->soff) with m and v;
    //| then the params the layers read, in dt, rounded once from the new master
    //| (cast_from_f32). Not Adam on the 16-bit params: a step smaller than half of
    //| bf16's spacing rounds away. One step count for the whole model.
    Adam *o = &t->opt;
    Model *m = &t->model;
    o->step++;
    for (int l = 0; l < m->nlayers; l++) {
        const Layer *L = &m->layer[l];
        float *g = unscaled_grads(t, l);
        scale(g, clip, own_numel(L));
        adam_update(m->master + L->soff, g, o->m + L->soff, o->v + L->soff, own_numel(L), &o->h,
                    o->step);
        cast_from_f32(dtype_at(m->params, m->dt, L->soff), m->master + L->soff, m->dt, own_numel(L));
    }
    // STUB: (void)t, (void)clip;
    // END EXERCISE
}

// ----------------------------------------------------------------------------
// model files

// Reads only this rank's slice of each layer from a safetensors file.
const char *load_params(Model *m, const char *path) {
    StFile c;
    const char *err = mlp_open(&c, path, m->nlayers);
    for (int l = 0; l < m->nlayers && !err; l++) {
        const Layer *L = &m->layer[l];
        err = mlp_read_layer(&c, l, L->out, L->in, (size_t)rt.rank * L->shard, own_numel(L),
                              m->master + L->soff);
    }
    st_close(&c);
    cast_from_f32(m->params, m->master, m->dt, m->shard_numel);
    return err;
}

// Collective: layer by layer, every rank gathers the fp32 master params (the
// model at full precision) and rank 0 appends them to the file. Returns rank
// 0's error, if any (NULL elsewhere).
const char *save_params(Trainer *t, const char *path) {
    const Model *m = &t->model;
    StTensor specs[2 * MAX_LAYERS];
    for (int l = 0; l < m->nlayers; l++) mlp_specs(specs + 2 * l, l, m->layer[l].out, m->layer[l].in);
    StWriter f;
    const char *err = rt.rank == 0 ? st_create(&f, path, 2 * m->nlayers, specs) : NULL;
    for (int l = 0; l < m->nlayers; l++) {
        const Layer *L = &m->layer[l];
        float *p = mem_alloc(MEM_COMM_BUFFERS, L->pad * sizeof(float));
        comm_all_gather(m->master + L->soff, p, L->shard, DT_F32);  // weight, then bias: the file's order
        if (rt.rank == 0 && !err) err = st_append(&f, p, L->numel);
        mem_free(p);
    }
    if (rt.rank == 0 && !err) err = st_finish(&f);
    return err;
}

// ----------------------------------------------------------------------------
// training checkpoints

// The state a step leaves for the next: the 16-bit params, the fp32 master,
// Adam's m, v and step count, and the loss scale's state (a skipped step moves
// the scale, not Adam's count). Each rank writes its own slices.
void describe_state(void *trainer, TrainState *s) {
    Trainer *t = trainer;
    Scaler *c = &t->scaler;
    state_begin(s, STAGE, &t->a, &t->data, &t->opt.step);
    if (t->model.dt != DT_F32) state_add(s, "params16", t->model.params, t->model.dt, 1);
    state_add(s, "master", t->model.master, DT_F32, 1);
    state_add(s, "m", t->opt.m, DT_F32, 1);
    state_add(s, "v", t->opt.v, DT_F32, 1);
    state_value(s, "scale", &c->scale, MIN_SCALE, c->dynamic ? MAX_SCALE : 1e9);  // --loss-scale's range
    state_value(s, "clean", &c->clean, 0, c->window - 1);
    state_value(s, "skipped", &c->skipped, 0, 1e9);  // --steps' bound
    state_value(s, "at_floor", &c->at_floor, 0, MAX_SKIPS_AT_FLOOR);
}

// Continues from --resume (checkpoint_resume). A static loss scale is an
// option, not state: it stays what this run was given.
long resume_state(Trainer *t) {
    float scale = t->scaler.scale;
    long done = checkpoint_resume(describe_state, t);
    if (!t->scaler.dynamic) t->scaler.scale = scale;
    return done;
}

// ----------------------------------------------------------------------------
// training

void trainer_setup(Trainer *t, const Args *a) {
    memset(t, 0, sizeof *t);
    t->a = *a;
    rt_setup(a);
    agree_input(data_load(&t->data, a->data, a->context, a->seed));
    model_build(&t->model, a);
    adam_alloc(&t->opt, a, t->model.shard_numel);
    scaler_init(&t->scaler, a);
    buckets_plan(t);
    acts_alloc(&t->acts, &t->model, a->batch / (rt.world * a->accum));
    rt_check_memory();  // before the buffers are written: a model that does not fit is refused here
    if (a->resume) t->start = resume_state(t);
    else if (a->init) agree_input(load_params(&t->model, a->init));
    else init_params(&t->model, a->seed);
}

void trainer_teardown(Trainer *t) {
    acts_free(&t->acts, &t->model);
    mem_free(t->opt.m);
    mem_free(t->opt.v);
    if (t->model.master != t->model.params) mem_free(t->model.master);
    mem_free(t->model.params);
    mem_free(t->model.grads);
    data_free(&t->data);
}

// The update, unless a gradient overflowed anywhere: then every rank skips it
// and a dynamic loss scale halves. Returns 1 if the step was taken.
int optimizer_step(Trainer *t) {
    // EXERCISE lc5.2: the step, or its skip on every rank alike
    //| With clipping, the factor is clip_factor(grad_norm(t), t->a.clip). A skipped
    //| step leaves params, master, m, v and Adam's step count as they are; either
    //| way the scaler learns the outcome (scaler_update).
    int finite = grads_finite(&t->model);
    if (finite) adam_step(t, t->a.clip > 0 ? clip_factor(grad_norm(t), t->a.clip) : 1.0f);
    scaler_update(&t->scaler, !finite);
    return finite;
    // STUB: (void)t;
    // STUB: return 0;
    // END EXERCISE
}

// One optimizer step over global batch `step`: this rank's micro-batches, then
// the update. Returns the mean loss over the global batch.
double train_step(Trainer *t, long step) {
    Model *m = &t->model;
    Acts *x = &t->acts;
    int B = t->a.batch, per_rank = B / rt.world;
    zero_grad(m);
    double loss = 0.0;
    for (int k = 0; k < t->a.accum; k++) {
        data_batch(&t->data, step, B, rt.rank * per_rank + k * x->rows, x->rows, x->ctx, x->targets);
        loss += forward_backward(t, B);
    }
    // Each rank's gradient covers its B/N examples (already scaled by 1/B): the
    // sum over ranks is the gradient of the global batch. The reduce-scatters
    // were launched during backward; the last may still be in flight.
    reduce_scatter_wait(t);
    comm_metric_sum(&loss, 1);
    trace_phase("optimizer", -1);
    optimizer_step(t);
    trace_phase(NULL, 0);
    return loss / B;
}

// The first parameter tensor in which this rank holds a value that is not
// finite, or NULL: asked when the loss is not finite.
const char *nonfinite_params(void *trainer) {
    const Model *m = &((Trainer *)trainer)->model;
    const char *name = NULL;
    for (int l = 0; l < m->nlayers && !name; l++) {
        const Layer *L = &m->layer[l];
        name = nonfinite_layer(l, L->out, L->in, m->master + L->soff, (size_t)rt.rank * L->shard, own_numel(L));
    }
    return name;
}

void train(Trainer *t) {
    Progress p;
    progress_start(&p, &t->a, nonfinite_params, t);
    t->rs = t->ag = (CommOverlap){ 0 };
    for (long s = t->start; s < t->a.steps; s++) {
        progress_begin_step(&p);
        t->loss = train_step(t, s);
        char scale[64];
        snprintf(scale, sizeof scale, " | scale %g | skipped %ld", t->scaler.scale, t->scaler.skipped);
        progress_end_step(&p, s, t->loss, scale);
        progress_stop_if(&p, s, t->scaler.stop);
        checkpoint_save_if_due(&t->a, s + 1, describe_state, t);
    }
    t->comm = progress_end(&p);
}

// ----------------------------------------------------------------------------
// sampling

// The probabilities of the symbol after the T symbols in ctx: a forward of one row.
void next_symbol(void *trainer, const uint8_t *ctx, float *probs) {
    Trainer *t = trainer;
    memcpy(t->acts.ctx, ctx, (size_t)t->model.T);
    forward(t, 1);
    gather_free(t, t->model.nlayers - 1);  // no backward follows
    softmax_row(probs, t->acts.f32, VOCAB);
}

// Rank 0 prints words drawn from the trained model, one symbol at a time. Every
// rank runs the loop: each forward gathers the layers from all of them, and the
// same seed makes every rank draw the same words.
void sample_words(Trainer *t) { report_samples(&t->a, t->model.T, 1, next_symbol, t); }

// ----------------------------------------------------------------------------
// reports

// The model state this stage keeps per rank, in bytes: (2 + 2 + 4 + 4 + 4)
// Ψ_pad/N, or (4 + 4 + 4 + 4) Ψ_pad/N in fp32 where the params are the master.
double model_state_formula(const Model *m) {
    // EXERCISE lc5.5: the stage's formulas: its model state (here) and traffic (comm_theory)
    //| Ψ = m->numel, Ψ_pad = m->shard_numel x N; params and grads of dtype_size(m->dt)
    //| bytes; fp32 master, m and v; in fp32 the params are the master (no copy).
    int b = (int)dtype_size(m->dt);  // in fp32 the params are the master: k = 8, not 12
    return theory_model_state(ZERO_3, (double)m->numel, (double)(m->shard_numel * rt.world), rt.world, b,
                              m->dt == DT_F32 ? 8 : 12);
    // STUB: (void)m;
    // STUB: return 0.0;
    // END EXERCISE
}
// Bytes each rank sends per step under the ring model: lc4's per micro-batch
// (ZeRO-3's 3(N-1)/N Ψ_pad less the last layer's second gather) in dt; the
// overflow flag's all-reduce (an int); with clipping one all-reduce of a double.
double comm_theory(const Trainer *t) {
    // EXERCISE lc5.5: the bytes each rank sends per step, in the ring model
    //| lc4's collectives with elements of dtype_size(m->dt) bytes, and the
    //| overflow flag's all-reduce every step.
    const Model *m = &t->model;
    double psi = (double)m->numel, pad = (double)(m->shard_numel * rt.world), e = (double)dtype_size(m->dt);
    double last = e * (double)m->layer[m->nlayers - 1].pad;
    double micro = theory_comm(ZERO_3, psi, pad, rt.world, (int)e) - theory_gather(last, rt.world);
    return t->a.accum * micro + theory_all_reduce(4.0, rt.world) +
           (t->a.clip > 0 ? theory_all_reduce(8.0, rt.world) : 0.0);
    // STUB: (void)t;
    // STUB: return 0.0;
    // END EXERCISE
}

void report(Trainer *t) {
    const Model *m = &t->model;
    int e = (int)dtype_size(m->dt);  // bytes per element of params and grads; in fp32 no master copy
    MemReport mem = report_memory(theory_model_state_text(ZERO_3, m->numel, m->shard_numel * rt.world, rt.world,
                                                          e, m->dt == DT_F32 ? 8 : 12), model_state_formula(m));
    checkpoint_report();
    report_grads_at_peak((size_t)e, m->shard_numel, m->numel);
    report_gathered_at_peak((size_t)e, m->numel, t->a.prefetch);
    Traffic traffic = { .stage = ZERO_3, .b = e, .accum = t->a.accum, .clip = t->a.clip > 0, .psi = m->numel,
                        .psi_pad = m->shard_numel * rt.world, .n = rt.world, .overflow_flag = 1, .dtype = dtype_name(m->dt) };
    report_comm(&t->comm, theory_traffic_text(&traffic), comm_theory(t));
    char note[32];
    snprintf(note, sizeof note, "%d bucket%s", t->nbuckets, t->nbuckets > 1 ? "s" : "");
    report_overlap("reduce-scatter", &t->rs, t->comm.steps, note);
    report_overlap("all-gather", &t->ag, t->comm.steps, t->a.prefetch ? "prefetch on" : "prefetch off");
    print0("\nloss scale: %s, %g at the end, %ld of %ld steps skipped for an overflow\n",
           t->scaler.dynamic ? "dynamic" : "static", t->scaler.scale, t->scaler.skipped, t->a.steps);
    report_summary(STAGE, &t->a, m->numel, t->loss, &mem, &t->comm);
}

// ----------------------------------------------------------------------------
// main

#ifndef LECTURE_TEST
int main(int argc, char **argv) {
    rt_init(&argc, &argv, STAGE);
    Args a;
    rt_args(&a, argc, argv, OPTIONS);
    Trainer t;
    trainer_setup(&t, &a);
    print0("%s: %d rank%s, Ψ = %zu parameters (%d Linear layers), %zu words, %zu examples\n",
           STAGE, rt.world, rt.world > 1 ? "s" : "", t.model.numel, t.model.nlayers,
           t.data.nwords, t.data.n);
    print0("each rank owns 1/%d of every layer: %zu of Ψ_pad = %zu (each layer padded to a "
           "multiple of N)\n", rt.world, t.model.shard_numel, t.model.shard_numel * rt.world);
    train(&t);
    const char *err = a.save_model ? save_params(&t, a.save_model) : NULL;
    if (err) fatal("%s", err);
    sample_words(&t);
    report(&t);
    trainer_teardown(&t);
    rt_finalize();
    return 0;
}
#endif
