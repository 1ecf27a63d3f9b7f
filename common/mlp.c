// mlp: the model's shape from the options, and its layers' names in a file.
#include "mlp.h"
#include "data.h"

#include <stdio.h>
#include <string.h>

int mlp_layers(int layers) { return layers + 1; }

void mlp_shape(int context, int hidden, int layers, int l, int *out, int *in) {
    *in = l == 0 ? context * VOCAB : hidden;
    *out = l == layers ? VOCAB : hidden;
}

size_t mlp_numel(int out, int in) { return (size_t)out * (size_t)in + (size_t)out; }

void mlp_specs(StTensor specs[2], int l, int out, int in) {
    for (int w = 0; w < 2; w++) {
        StTensor *t = &specs[w];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "layers.%d.%s", l, w ? "bias" : "weight");
        strcpy(t->dtype, "F32");
        t->ndim = w ? 1 : 2;
        t->shape[0] = out;
        t->shape[1] = w ? 0 : in;
    }
}

const char *mlp_open(StFile *c, const char *path, int nlayers) {
    static char why[300];
    const char *err = st_open(c, path);
    if (err) return err;
    if (c->n == 2 * nlayers) return NULL;
    st_close(c);
    snprintf(why, sizeof why, "%s: has %d tensors, this model has %d", c->shown, c->n, 2 * nlayers);
    return why;
}

const char *mlp_read_layer(StFile *c, int l, int out, int in, size_t first, size_t count, float *dst) {
    StTensor t[2];
    mlp_specs(t, l, out, in);
    size_t nw = (size_t)out * (size_t)in, end = first + count;
    for (int w = 0; w < 2; w++) {
        size_t lo = w ? nw : 0, hi = w ? nw + (size_t)out : nw;  // the tensor's range in the segment
        size_t a = first > lo ? first : lo, b = end < hi ? end : hi;
        if (a >= b) continue;
        const char *err = st_read(c, t[w].name, t[w].ndim, t[w].shape, a - lo, b - a, dst + (a - first));
        if (err) return err;
    }
    return NULL;
}
