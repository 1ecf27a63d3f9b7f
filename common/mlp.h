// mlp: the course's model as every stage, the checkpoints and consolidate see
// it, in one place. T symbols of context, each one-hot over VOCAB; L hidden
// Linear layers with ReLU; a Linear to VOCAB logits. Layer l's shape comes
// from the options here, and so do its names in a model file: PyTorch's
// nn.Linear names, layers.{l}.weight [out, in] and layers.{l}.bias [out]. A
// layer's flat segment is its weight, row-major, then its bias: the order of
// the file's data too.
#ifndef MLP_H
#define MLP_H

#include <stddef.h>

#include "safetensors.h"

// Linear layers of a model with `layers` hidden ones: the output layer too.
int mlp_layers(int layers);
// Layer l's outputs and inputs, for --context, --hidden and --layers.
void mlp_shape(int context, int hidden, int layers, int l, int *out, int *in);
// Elements of a layer's flat segment: out x in weights, then out biases.
size_t mlp_numel(int out, int in);

// The two tensors of layer l, as a model file holds them.
void mlp_specs(StTensor specs[2], int l, int out, int in);
// st_open, and a reason unless the file holds exactly nlayers such layers' tensors.
const char *mlp_open(StFile *c, const char *path, int nlayers);
// Elements [first, first+count) of layer l's flat segment, from whichever of its
// two tensors hold them (a rank's slice may straddle weight and bias).
const char *mlp_read_layer(StFile *c, int l, int out, int in, size_t first, size_t count, float *dst);

#endif
