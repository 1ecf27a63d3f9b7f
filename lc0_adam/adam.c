// lc0_adam: one process trains a character-level MLP language model with an
// Adam optimizer written by hand.
//
// The model: T characters of context, each one-hot over 27 symbols ('.', a-z),
// concatenated into T*27 inputs; L hidden Linear layers with ReLU; a Linear to
// 27 logits; softmax cross-entropy averaged over the batch. All parameters live
// in one flat buffer; layer l's segment is its weight [out, in] then its bias.
//
// What this stage teaches: Adam keeps two moments per parameter (m, v), so the
// optimizer state is twice the model. Bias correction makes the first steps the
// right size; decoupled weight decay (AdamW) shrinks weights outside the moment
// arithmetic; zero_grad must really zero, because backward accumulates.
//
// Model-state memory: params 4Ψ + grads 4Ψ + Adam m 4Ψ + Adam v 4Ψ = 16Ψ bytes.
// Communication: none.

#include "../common/args.h"
#include "../common/ckpt.h"
#include "../common/comm.h"
#include "../common/data.h"
#include "../common/kernels.h"
#include "../common/mem.h"
#include "../common/rng.h"
#include "../common/rt.h"
#include "../common/theory.h"
#include "../common/trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STAGE "lc0_adam"
#define OPTIONS "data context hidden layers batch accum steps lr beta1 beta2 eps " \
                "weight-decay clip seed log-every sample init save-model loss-log trace device"
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
    FILE *loss_log;
    double loss;                // the last step's mean loss over the global batch
    CommStats comm;             // the communication of the training steps
} Trainer;

void model_build(Model *m, const Args *a) {
    memset(m, 0, sizeof *m);
    m->T = a->context;
    m->nlayers = a->layers + 1;
    int in = a->context * VOCAB;
    for (int l = 0; l < m->nlayers; l++) {
        Layer *L = &m->layer[l];
        L->in = in;
        L->out = l == m->nlayers - 1 ? VOCAB : a->hidden;
        L->off = m->numel;
        L->numel = (size_t)L->out * L->in + (size_t)L->out;
        m->numel += L->numel;
        in = L->out;
    }
    m->params = mem_alloc(MEM_PARAMS, m->numel * sizeof(float));
    m->grads = mem_alloc(MEM_GRADS, m->numel * sizeof(float));
}

float *weight(const Model *m, float *buf, int l) { return buf + m->layer[l].off; }
float *bias(const Model *m, float *buf, int l) {
    return buf + m->layer[l].off + (size_t)m->layer[l].out * m->layer[l].in;
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

// Tensor names and shapes of layer l's weight (w = 1) or bias (w = 0).
void tensor_spec(const Model *m, int l, int w, CkptTensor *t) {
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "layers.%d.%s", l, w ? "weight" : "bias");
    strcpy(t->dtype, "F32");
    t->ndim = w ? 2 : 1;
    t->shape[0] = m->layer[l].out;
    t->shape[1] = m->layer[l].in;
}

const char *load_params(Model *m, const char *path) {
    Ckpt c;
    const char *err = ckpt_open(&c, path);
    if (err) return err;
    static char msg[256];
    if (c.n != 2 * m->nlayers) {
        snprintf(msg, sizeof msg, "%s: has %d tensors, this model has %d", path, c.n, 2 * m->nlayers);
        err = msg;
    }
    for (int l = 0; l < m->nlayers && !err; l++)
        for (int w = 1; w >= 0 && !err; w--) {
            CkptTensor t;
            tensor_spec(m, l, w, &t);
            size_t n = w ? (size_t)t.shape[0] * t.shape[1] : (size_t)t.shape[0];
            err = ckpt_read(&c, t.name, t.ndim, t.shape, 0, n,
                            w ? weight(m, m->params, l) : bias(m, m->params, l));
        }
    ckpt_close(&c);
    return err;
}

const char *save_params(const Model *m, const char *path) {
    CkptTensor specs[2 * MAX_LAYERS];
    const float *data[2 * MAX_LAYERS];
    for (int l = 0; l < m->nlayers; l++)
        for (int w = 1; w >= 0; w--) {
            int k = 2 * l + (1 - w);
            tensor_spec(m, l, w, &specs[k]);
            data[k] = w ? weight(m, m->params, l) : bias(m, m->params, l);
        }
    return ckpt_write(path, 2 * m->nlayers, specs, data);
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
void forward(Model *m, Acts *x, int rows) {
    one_hot(x->act[0], x->ctx, rows, m->T, VOCAB);
    for (int l = 0; l < m->nlayers; l++) {
        trace_phase("forward", l);
        const Layer *L = &m->layer[l];
        float *y = x->act[l + 1];
        matmul(y, x->act[l], weight(m, m->params, l), rows, L->out, L->in, 0, 1, 0.0f);
        bias_add(y, bias(m, m->params, l), rows, L->out);
        if (l < m->nlayers - 1) relu_forward(y, y, (size_t)rows * L->out);
    }
    trace_phase(NULL, 0);
}

// Adds this micro-batch's gradients into m->grads. Gradients are of the mean
// loss over the global batch, so each example's share is scaled by 1/B here.
// Returns the sum of the micro-batch's losses.
double forward_backward(Model *m, Acts *x, int global_batch) {
    int rows = x->rows;
    forward(m, x, rows);
    float *d = x->d[0], *dn = x->d[1];
    double loss = softmax_xent(x->act[m->nlayers], x->targets, d, rows, VOCAB,
                               1.0f / (float)global_batch);
    for (int l = m->nlayers - 1; l >= 0; l--) {
        trace_phase("backward", l);
        const Layer *L = &m->layer[l];
        matmul(weight(m, m->grads, l), d, x->act[l], L->out, L->in, rows, 1, 0, 1.0f);
        bias_grad(bias(m, m->grads, l), d, rows, L->out);
        if (l == 0) break;  // the input is data: no gradient needed
        matmul(dn, d, weight(m, m->params, l), rows, L->in, L->out, 0, 0, 0.0f);
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
void zero_grad(Model *m) { fill(m->grads, 0.0f, m->numel); }

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
// training

void trainer_setup(Trainer *t, const Args *a) {
    memset(t, 0, sizeof *t);
    t->a = *a;
    const char *err = data_load(&t->data, a->data, a->context, a->seed);
    agree_input(err == NULL, err);
    model_build(&t->model, a);
    if (a->init) {
        err = load_params(&t->model, a->init);
        agree_input(err == NULL, err);
    } else {
        init_params(&t->model, a->seed);
    }
    adam_alloc(&t->opt, a, t->model.numel);
    acts_alloc(&t->acts, &t->model, a->batch / (rt.world * a->accum));
    err = NULL;
    if (a->save_model && rt.rank == 0) err = ckpt_can_write(a->save_model);
    agree_input(err == NULL, err);
    static char msg[512];
    if (a->loss_log && rt.rank == 0 && !(t->loss_log = fopen(a->loss_log, "w"))) {
        snprintf(msg, sizeof msg, "cannot write loss log '%s': %s", a->loss_log, strerror(errno));
        err = msg;
    }
    agree_input(err == NULL, err);
}

void trainer_teardown(Trainer *t) {
    if (t->loss_log) fclose(t->loss_log);
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
        loss += forward_backward(m, x, B);
    }
    trace_phase("optimizer", -1);
    if (t->a.clip > 0) clip_grads(m, t->a.clip);
    adam_step(&t->opt, m);
    trace_phase(NULL, 0);
    return loss / B;
}

void train(Trainer *t) {
    long steps = t->a.steps;
    double window_start = now_s();
    long window_steps = 0;
    comm_reset_stats();
    mem_reset_peaks();
    steptime_reset();
    for (long s = 0; s < steps; s++) {
        double t0 = now_s();
        t->loss = train_step(t, s);
        kernels_wait();  // on a GPU the step ends when its queued kernels have run
        double ms = 1e3 * (now_s() - t0);
        steptime_record(ms);
        window_steps++;
        if (t->loss_log) fprintf(t->loss_log, "%ld %.9g\n", s + 1, t->loss);
        int every = t->a.log_every;
        if (every > 0 && (s == 0 || (s + 1) % every == 0 || s + 1 == steps)) {
            double dt = now_s() - window_start;
            print0("step %5ld/%ld | loss %.4f | %.1f ms | %.0f ex/s\n", s + 1, steps, t->loss,
                   1e3 * dt / window_steps, t->a.batch * window_steps / dt);
            window_start = now_s();
            window_steps = 0;
        }
    }
    t->comm = comm_stats();
}

// ----------------------------------------------------------------------------
// sampling

// Rank 0 draws words from the trained model, one symbol at a time.
void sample_words(Trainer *t) {
    if (t->a.sample == 0) return;
    print0("\nsamples:");
    Model *m = &t->model;
    Acts *x = &t->acts;
    Rng r = rng_stream(t->a.seed, RNG_STREAM_SAMPLE);
    float probs[VOCAB];
    for (int w = 0; w < t->a.sample && rt.rank == 0; w++) {
        char word[64];
        int len = 0;
        memset(x->ctx, 0, (size_t)m->T);
        for (;;) {
            forward(m, x, 1);
            softmax_row(probs, x->act[m->nlayers], VOCAB);
            float u = rng_uniform(&r), acc = 0.0f;
            int next = VOCAB - 1;
            for (int c = 0; c < VOCAB; c++)
                if (u < (acc += probs[c])) { next = c; break; }
            if (next == 0 || len == (int)sizeof word - 1) break;
            word[len++] = data_char(next);
            memmove(x->ctx, x->ctx + 1, (size_t)m->T - 1);
            x->ctx[m->T - 1] = (uint8_t)next;
        }
        word[len] = '\0';
        print0(" %s", word);
    }
    print0("\n");
}

// ----------------------------------------------------------------------------
// reports

// The model state this stage keeps per rank, in bytes: 16Ψ.
double model_state_formula(const Model *m) {
    return theory_model_state(ZERO_DDP, (double)m->numel, (double)m->numel, 1, 4, 8);
}
// Bytes each rank sends per step under the ring model: none.
double comm_theory(const Model *m) { (void)m; return 0.0; }

void report(Trainer *t) {
    const Model *m = &t->model;
    char formula[128], theory[128];
    snprintf(formula, sizeof formula, "16Ψ = 16 x %zu", m->numel);
    size_t peak = 0;
    size_t state = mem_report(formula, model_state_formula(m), &peak);
    snprintf(theory, sizeof theory, "no collectives");
    comm_report(&t->comm, (int)t->a.steps, theory, comm_theory(m));
    double sent = comm_total_sent_bytes(&t->comm) / (double)t->a.steps;
    print0("summary stage=%s ranks=%d device=%s params=%zu steps=%ld final_loss=%.6f "
           "model_state_bytes=%zu peak_bytes=%zu comm_bytes_per_step=%.0f step_ms=%.3f "
           "model_state_formula=%.0f%s\n",
           STAGE, rt.world, t->a.device, m->numel, t->a.steps, t->loss, state, peak, sent,
           steptime_median(), model_state_formula(m), mem_summary_fields());
}

// ----------------------------------------------------------------------------
// main

#ifndef LECTURE_TEST
int main(int argc, char **argv) {
    rt_init(&argc, &argv, STAGE);
    Args a;
    args_init(&a, argc, argv, OPTIONS);
    Trainer t;
    trainer_setup(&t, &a);
    print0("%s: %d rank%s, Ψ = %zu parameters (%d Linear layers), %zu words, %zu examples\n",
           STAGE, rt.world, rt.world > 1 ? "s" : "", t.model.numel, t.model.nlayers,
           t.data.nwords, t.data.n);
    if (a.trace) trace_open(a.trace);
    train(&t);
    if (a.trace) {
        const char *err = trace_write(a.trace);
        if (err) fatal("%s", err);
    }
    if (a.save_model && rt.rank == 0) {
        const char *err = save_params(&t.model, a.save_model);
        if (err) fatal("%s", err);
    }
    sample_words(&t);
    report(&t);
    trainer_teardown(&t);
    rt_finalize();
    return 0;
}
#endif
