// manifest: what a training checkpoint is on disk, with no MPI in sight. A
// checkpoint is a folder: one safetensors file per saving rank and a manifest.
// Every kind of state ("params", "m", "v", "master", "params16") is kept either
// whole, in rank 0's file, or cut by the course's sharding rule (shards.h):
// each layer's flat segment (weight row-major, then bias) padded to a multiple
// of N, rank r holding slice r. A rank's file holds, per kind, one 1-D tensor: its pieces of
// every layer, in layer order, padding left out. Since the slice is a function
// of N alone, any range of any layer can be found in the files of any N: that
// is how a run resumes on another number of ranks, and how `consolidate`
// rebuilds the whole model. The stages save and resume through checkpoint.h.
#ifndef MANIFEST_H
#define MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "safetensors.h"
#include "shards.h"

#define MANIFEST_MAX_LAYERS 65
#define MANIFEST_MAX_KINDS 5
#define MANIFEST_MAX_VALUES 8
#define MANIFEST_MAX_RANKS 4096
#define MANIFEST_MAX_STEPS 1000000000L  // --steps' bound
#define MANIFEST_MANIFEST "manifest"
#define MANIFEST_LATEST "latest"

typedef struct {
    char name[16];      // "params", "m", "v", "master", "params16"
    char dtype[8];      // safetensors' name: "F32", "BF16", "F16"
    int ranks;          // 1: whole, in rank 0's file; else sliced over every rank's file
} ManifestKind;

typedef struct {
    char stage[32];     // the program that saved it
    int ranks;          // N when it was saved
    long step;          // optimizer steps done: the data position
    long adam_step;     // Adam's step count (lc5 skips some)
    uint64_t seed;      // with step, where the data order continues
    int batch;
    size_t examples;    // in the data set
    uint64_t data;      // the data set's fingerprint (data.h): another list of as many examples is refused
    int context, hidden, layers;  // the model's shape, as the options give it
    int nkinds;
    ManifestKind kind[MANIFEST_MAX_KINDS];
    int nvalues;        // scalar state (lc5's loss scale), by name
    char value_name[MANIFEST_MAX_VALUES][32];
    double value[MANIFEST_MAX_VALUES];
    uint64_t file_size[MANIFEST_MAX_RANKS], file_hash[MANIFEST_MAX_RANKS];  // rank r's file
} Manifest;

// The model of the manifest's shape: Linear layers, their out and in.
int manifest_nlayers(const Manifest *m);
void manifest_layer(const Manifest *m, int l, int *out, int *in);
// Elements in layer l's segment (weight and bias).
size_t manifest_layer_numel(const Manifest *m, int l);
// Where kind k of rank r's file holds layer l: its first element in the
// tensor, and the tensor's length.
size_t manifest_piece_at(const Manifest *m, int k, int r, int l);
size_t manifest_tensor_len(const Manifest *m, int k, int r);
// Index of kind `name` in m, or -1.
int manifest_kind(const Manifest *m, const char *name);

// Rank r's file in checkpoint folder dir, into buf.
void manifest_rank_file(char *buf, size_t cap, const char *dir, int r);
// The manifest of checkpoint folder dir, into buf.
void manifest_file(char *buf, size_t cap, const char *dir);
// The tensors of rank r's file (a kind kept whole is in rank 0's only), into
// specs; returns how many.
int manifest_specs(const Manifest *m, int r, StTensor *specs);

// Writes the manifest atomically to path. NULL or why not.
const char *manifest_write(const Manifest *m, const char *path);
// Reads and checks a manifest. NULL or a one-line reason.
const char *manifest_read(Manifest *m, const char *path);

// The step of a checkpoint folder's name (step-NNNNNNNN); -1 if name is not one.
long manifest_folder_step(const char *name);
// 1 if folder `name` of save_dir holds a manifest: a complete checkpoint.
int manifest_complete(const char *save_dir, const char *name);

// The checkpoint folder that path names: path itself if it holds a manifest,
// else the one its MANIFEST_LATEST file names, else (a save dir whose pointer
// was lost) its newest step folder with a manifest. Into dir; NULL or why none
// is there (a folder without a manifest is incomplete and is never loaded).
const char *manifest_locate(const char *path, char *dir, size_t cap);

// 1 if nothing at path was ever a checkpoint: no such folder, or a folder with
// neither a manifest, nor a rank file, nor a MANIFEST_LATEST file, nor a step
// folder, nor a save's temporary file. 0 otherwise, even if what is there is broken.
int manifest_none(const char *path);

// Reads ranges of layers from a checkpoint's files, one file open at a time;
// each file's size and checksum are compared with the manifest's the first
// time it is opened.
typedef struct {
    const Manifest *m;
    const char *dir;
    int open;                     // the rank whose file is open, or -1
    StFile c;
    unsigned char checked[MANIFEST_MAX_RANKS];
} ManifestReader;

void manifest_reader(ManifestReader *r, const Manifest *m, const char *dir);
// Elements [first, first + count) of layer l's segment of kind k, from whichever
// files hold them, into dst (count elements of the kind's dtype; host or GPU).
const char *manifest_reader_read(ManifestReader *r, int k, int l, size_t first, size_t count, void *dst);
void manifest_reader_close(ManifestReader *r);

#endif
