// lc1_distributed_adam: N processes train the same model as lc0_adam, each on its
// own slice of every global batch (data parallelism, as PyTorch's DDP).
//
// The model: T characters of context, each one-hot over 27 symbols ('.', a-z),
// concatenated into T*27 inputs; L hidden Linear layers with ReLU; a Linear to
// 27 logits; softmax cross-entropy averaged over the batch. All parameters live
// in one flat buffer; layer l's segment is its weight [out, in] then its bias.
//
// What this stage teaches: every rank holds a full replica (params, grads, Adam
// m and v). Each rank runs forward and backward on its B/N examples; one
// all-reduce sums the gradients, so every rank holds the gradient of the whole
// global batch and runs the same full Adam update: the replicas stay identical
// without ever sending parameters. With --accum K the all-reduce runs once per
// step, after the last micro-batch.
//
// Model-state memory per rank: 4Ψ + 4Ψ + 4Ψ + 4Ψ = 16Ψ bytes, as lc0: the
// replicas are the cost ZeRO removes in the next stages.
// Communication per step: one all-reduce of Ψ floats; in the ring algorithm each
// rank sends 2(N-1)/N x 4Ψ bytes.

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
#define STAGE "lc1_distributed_adam"
#define OPTIONS ARGS_EVERY_STAGE " comm ranks-per-node"
#define MAX_LAYERS 65

// ----------------------------------------------------------------------------
// the model

typedef struct {
    int in, out;
    size_t off;     // where the layer's segment starts in the flat buffers
    size_t numel;   // out*in weights then out biases
} Layer;

typedef struct {
    int T, nlayers;             // context length; Linear layers (hidden + output)
    Layer layer[MAX_LAYERS];
    size_t numel;               // Ψ
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
    float *m, *v;               // [Ψ] each
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
        m->numel += L->numel;
    }
    m->params = mem_alloc(MEM_PARAMS, m->numel * sizeof(float));
    m->grads = mem_alloc(MEM_GRADS, m->numel * sizeof(float));
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
// torch.nn.utils.clip_grad_norm_). Returns the norm before clipping.
double clip_grads(Model *m, float max_norm) {
    double norm = sqrt(sum_squares(m->grads, m->numel));
    scale(m->grads, clip_factor(norm, max_norm), m->numel);
    return norm;
}

void adam_step(Adam *o, Model *m) {
    o->step++;
    adam_update(m->params, m->grads, o->m, o->v, m->numel, &o->h, o->step);
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
// holds the same replica, so rank 0 writes it and the others write nothing.
void describe_state(void *trainer, TrainState *s) {
    Trainer *t = trainer;
    state_begin(s, STAGE, &t->a, &t->data, &t->opt.step);
    state_add(s, "params", t->model.params, DT_F32, 0);
    state_add(s, "m", t->opt.m, DT_F32, 0);
    state_add(s, "v", t->opt.v, DT_F32, 0);
}

// ----------------------------------------------------------------------------
// training

void trainer_setup(Trainer *t, const Args *a) {
    memset(t, 0, sizeof *t);
    t->a = *a;
    rt_setup(a);
    agree_input(data_load(&t->data, a->data, a->context, a->seed));
    model_build(&t->model, a);
    adam_alloc(&t->opt, a, t->model.numel);
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
    // EXERCISE lc1.1: this rank's share of global batch `step`, and the gradient of all of it
    //| The global batch is B examples; rank r takes its contiguous B/N of them
    //| (per_rank), in accum micro-batches of x->rows: data_batch fills x->ctx and
    //| x->targets with examples [first, first + rows) of batch `step`. Each
    //| forward_backward adds its micro-batch's gradients into m->grads and returns
    //| its summed loss; give it the global B, so the shares add up to the mean over
    //| all B examples. Then one all-reduce sums the gradients over ranks (every
    //| rank ends with the same gradient), and comm_metric_sum sums the loss.
    for (int k = 0; k < t->a.accum; k++) {
        data_batch(&t->data, step, B, rt.rank * per_rank + k * x->rows, x->rows, x->ctx, x->targets);
        loss += forward_backward(t, B);
    }
    // Each rank's gradient covers its B/N examples (already scaled by 1/B): the
    // sum over ranks is the gradient of the global batch.
    comm_all_reduce(m->grads, m->numel, DT_F32, OP_SUM);
    comm_metric_sum(&loss, 1);
    // STUB: (void)step, (void)x, (void)per_rank;
    // END EXERCISE
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

// The model state this stage keeps per rank, in bytes: 16Ψ.
double model_state_formula(const Model *m) {
    return theory_model_state(ZERO_DDP, (double)m->numel, (double)m->numel, rt.world, 4, 8);
}
// Bytes each rank sends per step under the ring model: one all-reduce of the
// gradients, 2(N-1)/N x 4Ψ.
double comm_theory(const Trainer *t) {
    // EXERCISE lc1.5: the bytes each rank sends per step, in the ring model
    //| One all-reduce of Ψ = t->model.numel floats per step, whatever --accum;
    //| common/theory.h has the ring model (theory_all_reduce, theory_comm).
    return theory_comm(ZERO_DDP, (double)t->model.numel, (double)t->model.numel, rt.world, 4);
    // STUB: (void)t;
    // STUB: return 0.0;
    // END EXERCISE
}

void report(Trainer *t) {
    const Model *m = &t->model;
    MemReport mem = report_memory(theory_model_state_text(ZERO_DDP, m->numel, m->numel, rt.world, 4, 8),
                                  model_state_formula(m));
    checkpoint_report();
    Traffic traffic = { .stage = ZERO_DDP, .b = 4, .psi = m->numel, .n = rt.world };
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
