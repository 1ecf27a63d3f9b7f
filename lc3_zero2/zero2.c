// lc3_zero2: ZeRO stage 2. As lc2_zero1, and the gradients are sharded too: a
// rank keeps only its slices, and a layer's full gradient lives only while it is
// being reduced.
//
// The model: T characters of context, each one-hot over 27 symbols ('.', a-z),
// concatenated into T*27 inputs; L hidden Linear layers with ReLU; a Linear to
// 27 logits; softmax cross-entropy averaged over the batch. All parameters live
// in one flat buffer; layer l's segment is its weight [out, in] then its bias.
//
// What this stage teaches: in lc2 each rank kept a full gradient buffer (4Ψ)
// only to reduce-scatter it after backward and keep 1/N of the result. Here a
// layer's gradient is computed into a fresh buffer (padded to a multiple of N);
// as soon as backward has produced it, its reduce-scatter is launched
// asynchronously and runs on the comm thread while backward computes the layers
// below; when it completes, the buffer is freed. The rank keeps only its
// gradient slices (4Ψ_pad/N). --bucket-mb groups consecutive small layers into
// one collective (fewer, larger messages). With --accum K every micro-batch
// reduce-scatters its gradient and adds it into the slices, since there is no
// full buffer left to accumulate in: K reduce-scatters per step where lc2 had one.
// Params are updated by slice and all-gathered as in lc2.
//
// Model-state memory per rank: params 4Ψ + grads, m and v 12Ψ_pad/N bytes, plus
// the full gradients in flight (at most two buckets at a time).
// Communication per step: K reduce-scatters and one all-gather of Ψ_pad floats:
// (K+1)(N-1)/N x 4Ψ_pad bytes sent per rank, the same 2(N-1)/N x 4Ψ_pad as lc1
// and lc2 when K = 1.

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
#define STAGE "lc3_zero2"
#define OPTIONS ARGS_EVERY_STAGE " comm ranks-per-node bucket-mb"
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
    float *params;              // [Ψ]
    float *grads;               // [Ψ_pad/N]: this rank's slices only
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

// Consecutive layers whose gradients are reduce-scattered together.
typedef struct {
    int lo, hi;                 // layers lo..hi; backward finishes hi first
    size_t count;               // elements per rank: the sum of the layers' slices
    float *buf;                 // their full gradients, rank-major, while needed
    CommReq req;
} Bucket;

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
    m->params = mem_alloc(MEM_PARAMS, m->numel * sizeof(float));
    m->grads = mem_alloc(MEM_GRADS, m->shard_numel * sizeof(float));
}

// This rank's slice of layer l inside a full buffer, and how many of its
// elements are real: the last slices of a segment may be partly or wholly
// padding (a layer smaller than N leaves some ranks nothing to own).
float *own_slice(const Model *m, float *buf, int l) {
    return buf + m->layer[l].off + (size_t)rt.rank * m->layer[l].shard;
}
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

// Groups layers into buckets from the last layer down, the order backward
// finishes them: a bucket takes the next layer while their padded gradients fit
// in --bucket-mb MiB. With 0, or a layer bigger than that, a layer goes alone.
void buckets_plan(Trainer *t) {
    const Model *m = &t->model;
    double cap = t->a.bucket_mb * 1048576.0, N = rt.world;
    t->nbuckets = 0;
    for (int l = m->nlayers - 1; l >= 0; l--) {
        Bucket *b = t->nbuckets ? &t->bucket[t->nbuckets - 1] : NULL;
        if (b && 4.0 * N * (double)(b->count + m->layer[l].shard) <= cap) {
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
    // EXERCISE lc3.1: wait for the reduce-scatter in flight (t->sending), then free its full gradient
    //| Nothing in flight: nothing to do. Wait with comm_wait_timed(req, &t->rs), which
    //| also measures how much of it ran under compute (the report prints it). Only
    //| then may the bucket's buffer go back to mem: the comm thread reads it until
    //| the collective completes. Leave the bucket and t->sending empty.
    Bucket *b = t->sending;
    if (!b) return;
    comm_wait_timed(b->req, &t->rs);
    mem_free(b->buf);
    b->buf = NULL;
    t->sending = NULL;
    // STUB: (void)t;
    // END EXERCISE
}

// Sends bucket b's gradient: each rank gets the sum over ranks of its slices.
void reduce_scatter_launch(Trainer *t, Bucket *b) {
    // EXERCISE lc3.2: launch bucket b's reduce-scatter, asynchronously, into this rank's slices
    //| b->buf holds the bucket's full gradients rank-major: N parts of b->count
    //| elements, part r being rank r's slices. The result goes to this rank's
    //| gradient slices of those layers (m->grads from the bucket's first layer's
    //| soff), which already hold the earlier micro-batches' sums: keep them in
    //| (add them into your own part first). Launch without waiting
    //| (comm_reduce_scatter_async) and remember the bucket in t->sending; only one
    //| may be in flight, so wait for the previous one first (lc3.1).
    reduce_scatter_wait(t);  // one in flight at a time keeps the memory bounded
    const Model *m = &t->model;
    float *shards = m->grads + m->layer[b->lo].soff;
    // The reduce-scatter overwrites my slices. Adding what they hold (the earlier
    // micro-batches) to my own contribution keeps it in the sum.
    axpy(b->buf + (size_t)rt.rank * b->count, 1.0f, shards, b->count);
    b->req = comm_reduce_scatter_async(b->buf, shards, b->count, DT_F32);
    t->sending = b;
    // STUB: (void)t, (void)b;
    // END EXERCISE
}

// Backward has produced g, layer l's full gradient. A bucket of one layer sends
// g itself; a bigger bucket needs its layers' slices rank-major (rank r's slices
// of every layer together), so g is copied in and freed.
void grads_ready(Trainer *t, int l, float *g) {
    const Model *m = &t->model;
    const Layer *L = &m->layer[l];
    Bucket *b = t->bucket;
    while (l < b->lo) b++;
    if (b == t->sending) reduce_scatter_wait(t);  // the previous micro-batch's, still in flight
    if (b->lo == b->hi) {
        b->buf = g;
    } else {
        if (!b->buf) b->buf = mem_alloc(MEM_GRADS, b->count * rt.world * sizeof(float));
        size_t at = L->soff - m->layer[b->lo].soff;
        for (int r = 0; r < rt.world; r++)
            copy(b->buf + (size_t)r * b->count + at, g + (size_t)r * L->shard, L->shard);
        mem_free(g);
    }
    if (l == b->lo) reduce_scatter_launch(t, b);
}

// Every rank has updated its slices of the params: gather them all back.
void all_gather_params(Trainer *t) {
    Model *m = &t->model;
    for (int l = 0; l < m->nlayers; l++) {
        const Layer *L = &m->layer[l];
        float *seg = padded_segment(t, m->params, l), *mine = seg + (size_t)rt.rank * L->shard;
        if (seg == t->padded) copy(mine, own_slice(m, m->params, l), own_numel(L));
        comm_all_gather(mine, seg, L->shard, DT_F32);  // in place
        if (seg == t->padded) copy(m->params + L->off, seg, L->numel);
    }
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

// Adds this micro-batch's gradients, summed over ranks, into m->grads: each
// layer's full gradient goes to the comm thread as soon as it is computed.
// Gradients are of the mean loss over the global batch, so each example's share
// is scaled by 1/B here. Returns the sum of the micro-batch's losses.
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
        float *g = mem_alloc(MEM_GRADS, L->pad * sizeof(float));  // zeros, padding included
        matmul(g, d, x->act[l], L->out, L->in, rows, 1, 0, 0.0f);
        bias_grad(g + (size_t)L->out * L->in, d, rows, L->out);
        grads_ready(t, l, g);  // may launch a reduce-scatter: it runs under what follows
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
    fill(m->grads, 0.0f, m->shard_numel);
}

// Scales the gradients so their global L2 norm is at most max_norm (as
// torch.nn.utils.clip_grad_norm_). Each rank holds the summed gradient of its
// slices only, so the squares are summed per rank and then over ranks: one
// number to all-reduce, and every rank computes the same factor. Returns the
// norm before clipping.
double clip_grads(Model *m, float max_norm) {
    double sq = 0.0;
    for (int l = 0; l < m->nlayers; l++)
        sq += sum_squares(m->grads + m->layer[l].soff, own_numel(&m->layer[l]));
    comm_all_reduce(&sq, 1, DT_F64, OP_SUM);
    double norm = sqrt(sq);
    float f = clip_factor(norm, max_norm);
    for (int l = 0; l < m->nlayers; l++)
        scale(m->grads + m->layer[l].soff, f, own_numel(&m->layer[l]));
    return norm;
}

// Updates this rank's slice of every layer; m and v exist for nothing else.
void adam_step(Adam *o, Model *m) {
    o->step++;
    for (int l = 0; l < m->nlayers; l++) {
        const Layer *L = &m->layer[l];
        adam_update(own_slice(m, m->params, l), m->grads + L->soff, o->m + L->soff,
                    o->v + L->soff, own_numel(L), &o->h, o->step);
    }
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
    buckets_plan(t);
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
    // sum over ranks is the gradient of the global batch. The reduce-scatters
    // were launched during backward; the last may still be in flight.
    reduce_scatter_wait(t);
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
    t->rs = (CommOverlap){ 0 };
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

// The model state this stage keeps per rank, in bytes: 4Ψ + 12Ψ_pad/N.
double model_state_formula(const Model *m) {
    // EXERCISE lc3.3: the stage's formulas: its model state (here) and traffic (comm_theory)
    //| Ψ = m->numel, Ψ_pad = m->shard_numel x N; common/theory.h.
    return theory_model_state(ZERO_2, (double)m->numel, (double)(m->shard_numel * rt.world), rt.world, 4, 8);
    // STUB: (void)m;
    // STUB: return 0.0;
    // END EXERCISE
}
// Bytes each rank sends per step under the ring model: a reduce-scatter and an
// all-gather, one all-reduce's worth of Ψ_pad, and a reduce-scatter more for
// each further micro-batch; with clipping one all-reduce of a double.
double comm_theory(const Trainer *t) {
    // EXERCISE lc3.3: the bytes each rank sends per step, in the ring model
    //| With --accum K every micro-batch reduce-scatters; the clipping scalar when --clip is on.
    const Model *m = &t->model;
    double psi = (double)m->numel, pad = (double)(m->shard_numel * rt.world);
    double sync = theory_comm(ZERO_2, psi, pad, rt.world, 4) +
                  (t->a.accum - 1) * theory_gather(4.0 * pad, rt.world);
    return sync + (t->a.clip > 0 ? theory_all_reduce(8.0, rt.world) : 0.0);
    // STUB: (void)t;
    // STUB: return 0.0;
    // END EXERCISE
}

void report(Trainer *t) {
    const Model *m = &t->model;
    MemReport mem = report_memory(theory_model_state_text(ZERO_2, m->numel, m->shard_numel * rt.world, rt.world,
                                                          4, 8), model_state_formula(m));
    checkpoint_report();
    report_grads_at_peak(4, m->shard_numel, m->numel);
    Traffic traffic = { .stage = ZERO_2, .b = 4, .accum = t->a.accum, .clip = t->a.clip > 0, .psi = m->numel,
                        .psi_pad = m->shard_numel * rt.world, .n = rt.world };
    report_comm(&t->comm, theory_traffic_text(&traffic), comm_theory(t));
    char note[32];
    snprintf(note, sizeof note, "%d bucket%s", t->nbuckets, t->nbuckets > 1 ? "s" : "");
    report_overlap("reduce-scatter", &t->rs, t->comm.steps, note);
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
