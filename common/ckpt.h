// ckpt: models as safetensors files (an 8-byte header length, a JSON header
// naming each tensor's dtype, shape and byte range, then the raw data), the
// format PyTorch's safetensors loader reads. Reading checks every field and
// every byte range before it touches the data. Tensor data may be in host or
// GPU memory.
#ifndef CKPT_H
#define CKPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "file.h"

#define CKPT_MAX_TENSORS 256
#define CKPT_MAX_NAME 64
#define CKPT_MAX_DIMS 8
#define CKPT_MAX_DIMS_TEXT "8"

typedef struct {
    char name[CKPT_MAX_NAME];
    char dtype[8];                    // "F32", "BF16", ...
    int ndim;
    int64_t shape[CKPT_MAX_DIMS];
    uint64_t begin, end;              // byte range within the data section
} CkptTensor;

typedef struct {
    FILE *f;
    const char *path;
    char shown[200];                  // the path as messages show it
    uint64_t data_start;              // file offset of the data section
    int n;
    CkptTensor t[CKPT_MAX_TENSORS];   // a name longer than CKPT_MAX_NAME - 1 is kept
    uint64_t name_len[CKPT_MAX_TENSORS], name_hash[CKPT_MAX_TENSORS];  // cut: these tell it apart
} Ckpt;

// Bytes per element of a dtype safetensors knows ("F32", "BF16", ...); 0 for any other name.
size_t ckpt_dtype_bytes(const char *dtype);
// Opens and validates a file. Returns NULL, or a one-line reason (c is then closed).
const char *ckpt_open(Ckpt *c, const char *path);
// Reads elements [first, first+count) of the F32 tensor `name`, which must have
// exactly the given shape. Returns NULL or a one-line reason.
const char *ckpt_read(Ckpt *c, const char *name, int ndim, const int64_t *shape,
                      size_t first, size_t count, float *dst);
// The same for a tensor of the given dtype ("BF16"): count elements of its
// size copied as they are (F32 values are checked finite, as above).
const char *ckpt_read_dtype(Ckpt *c, const char *name, const char *dtype, int ndim, const int64_t *shape,
                            size_t first, size_t count, void *dst);
// Closes the file (again is harmless).
void ckpt_close(Ckpt *c);

// The course's models: Linear layers named as PyTorch's nn.Linear names them
// (layers.{l}.weight [out, in], layers.{l}.bias [out]). A layer's flat segment
// is its weight, row-major, then its bias: the order of the file's data too.
// The two tensors of layer l.
void ckpt_linear_specs(CkptTensor specs[2], int l, int out, int in);
// ckpt_open, and a reason unless the file holds exactly nlayers such layers' tensors.
const char *ckpt_open_model(Ckpt *c, const char *path, int nlayers);
// Elements [first, first+count) of layer l's flat segment, from whichever of its
// two tensors hold them (a rank's slice may straddle weight and bias).
const char *ckpt_read_layer(Ckpt *c, int l, int out, int in, size_t first, size_t count,
                            float *dst);

// A file being written tensor by tensor, so a caller never needs the whole
// model in memory at once (ZeRO-3 gathers one layer at a time). It is written
// atomically (file.h): the target changes only when ckpt_finish succeeds.
typedef struct {
    AtomicFile out;
    uint64_t left;                    // bytes of data still expected
    uint64_t done;                    // bytes of data written so far
    uint64_t size, hash;              // the whole file's bytes and their file_hash, as written
    int n;                            // the tensors, for naming a bad value
    CkptTensor t[CKPT_MAX_TENSORS];
} CkptWriter;

// Each spec's dtype is F32 unless it names another (its data then comes through
// ckpt_append_bytes).
const char *ckpt_create(CkptWriter *w, const char *path, int n, const CkptTensor *specs);
// Appends count floats of tensor data. Returns NULL or a one-line reason; a
// non-finite value is one (it names the tensor and element), and any error
// abandons the file, leaving the target as it was.
const char *ckpt_append(CkptWriter *w, const float *data, size_t count);
// Appends bytes of tensor data as they are (host or GPU memory): for tensors
// that are not F32.
const char *ckpt_append_bytes(CkptWriter *w, const void *data, size_t bytes);
// Completes the file and renames it over the target; a reason if any write
// failed or data is missing (then the target is as it was).
const char *ckpt_finish(CkptWriter *w);
// Writes an F32 safetensors file: n tensors with their shapes and data, in order.
// Returns NULL or a one-line reason.
const char *ckpt_write(const char *path, int n, const CkptTensor *specs,
                       const float *const *data);

#endif
