// lc4_zero3: ZeRO stage 3. As lc3_zero2, and the params are sharded too: at
// rest every rank holds only its slices of params, grads, m and v.
//
// The model: T characters of context, each one-hot over 27 symbols ('.', a-z),
// concatenated into T*27 inputs; L hidden Linear layers with ReLU; a Linear to
// 27 logits; softmax cross-entropy averaged over the batch. Layer l's segment
// is its weight [out, in] then its bias.
//
// What this stage teaches: in lc3 every rank still kept the full params (4Ψ)
// between steps, only to run forward and backward. Here a layer's full params
// exist only while the layer runs: just before layer l computes, an all-gather
// of every rank's slice fills a gather buffer; right after, the buffer is freed.
// Backward gathers each layer again (the last layer keeps its forward gather).
// With --prefetch 1 the gather of the next layer (l+1 in forward, l-1 in
// backward) is launched before layer l computes, so it runs under that compute.
// Gradients are reduce-scattered per layer as in lc3, and each rank's Adam
// updates its slices; there is no all-gather after the step, since nobody keeps
// full params. Initialization and --init produce or read only the own slices;
// --save-model gathers one layer at a time.
//
// Model-state memory per rank: 16Ψ_pad/N bytes (params, grads, m and v
// slices), plus the layers gathered and the full gradients in flight.
// Communication per micro-batch: all-gathers of Ψ_pad in forward and of Ψ_pad
// less the last layer in backward, a reduce-scatter of Ψ_pad: about 3(N-1)/N x
// 4Ψ bytes sent per rank, 1.5x lc3. With --accum K, K times that.

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
#define STAGE "lc4_zero3"
#define OPTIONS ARGS_EVERY_STAGE " comm ranks-per-node bucket-mb prefetch"
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
    float *params;              // [Ψ_pad/N]: this rank's slices only
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
    float *gathered[MAX_LAYERS];  // layer l's full params while gathered, else NULL
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
    m->params = mem_alloc(MEM_PARAMS, m->shard_numel * sizeof(float));
    m->grads = mem_alloc(MEM_GRADS, m->shard_numel * sizeof(float));
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
        init_segment(m->params + L->soff, L, l, seed, (size_t)rt.rank * L->shard, own_numel(L));
    }
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
    float *shards = m->grads + m->layer[b->lo].soff;
    // The reduce-scatter overwrites my slices. Adding what they hold (the earlier
    // micro-batches) to my own contribution keeps it in the sum.
    axpy(b->buf + (size_t)rt.rank * b->count, 1.0f, shards, b->count);
    b->req = comm_reduce_scatter_async(b->buf, shards, b->count, DT_F32);
    t->sending = b;
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

// Starts the all-gather of layer l's params into a fresh buffer (comm_buffers).
void gather_launch(Trainer *t, int l) {
    const Model *m = &t->model;
    const Layer *L = &m->layer[l];
    t->gathered[l] = mem_alloc(MEM_COMM_BUFFERS, L->pad * sizeof(float));
    t->gather_req[l] = comm_all_gather_async(m->params + L->soff, t->gathered[l], L->shard, DT_F32);
}

// Layer l's full params, gathered from every rank's slice, waiting if needed.
// With --prefetch 1 the gather of layer `next` is launched first, so it runs on
// the comm thread while layer l computes.
float *gather_params(Trainer *t, int l, int next) {
    // EXERCISE lc4.1: layer l's full params, gathered before use, with the next layer's prefetched
    //| t->gathered[l] is layer l's full params while gathered (NULL when not), and
    //| t->gather_req[l] its all-gather's request (-1 once waited for). If layer l
    //| is not gathered, launch its gather (gather_launch); with --prefetch 1
    //| (t->a.prefetch) launch layer `next`'s too, if it is a layer and not gathered,
    //| before waiting; then wait for l's (comm_wait_timed(req, &t->ag): the report
    //| prints the overlap) and return its buffer. A layer still gathered (the last
    //| one, kept from forward for backward) is not gathered again.
    if (!t->gathered[l]) gather_launch(t, l);
    if (t->a.prefetch && next >= 0 && next < t->model.nlayers && !t->gathered[next])
        gather_launch(t, next);
    if (t->gather_req[l] >= 0) comm_wait_timed(t->gather_req[l], &t->ag);
    t->gather_req[l] = -1;
    return t->gathered[l];
    // STUB: (void)next;  // a buffer of zeros: the layer computes with no weights
    // STUB: if (!t->gathered[l]) t->gathered[l] = mem_alloc(MEM_COMM_BUFFERS, t->model.layer[l].pad * sizeof(float));
    // STUB: return t->gathered[l];
    // END EXERCISE
}

// The layer has run: its full params go back to mem.
void gather_free(Trainer *t, int l) {
    // EXERCISE lc4.2: layer l has run: its full params go back to mem
    //| Free the buffer, and say the layer is no longer gathered, so the next use
    //| gathers it again (after the step the slices have changed).
    mem_free(t->gathered[l]);
    t->gathered[l] = NULL;
    // STUB: (void)t, (void)l;
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
// Collective: every rank gathers each layer's params. The last layer's stay
// gathered, for the backward that usually follows (gather_free them if not).
void forward(Trainer *t, int rows) {
    Model *m = &t->model;
    Acts *x = &t->acts;
    one_hot(x->act[0], x->ctx, rows, m->T, VOCAB);
    for (int l = 0; l < m->nlayers; l++) {
        trace_phase("forward", l);
        const Layer *L = &m->layer[l];
        float *y = x->act[l + 1];
        const float *W = gather_params(t, l, l + 1);  // weight [out, in], then the bias
        matmul(y, x->act[l], W, rows, L->out, L->in, 0, 1, 0.0f);
        bias_add(y, W + (size_t)L->out * L->in, rows, L->out);
        if (l < m->nlayers - 1) relu_forward(y, y, (size_t)rows * L->out);
        if (l < m->nlayers - 1) gather_free(t, l);
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
        // Gathered again; the last layer still has its forward gather. Layer 0's
        // backward never reads W (its input is data), but a framework cannot
        // know that and gathers every layer: so does this one (see the README).
        const float *W = gather_params(t, l, l - 1);
        float *g = mem_alloc(MEM_GRADS, L->pad * sizeof(float));  // zeros, padding included
        matmul(g, d, x->act[l], L->out, L->in, rows, 1, 0, 0.0f);
        bias_grad(g + (size_t)L->out * L->in, d, rows, L->out);
        grads_ready(t, l, g);  // may launch a reduce-scatter: it runs under what follows
        if (l == 0) {  // the input is data: no gradient needed
            gather_free(t, 0);
            break;
        }
        matmul(dn, d, W, rows, L->in, L->out, 0, 0, 0.0f);
        relu_backward(dn, dn, x->act[l], (size_t)rows * L->in);
        gather_free(t, l);
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
        adam_update(m->params + L->soff, m->grads + L->soff, o->m + L->soff,
                    o->v + L->soff, own_numel(L), &o->h, o->step);
    }
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
                              m->params + L->soff);
    }
    st_close(&c);
    return err;
}

// Collective: layer by layer, every rank gathers the full params and rank 0
// appends them to the file. Returns rank 0's error, if any (NULL elsewhere).
const char *save_params(Trainer *t, const char *path) {
    const Model *m = &t->model;
    StTensor specs[2 * MAX_LAYERS];
    for (int l = 0; l < m->nlayers; l++) mlp_specs(specs + 2 * l, l, m->layer[l].out, m->layer[l].in);
    StWriter f;
    const char *err = rt.rank == 0 ? st_create(&f, path, 2 * m->nlayers, specs) : NULL;
    for (int l = 0; l < m->nlayers; l++) {
        const float *p = gather_params(t, l, l + 1);  // weight, then bias: the file's order
        if (rt.rank == 0 && !err) err = st_append(&f, p, m->layer[l].numel);
        gather_free(t, l);
    }
    if (rt.rank == 0 && !err) err = st_finish(&f);
    return err;
}

// ----------------------------------------------------------------------------
// training checkpoints

// The state a step leaves for the next: the params, Adam's m and v and its step
// count. Gradients start every step at zero, so they are not state. Each rank
// holds only its slices of all three, and writes just those.
void describe_state(void *trainer, TrainState *s) {
    Trainer *t = trainer;
    state_begin(s, STAGE, &t->a, &t->data, &t->opt.step);
    state_add(s, "params", t->model.params, DT_F32, 1);
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
    return loss / B;
}

// The first parameter tensor in which this rank holds a value that is not
// finite, or NULL: asked when the loss is not finite.
const char *nonfinite_params(void *trainer) {
    const Model *m = &((Trainer *)trainer)->model;
    const char *name = NULL;
    for (int l = 0; l < m->nlayers && !name; l++) {
        const Layer *L = &m->layer[l];
        name = nonfinite_layer(l, L->out, L->in, m->params + L->soff, (size_t)rt.rank * L->shard, own_numel(L));
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
    gather_free(t, t->model.nlayers - 1);  // no backward follows
    softmax_row(probs, t->acts.act[t->model.nlayers], VOCAB);
}

// Rank 0 prints words drawn from the trained model, one symbol at a time. Every
// rank runs the loop: each forward gathers the layers from all of them, and the
// same seed makes every rank draw the same words.
void sample_words(Trainer *t) { report_samples(&t->a, t->model.T, 1, next_symbol, t); }

// ----------------------------------------------------------------------------
// reports

// The model state this stage keeps per rank, in bytes: 16Ψ_pad/N.
double model_state_formula(const Model *m) {
    // EXERCISE lc4.3: the stage's formulas: its model state (here) and traffic (comm_theory)
    //| Ψ = m->numel, Ψ_pad = m->shard_numel x N; common/theory.h.
    return theory_model_state(ZERO_3, (double)m->numel, (double)(m->shard_numel * rt.world), rt.world, 4, 8);
    // STUB: (void)m;
    // STUB: return 0.0;
    // END EXERCISE
}
// Bytes each rank sends per step under the ring model: per micro-batch, the
// all-gathers of forward (every layer) and backward (all but the last layer)
// and a reduce-scatter of the gradients: ZeRO-3's 3(N-1)/N x 4Ψ_pad less the
// last layer's second gather; with clipping one all-reduce of a double.
double comm_theory(const Trainer *t) {
    // EXERCISE lc4.3: the bytes each rank sends per step, in the ring model
    //| Per micro-batch the gathers of forward and backward and the reduce-scatter;
    //| the last layer is gathered once; the clipping scalar when --clip is on.
    const Model *m = &t->model;
    double psi = (double)m->numel, pad = (double)(m->shard_numel * rt.world);
    double last = 4.0 * (double)m->layer[m->nlayers - 1].pad;
    double micro = theory_comm(ZERO_3, psi, pad, rt.world, 4) - theory_gather(last, rt.world);
    return t->a.accum * micro + (t->a.clip > 0 ? theory_all_reduce(8.0, rt.world) : 0.0);
    // STUB: (void)t;
    // STUB: return 0.0;
    // END EXERCISE
}

void report(Trainer *t) {
    const Model *m = &t->model;
    MemReport mem = report_memory(theory_model_state_text(ZERO_3, m->numel, m->shard_numel * rt.world, rt.world,
                                                          4, 8), model_state_formula(m));
    checkpoint_report();
    report_grads_at_peak(4, m->shard_numel, m->numel);
    report_gathered_at_peak(4, m->numel, t->a.prefetch);
    Traffic traffic = { .stage = ZERO_3, .b = 4, .accum = t->a.accum, .clip = t->a.clip > 0, .psi = m->numel,
                        .psi_pad = m->shard_numel * rt.world, .n = rt.world };
    report_comm(&t->comm, theory_traffic_text(&traffic), comm_theory(t));
    char note[32];
    snprintf(note, sizeof note, "%d bucket%s", t->nbuckets, t->nbuckets > 1 ? "s" : "");
    report_overlap("reduce-scatter", &t->rs, t->comm.steps, note);
    report_overlap("all-gather", &t->ag, t->comm.steps, t->a.prefetch ? "prefetch on" : "prefetch off");
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
