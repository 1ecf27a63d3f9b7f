// lc2_zero1: ZeRO stage 1. Data parallelism as in lc1_distributed_adam, but the
// optimizer state is sharded: each rank keeps Adam's m and v for its slice only.
//
// The model: T characters of context, each one-hot over 27 symbols ('.', a-z),
// concatenated into T*27 inputs; L hidden Linear layers with ReLU; a Linear to
// 27 logits; softmax cross-entropy averaged over the batch. All parameters live
// in one flat buffer; layer l's segment is its weight [out, in] then its bias.
//
// What this stage teaches: in lc1 every rank ran the same Adam update on the
// whole model, so N ranks held N identical copies of m and v. Here each layer's
// segment is padded to a multiple of N and cut into N equal slices; rank r owns
// slice r of every segment. After backward, one reduce-scatter per layer gives
// each rank the summed gradient of its own slice only; the rank updates its
// slice of the params (and keeps m and v for it alone); one all-gather per layer
// then rebuilds the full params on every rank. Global-norm clipping needs only
// one number from every rank: the sum of squares of its slices.
// --grad-sync allreduce is the common first attempt (all-reduce everything, then
// keep your slice): it works, and the report shows what it costs.
//
// Model-state memory per rank: params 4Ψ + grads 4Ψ + m and v 8Ψ_pad/N bytes,
// where Ψ_pad counts the padding (Ψ_pad - Ψ < N per layer).
// Communication per step: a reduce-scatter and an all-gather of Ψ_pad floats;
// in the ring algorithm each rank sends (N-1)/N x 4Ψ_pad for each, 2(N-1)/N x
// 4Ψ_pad in all: what lc1's all-reduce cost, since a ring all-reduce is exactly a
// reduce-scatter followed by an all-gather.

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
#define STAGE "lc2_zero1"
#define OPTIONS ARGS_EVERY_STAGE " comm ranks-per-node grad-sync"
#define MAX_LAYERS 65

// ----------------------------------------------------------------------------
// the model

typedef struct {
    int in, out;
    size_t off;     // where the layer's segment starts in the flat buffers
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
    float *params, *grads;      // [Ψ] each
} Model;

typedef struct {
    int rows;                   // examples per micro-batch
    float *act[MAX_LAYERS + 1]; // act[0] the one-hot input, act[l+1] layer l's output
    float *d[2];                // gradients w.r.t. activations, ping-pong
    uint8_t *ctx;               // [rows][T] context symbols
    int *targets;               // [rows]
} Acts;

typedef struct {
    AdamHyper h;
    float *m, *v;               // [Ψ_pad/N] each: this rank's slices only
    long step;                  // steps taken, for bias correction
} Adam;

typedef struct {
    Args a;
    Model model;
    Adam opt;
    Acts acts;
    Data data;
    double loss;                // the last step's mean loss over the global batch
    long start;                 // steps done before this run (--resume)
    CommStats comm;             // the communication of the training steps
    float *padded;              // one segment padded to a multiple of N, for the collectives
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
    m->params = mem_alloc(MEM_PARAMS, m->numel * sizeof(float));
    m->grads = mem_alloc(MEM_GRADS, m->numel * sizeof(float));
}

// This rank's slice of layer l inside a full buffer, and how many of its
// elements are real: the last slices of a segment may be partly or wholly
// padding (a layer smaller than N leaves some ranks nothing to own).
float *own_slice(const Model *m, float *buf, int l) {
    return buf + m->layer[l].off + (size_t)rt.rank * m->layer[l].shard;
}
size_t own_numel(const Layer *L) {
    // EXERCISE lc2.1: how many real elements this rank's slice of layer L holds
    //| The segment of L->numel elements is padded to L->pad = N x L->shard;
    //| rank r's slice is [r x shard, (r + 1) x shard). The padding is at the end,
    //| so the last slices may be partly padding, and with a layer smaller than N
    //| some ranks own none of it. Adam and clipping read exactly these elements.
    size_t first = (size_t)rt.rank * L->shard;
    return first >= L->numel ? 0 : (L->numel - first < L->shard ? L->numel - first : L->shard);
    // STUB: (void)L;
    // STUB: return 0;
    // END EXERCISE
}

// Elements [first, first+count) of layer l's segment as PyTorch's nn.Linear
// draws them: uniform in +-1/sqrt(fan_in), weights then bias. Each element has
// its own random number, so any slice can be drawn on its own.
void init_segment(float *dst, const Layer *L, int l, uint64_t seed, size_t first, size_t count) {
    float bound = 1.0f / sqrtf((float)L->in);
    init_uniform(dst, count, bound, seed, RNG_STREAM_INIT + (uint64_t)l, first);
}

void init_params(Model *m, uint64_t seed) {
    for (int l = 0; l < m->nlayers; l++)
        init_segment(m->params + m->layer[l].off, &m->layer[l], l, seed, 0, m->layer[l].numel);
}

// ----------------------------------------------------------------------------
// sharding: the collectives that replace lc1's all-reduce

// A collective cuts a buffer into N equal slices, so a segment whose length is
// not a multiple of N goes through t->padded, padded with zeros: a buffer the
// size of the longest such segment (none if every segment divides by N).
float *padded_alloc(const Model *m) {
    size_t widest = 0;
    for (int l = 0; l < m->nlayers; l++)
        if (m->layer[l].pad != m->layer[l].numel && m->layer[l].pad > widest) widest = m->layer[l].pad;
    return widest ? mem_alloc(MEM_COMM_BUFFERS, widest * sizeof(float)) : NULL;
}

float *padded_segment(Trainer *t, float *buf, int l) {
    const Layer *L = &t->model.layer[l];
    return L->pad == L->numel ? buf + L->off : t->padded;
}

// Leaves in each rank's slice of m->grads the gradient of the global batch for
// that slice; the rest of m->grads is stale from then on.
void reduce_scatter_grads(Trainer *t) {
    // EXERCISE lc2.2: one reduce-scatter per layer of the gradients
    //| After it, own_slice(m, m->grads, l) holds, for each layer, the sum over ranks
    //| of that slice; the rest of m->grads may be anything. One comm_reduce_scatter
    //| per layer of L->shard elements per rank, in place (the slice lands in the
    //| rank's own slot: recv = send + rank x shard). A segment whose length does not
    //| divide by N goes through padded_segment's buffer, its padding zeroed, and
    //| the real elements of the slice are copied back (own_numel).
    Model *m = &t->model;
    for (int l = 0; l < m->nlayers; l++) {
        const Layer *L = &m->layer[l];
        float *seg = padded_segment(t, m->grads, l), *mine = seg + (size_t)rt.rank * L->shard;
        if (seg == t->padded) {
            copy(seg, m->grads + L->off, L->numel);
            fill(seg + L->numel, 0.0f, L->pad - L->numel);
        }
        comm_reduce_scatter(seg, mine, L->shard, DT_F32);  // in place: my slice lands in my slot
        if (seg == t->padded) copy(own_slice(m, m->grads, l), mine, own_numel(L));
    }
    // STUB: (void)t;
    // END EXERCISE
}

// Every rank has updated its slices of the params: gather them all back.
void all_gather_params(Trainer *t) {
    // EXERCISE lc2.3: one all-gather per layer of the params
    //| Each rank has updated own_slice(m, m->params, l) of every layer; after this
    //| every rank holds all of m->params again. One comm_all_gather per layer, in
    //| place (send = this rank's slot of the segment), through padded_segment's
    //| buffer when the segment does not divide by N.
    Model *m = &t->model;
    for (int l = 0; l < m->nlayers; l++) {
        const Layer *L = &m->layer[l];
        float *seg = padded_segment(t, m->params, l), *mine = seg + (size_t)rt.rank * L->shard;
        if (seg == t->padded) copy(mine, own_slice(m, m->params, l), own_numel(L));
        comm_all_gather(mine, seg, L->shard, DT_F32);  // in place
        if (seg == t->padded) copy(m->params + L->off, seg, L->numel);
    }
    // STUB: (void)t;
    // END EXERCISE
}

// ----------------------------------------------------------------------------
// forward and backward

void acts_alloc(Acts *x, const Model *m, int rows) {
    memset(x, 0, sizeof *x);
    x->rows = rows;
    int widest = m->layer[0].in;
    x->act[0] = mem_alloc(MEM_ACTIVATIONS, (size_t)rows * m->layer[0].in * sizeof(float));
    for (int l = 0; l < m->nlayers; l++) {
        x->act[l + 1] = mem_alloc(MEM_ACTIVATIONS, (size_t)rows * m->layer[l].out * sizeof(float));
        if (m->layer[l].out > widest) widest = m->layer[l].out;
    }
    for (int k = 0; k < 2; k++)
        x->d[k] = mem_alloc(MEM_ACTIVATIONS, (size_t)rows * widest * sizeof(float));
    x->ctx = mem_alloc(MEM_DATA, (size_t)rows * m->T);
    x->targets = mem_alloc(MEM_DATA, (size_t)rows * sizeof(int));
}

void acts_free(Acts *x, const Model *m) {
    for (int l = 0; l <= m->nlayers; l++) mem_free(x->act[l]);
    mem_free(x->d[0]);
    mem_free(x->d[1]);
    mem_free(x->ctx);
    mem_free(x->targets);
}

// Runs rows examples from x->ctx; the logits end up in x->act[nlayers].
void forward(Trainer *t, int rows) {
    Model *m = &t->model;
    Acts *x = &t->acts;
    one_hot(x->act[0], x->ctx, rows, m->T, VOCAB);
    for (int l = 0; l < m->nlayers; l++) {
        trace_phase("forward", l);
        const Layer *L = &m->layer[l];
        float *y = x->act[l + 1];
        const float *W = m->params + L->off;  // weight [out, in], then the bias
        matmul(y, x->act[l], W, rows, L->out, L->in, 0, 1, 0.0f);
        bias_add(y, W + (size_t)L->out * L->in, rows, L->out);
        if (l < m->nlayers - 1) relu_forward(y, y, (size_t)rows * L->out);
    }
    trace_phase(NULL, 0);
}

// Adds this micro-batch's gradients into m->grads. Gradients are of the mean
// loss over the global batch, so each example's share is scaled by 1/B here.
// Returns the sum of the micro-batch's losses.
double forward_backward(Trainer *t, int global_batch) {
    Model *m = &t->model;
    Acts *x = &t->acts;
    int rows = x->rows;
    forward(t, rows);
    float *d = x->d[0], *dn = x->d[1];
    double loss = softmax_xent(x->act[m->nlayers], x->targets, d, rows, VOCAB,
                               1.0f / (float)global_batch);
    for (int l = m->nlayers - 1; l >= 0; l--) {
        trace_phase("backward", l);
        const Layer *L = &m->layer[l];
        const float *W = m->params + L->off;
        float *g = m->grads + L->off;  // the layer's gradient, laid out as W
        matmul(g, d, x->act[l], L->out, L->in, rows, 1, 0, 1.0f);
        bias_grad(g + (size_t)L->out * L->in, d, rows, L->out);
        if (l == 0) break;  // the input is data: no gradient needed
        matmul(dn, d, W, rows, L->in, L->out, 0, 0, 0.0f);
        relu_backward(dn, dn, x->act[l], (size_t)rows * L->in);
        float *swap = d; d = dn; dn = swap;
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
    fill(m->grads, 0.0f, m->numel);
}

// Scales the gradients so their global L2 norm is at most max_norm (as
// torch.nn.utils.clip_grad_norm_). Each rank holds the summed gradient of its
// slices only, so the squares are summed per rank and then over ranks: one
// number to all-reduce, and every rank computes the same factor. Returns the
// norm before clipping.
double clip_grads(Model *m, float max_norm) {
    // EXERCISE lc2.4: global-norm clipping from the slices
    //| The norm is over the whole gradient, but each rank holds the summed gradient
    //| of its own slices only (own_slice, own_numel). Every rank must compute the
    //| same factor, clip_factor(norm, max_norm), and scale its slices by it. Send
    //| as little as you can. Return the norm before clipping.
    double sq = 0.0;
    for (int l = 0; l < m->nlayers; l++)
        sq += sum_squares(own_slice(m, m->grads, l), own_numel(&m->layer[l]));
    comm_all_reduce(&sq, 1, DT_F64, OP_SUM);
    double norm = sqrt(sq);
    float f = clip_factor(norm, max_norm);
    for (int l = 0; l < m->nlayers; l++)
        scale(own_slice(m, m->grads, l), f, own_numel(&m->layer[l]));
    return norm;
    // STUB: (void)m, (void)max_norm;
    // STUB: return 0.0;
    // END EXERCISE
}

// Updates this rank's slice of every layer; m and v exist for nothing else.
void adam_step(Adam *o, Model *m) {
    // EXERCISE lc2.5: one Adam step on this rank's slice of every layer
    //| o->m and o->v hold Ψ_pad/N elements: this rank's slices, layer after layer
    //| (layer l's at L->soff). The params and grads are full buffers; this rank's
    //| slice of layer l is own_slice, own_numel of it real. One step count for the
    //| whole model.
    o->step++;
    for (int l = 0; l < m->nlayers; l++) {
        const Layer *L = &m->layer[l];
        adam_update(own_slice(m, m->params, l), own_slice(m, m->grads, l), o->m + L->soff,
                    o->v + L->soff, own_numel(L), &o->h, o->step);
    }
    // STUB: (void)o, (void)m;
    // END EXERCISE
}

// ----------------------------------------------------------------------------
// model files

// Reads the model from a safetensors file, layer by layer.
const char *load_params(Model *m, const char *path) {
    StFile c;
    const char *err = mlp_open(&c, path, m->nlayers);
    for (int l = 0; l < m->nlayers && !err; l++) {
        const Layer *L = &m->layer[l];
        err = mlp_read_layer(&c, l, L->out, L->in, 0, L->numel, m->params + L->off);
    }
    st_close(&c);
    return err;
}

// Rank 0 writes the model, layer by layer. Returns its error, if any.
const char *save_params(Trainer *t, const char *path) {
    const Model *m = &t->model;
    StTensor specs[2 * MAX_LAYERS];
    for (int l = 0; l < m->nlayers; l++) mlp_specs(specs + 2 * l, l, m->layer[l].out, m->layer[l].in);
    StWriter f;
    const char *err = rt.rank == 0 ? st_create(&f, path, 2 * m->nlayers, specs) : NULL;
    for (int l = 0; l < m->nlayers; l++) {
        const float *p = m->params + m->layer[l].off;  // weight, then bias: the file's order
        if (rt.rank == 0 && !err) err = st_append(&f, p, m->layer[l].numel);
    }
    if (rt.rank == 0 && !err) err = st_finish(&f);
    return err;
}

// ----------------------------------------------------------------------------
// training checkpoints

// The state a step leaves for the next: the params, Adam's m and v and its step
// count. Gradients start every step at zero, so they are not state. Every rank
// holds the same params, so rank 0 writes them; each rank writes its own slices
// of m and v, the part of the state that exists nowhere else.
void describe_state(void *trainer, TrainState *s) {
    Trainer *t = trainer;
    state_begin(s, STAGE, &t->a, &t->data, &t->opt.step);
    state_add(s, "params", t->model.params, DT_F32, 0);
    state_add(s, "m", t->opt.m, DT_F32, 1);
    state_add(s, "v", t->opt.v, DT_F32, 1);
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
    t->padded = padded_alloc(&t->model);
    acts_alloc(&t->acts, &t->model, a->batch / (rt.world * a->accum));
    rt_check_memory();  // before the buffers are written: a model that does not fit is refused here
    if (a->resume) t->start = checkpoint_resume(describe_state, t);
    else if (a->init) agree_input(load_params(&t->model, a->init));
    else init_params(&t->model, a->seed);
}

void trainer_teardown(Trainer *t) {
    acts_free(&t->acts, &t->model);
    mem_free(t->opt.m);
    mem_free(t->opt.v);
    mem_free(t->model.params);
    mem_free(t->model.grads);
    mem_free(t->padded);
    data_free(&t->data);
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
    // sum over ranks is the gradient of the global batch. A rank needs that sum
    // for its own slices only.
    if (strcmp(t->a.grad_sync, "allreduce") == 0)
        comm_all_reduce(m->grads, m->numel, DT_F32, OP_SUM);  // and use only my slices
    else
        reduce_scatter_grads(t);
    comm_metric_sum(&loss, 1);
    trace_phase("optimizer", -1);
    if (t->a.clip > 0) clip_grads(m, t->a.clip);
    adam_step(&t->opt, m);
    trace_phase(NULL, 0);
    all_gather_params(t);
    return loss / B;
}

// The first parameter tensor in which this rank holds a value that is not
// finite, or NULL: asked when the loss is not finite.
const char *nonfinite_params(void *trainer) {
    const Model *m = &((Trainer *)trainer)->model;
    const char *name = NULL;
    for (int l = 0; l < m->nlayers && !name; l++) {
        const Layer *L = &m->layer[l];
        name = nonfinite_layer(l, L->out, L->in, m->params + L->off, 0, L->numel);
    }
    return name;
}

void train(Trainer *t) {
    Progress p;
    progress_start(&p, &t->a, nonfinite_params, t);
    for (long s = t->start; s < t->a.steps; s++) {
        progress_begin_step(&p);
        t->loss = train_step(t, s);
        progress_end_step(&p, s, t->loss, NULL);
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
    softmax_row(probs, t->acts.act[t->model.nlayers], VOCAB);
}

// Rank 0 draws words from the trained model, one symbol at a time.
void sample_words(Trainer *t) { report_samples(&t->a, t->model.T, 0, next_symbol, t); }

// ----------------------------------------------------------------------------
// reports

// The model state this stage keeps per rank, in bytes: 4Ψ + 4Ψ + 8Ψ_pad/N.
double model_state_formula(const Model *m) {
    // EXERCISE lc2.6: the stage's formulas: its model state (here) and traffic (comm_theory)
    //| Ψ = m->numel, Ψ_pad = m->shard_numel x N (common/theory.h has both formulas
    //| for every stage).
    return theory_model_state(ZERO_1, (double)m->numel, (double)(m->shard_numel * rt.world), rt.world, 4, 8);
    // STUB: (void)m;
    // STUB: return 0.0;
    // END EXERCISE
}
// Bytes each rank sends per step under the ring model: a reduce-scatter and an
// all-gather, one all-reduce's worth of Ψ_pad (with --grad-sync allreduce: an
// all-reduce of Ψ, then the all-gather); with clipping one all-reduce of a double.
double comm_theory(const Trainer *t) {
    // EXERCISE lc2.6: the bytes each rank sends per step, in the ring model
    //| Both --grad-sync modes, and the clipping scalar when --clip is on.
    const Model *m = &t->model;
    double psi = (double)m->numel, pad = (double)(m->shard_numel * rt.world);
    double sync = strcmp(t->a.grad_sync, "allreduce") == 0
                      ? theory_comm(ZERO_DDP, psi, psi, rt.world, 4) + theory_gather(4.0 * pad, rt.world)
                      : theory_comm(ZERO_1, psi, pad, rt.world, 4);
    return sync + (t->a.clip > 0 ? theory_all_reduce(8.0, rt.world) : 0.0);
    // STUB: (void)t;
    // STUB: return 0.0;
    // END EXERCISE
}

void report(Trainer *t) {
    const Model *m = &t->model;
    MemReport mem = report_memory(theory_model_state_text(ZERO_1, m->numel, m->shard_numel * rt.world, rt.world,
                                                          4, 8), model_state_formula(m));
    checkpoint_report();
    Traffic traffic = { .stage = ZERO_1, .b = 4, .grad_allreduce = strcmp(t->a.grad_sync, "allreduce") == 0,
                        .clip = t->a.clip > 0, .psi = m->numel, .psi_pad = m->shard_numel * rt.world, .n = rt.world };
    report_comm(&t->comm, theory_traffic_text(&traffic), comm_theory(t));
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
