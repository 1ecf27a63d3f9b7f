// safetensors: models as safetensors files (an 8-byte header length, a JSON header
// naming each tensor's dtype, shape and byte range, then the raw data), the
// format PyTorch's safetensors loader reads. Reading checks every field and
// every byte range before it touches the data. Tensor data may be in host or
// GPU memory.
#ifndef SAFETENSORS_H
#define SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "file.h"

#define ST_MAX_TENSORS 256
#define ST_MAX_NAME 64
#define ST_MAX_DIMS 8
#define ST_MAX_DIMS_TEXT "8"

typedef struct {
    char name[ST_MAX_NAME];
    char dtype[8];                    // "F32", "BF16", ...
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    uint64_t begin, end;              // byte range within the data section
} StTensor;

typedef struct {
    FILE *f;
    const char *path;
    char shown[200];                  // the path as messages show it
    uint64_t data_start;              // file offset of the data section
    int n;
    StTensor t[ST_MAX_TENSORS];   // a name longer than ST_MAX_NAME - 1 is kept cut,
    size_t name_len[ST_MAX_TENSORS];  // with its whole length: a cut name matches no lookup
} StFile;

// Bytes per element of a dtype safetensors knows ("F32", "BF16", ...); 0 for any other name.
size_t st_dtype_bytes(const char *dtype);
// Opens and validates a file. Returns NULL, or a one-line reason (c is then closed).
const char *st_open(StFile *c, const char *path);
// Reads elements [first, first+count) of the F32 tensor `name`, which must have
// exactly the given shape. Returns NULL or a one-line reason.
const char *st_read(StFile *c, const char *name, int ndim, const int64_t *shape,
                      size_t first, size_t count, float *dst);
// The same for a tensor of the given dtype ("BF16"): count elements of its
// size copied as they are (F32 values are checked finite, as above).
const char *st_read_dtype(StFile *c, const char *name, const char *dtype, int ndim, const int64_t *shape,
                            size_t first, size_t count, void *dst);
// Closes the file (again is harmless).
void st_close(StFile *c);

// A file being written tensor by tensor, so a caller never needs the whole
// model in memory at once (ZeRO-3 gathers one layer at a time). It is written
// atomically (file.h): the target changes only when st_finish succeeds.
typedef struct {
    AtomicFile out;
    uint64_t left;                    // bytes of data still expected
    uint64_t done;                    // bytes of data written so far
    uint64_t size;                    // the whole file's bytes
    FileHash hash;                    // and their checksum, as written
    int n;                            // the tensors, for naming a bad value
    StTensor t[ST_MAX_TENSORS];
} StWriter;

// Each spec's dtype is F32 unless it names another (its data then comes through
// st_append_bytes).
const char *st_create(StWriter *w, const char *path, int n, const StTensor *specs);
// Appends count floats of tensor data. Returns NULL or a one-line reason; a
// non-finite value is one (it names the tensor and element), and any error
// abandons the file, leaving the target as it was.
const char *st_append(StWriter *w, const float *data, size_t count);
// Appends bytes of tensor data as they are (host or GPU memory): for tensors
// that are not F32.
const char *st_append_bytes(StWriter *w, const void *data, size_t bytes);
// Completes the file and renames it over the target; a reason if any write
// failed or data is missing (then the target is as it was).
const char *st_finish(StWriter *w);
// Writes an F32 safetensors file: n tensors with their shapes and data, in order.
// Returns NULL or a one-line reason.
const char *st_write(const char *path, int n, const StTensor *specs,
                       const float *const *data);

#endif
