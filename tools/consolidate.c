// consolidate: a training checkpoint of any stage, saved at any number of ranks,
// turned into one model file: the full fp32 model in --save-model's format
// (PyTorch nn.Linear names), as DeepSpeed's zero_to_fp32 does. lc5's model is
// its fp32 master, not the 16-bit params. It reads one layer at a time, from
// whichever rank files hold its pieces, so it never holds more than one layer.
//   build/bin/consolidate DIR OUT.safetensors
// DIR is a checkpoint folder or a --save-dir (then its latest checkpoint).
// A single process; no MPI. Exit status 2: the checkpoint or the paths are bad;
// 1: the output could not be written (the previous file is kept).
#include "../common/base.h"
#include "../common/safetensors.h"
#include "../common/mlp.h"
#include "../common/file.h"
#include "../common/mem.h"
#include "../common/manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void __attribute__((noreturn)) stop(int status, const char *why) {
    fprintf(stderr, "consolidate: %s\n", why);
    exit(status);
}

// Writes the whole model of checkpoint dir (manifest m, kind k) to out. On an
// error, *status says whose it is: 2 the checkpoint's, 1 the output's.
static const char *write_model(const Manifest *m, const char *dir, int k, const char *out, int *status) {
    static StTensor specs[2 * MANIFEST_MAX_LAYERS];
    static StWriter w;
    static ManifestReader r;
    int nl = manifest_nlayers(m);
    for (int l = 0; l < nl; l++) {
        int o, i;
        manifest_layer(m, l, &o, &i);
        mlp_specs(specs + 2 * l, l, o, i);
    }
    *status = 1;
    const char *err = st_create(&w, out, 2 * nl, specs);
    manifest_reader(&r, m, dir);
    for (int l = 0; l < nl && !err; l++) {
        size_t n = manifest_layer_numel(m, l);
        float *layer = mem_alloc(MEM_PARAMS, n * sizeof(float));
        err = manifest_reader_read(&r, k, l, 0, n, layer);  // weight, then bias: the file's order
        if (err) file_abandon(&w.out), *status = 2;
        else err = st_append(&w, layer, n);
        mem_free(layer);
    }
    manifest_reader_close(&r);
    return err ? err : st_finish(&w);
}

int main(int argc, char **argv) {
    static Manifest m;
    static char dir[4200];
    char path[4300];
    rt.prog = "consolidate";
    if (argc != 3) stop(2, "usage: consolidate DIR OUT.safetensors (DIR: a checkpoint, or a --save-dir)");
    mem_init();
    const char *err = manifest_locate(argv[1], dir, sizeof dir);
    if (!err) {
        manifest_file(path, sizeof path, dir);
        err = manifest_read(&m, path);
    }
    if (!err) err = file_check_output(argv[2], "model file");
    if (err) stop(2, err);
    if (file_inside(argv[2], argv[1]) || file_inside(argv[2], dir)) {
        snprintf(path, sizeof path, "'%s' is inside the checkpoint '%s' it reads: consolidate never writes into a "
                 "checkpoint folder", file_shown(argv[2]), file_shown(argv[1]));
        stop(2, path);
    }
    int k = manifest_kind(&m, "params");
    if (k < 0) k = manifest_kind(&m, "master");
    if (k < 0) stop(2, "the checkpoint holds neither 'params' nor 'master'");
    if (strcmp(m.kind[k].dtype, "F32") != 0) stop(2, "the checkpoint's params are not fp32");
    int status;
    err = write_model(&m, dir, k, argv[2], &status);
    if (err) stop(status, err);
    printf("consolidate: %s (%s, %d rank%s, step %ld): '%s' into %s\n", dir, m.stage, m.ranks, m.ranks > 1 ? "s" : "",
           m.step, m.kind[k].name, argv[2]);
    return 0;
}
