// ref_model: the course's model in double precision, for checking a stage's
// gradient without trusting any of its code. Included after the stage's .c
// (Model and Layer are the stage's; only the layer shapes and offsets of a full
// flat buffer are read). Layers are at most 128 wide.
#ifndef REF_MODEL_H
#define REF_MODEL_H

#include <math.h>
#include <string.h>

// Loss (mean over B) and its gradient for rows examples, everything in double.
static inline double ref_loss_grad(const Model *m, const double *p, const uint8_t *ctx, const int *tg,
                                   int rows, int B, double *grad) {
    enum { W = 128 };
    double act[MAX_LAYERS + 1][W], d[W], dn[W], loss = 0;
    for (int l = 0; l < m->nlayers; l++)
        if (m->layer[l].in > W || m->layer[l].out > W) fatal("ref_loss_grad: layer %d is wider than %d", l, W);
    for (size_t i = 0; i < m->numel && grad; i++) grad[i] = 0;
    for (int r = 0; r < rows; r++) {
        for (int i = 0; i < m->layer[0].in; i++) act[0][i] = 0;
        for (int t = 0; t < m->T; t++) act[0][t * VOCAB + ctx[r * m->T + t]] = 1;
        for (int l = 0; l < m->nlayers; l++) {
            const Layer *L = &m->layer[l];
            for (int o = 0; o < L->out; o++) {
                double z = p[L->off + (size_t)L->out * L->in + o];
                for (int i = 0; i < L->in; i++) z += p[L->off + (size_t)o * L->in + i] * act[l][i];
                act[l + 1][o] = (l < m->nlayers - 1 && z <= 0) ? 0 : z;
            }
        }
        double *z = act[m->nlayers], mx = z[0], sum = 0;
        for (int c = 1; c < VOCAB; c++) mx = fmax(mx, z[c]);
        for (int c = 0; c < VOCAB; c++) sum += exp(z[c] - mx);
        loss += (log(sum) - (z[tg[r]] - mx)) / B;
        if (!grad) continue;
        for (int c = 0; c < VOCAB; c++) d[c] = (exp(z[c] - mx) / sum - (c == tg[r])) / B;
        for (int l = m->nlayers - 1; l >= 0; l--) {
            const Layer *L = &m->layer[l];
            for (int o = 0; o < L->out; o++) {
                grad[L->off + (size_t)L->out * L->in + o] += d[o];
                for (int i = 0; i < L->in; i++) grad[L->off + (size_t)o * L->in + i] += d[o] * act[l][i];
            }
            for (int i = 0; i < L->in; i++) {
                dn[i] = 0;
                for (int o = 0; o < L->out; o++) dn[i] += d[o] * p[L->off + (size_t)o * L->in + i];
                dn[i] = act[l][i] > 0 ? dn[i] : 0;
            }
            memcpy(d, dn, sizeof d);
        }
    }
    return loss;
}

// The same for examples [first, first+rows) of global batch `step` of size B,
// read with the stage's data loader.
static inline double ref_grad_of(Trainer *t, const double *p, long step, int B, int first, int rows, double *grad) {
    uint8_t *ctx = mem_alloc(MEM_DATA, (size_t)rows * t->model.T);
    int *tg = mem_alloc(MEM_DATA, (size_t)rows * sizeof(int));
    data_batch(&t->data, step, B, first, rows, ctx, tg);
    double loss = ref_loss_grad(&t->model, p, ctx, tg, rows, B, grad);
    mem_free(ctx);
    mem_free(tg);
    return loss;
}

#endif
