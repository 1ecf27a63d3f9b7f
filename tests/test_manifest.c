// test_manifest: a training checkpoint's layout on disk. The sharding rule's
// ranges, the manifest (written, read back, every field checked), and any range
// of a layer read back from the files saved at any N.
#include "check_unit.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/safetensors.h"
#include "../common/mlp.h"
#include "../common/file.h"
#include "../common/manifest.h"
#define SIGN_MANIFEST_TEST
#include "sign_manifest.c"

static char dir[] = "/tmp/zc_manifest_XXXXXX";

static const char *path_of(const char *name) {
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

START_TEST(test_shard_ranges) {
    // Rank r of N holds [r x ceil(numel/N), ...): the slices tile the segment in
    // rank order, and the last ones may be short or empty.
    for (size_t numel = 1; numel <= 40; numel++)
        for (int n = 1; n <= 7; n++) {
            size_t next = 0, shard = (numel + (size_t)n - 1) / (size_t)n;
            for (int r = 0; r < n; r++) {
                Range g = shard_range(numel, r, n);
                ck_assert_uint_le(g.count, shard);
                if (g.count) ck_assert_uint_eq(g.first, (size_t)r * shard);
                if (g.count) ck_assert_uint_eq(g.first, next);
                next += g.count;
            }
            ck_assert_uint_eq(next, numel);
        }
}
END_TEST

// A manifest of a tiny model (context 1, hidden 2, one hidden layer: segments
// of 27x2+2 = 56 and 2x27+27 = 81 elements) kept over n ranks: "w" whole in F32,
// "s" sliced in F32, "h" sliced in BF16.
static void tiny_manifest(Manifest *m, int n) {
    memset(m, 0, sizeof *m);
    snprintf(m->stage, sizeof m->stage, "lc_test");
    m->ranks = n;
    m->step = 7;
    m->adam_step = 5;
    m->seed = 18446744073709551615ull;
    m->batch = 12;
    m->examples = 1000;
    m->context = 1, m->hidden = 2, m->layers = 1;
    m->nkinds = 3;
    m->kind[0] = (ManifestKind){ "w", "F32", 1 };
    m->kind[1] = (ManifestKind){ "s", "F32", n };
    m->kind[2] = (ManifestKind){ "h", "BF16", n };
    m->nvalues = 1;
    snprintf(m->value_name[0], sizeof m->value_name[0], "scale");
    m->value[0] = 0.1;
}

// Element i of layer l of kind k: a value every reader can predict (kind 2's
// are small negative integers, exact in bf16).
static float tiny_value(int k, int l, size_t i) {
    return k == 2 ? -1.0f - (float)(100 * l) - (float)i : (float)(1000 * k + 100 * l) + (float)i;
}
static uint16_t to_bf16(float v) {
    uint32_t b;
    memcpy(&b, &v, 4);
    return (uint16_t)(b >> 16);
}
static float from_bf16(uint16_t h) {
    uint32_t b = (uint32_t)h << 16;
    float v;
    memcpy(&v, &b, 4);
    return v;
}
static long file_size(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

// Writes rank files for m into folder d, as a stage's save would, and fills in
// their sizes and checksums.
static void tiny_checkpoint(Manifest *m, const char *d) {
    mkdir(d, 0777);
    for (int r = 0; r < m->ranks; r++) {
        static StWriter w;
        StTensor specs[MANIFEST_MAX_KINDS];
        char path[512];
        manifest_rank_file(path, sizeof path, d, r);
        ck_assert_ptr_null(st_create(&w, path, manifest_specs(m, r, specs), specs));
        for (int k = 0; k < m->nkinds; k++) {
            if (m->kind[k].ranks == 1 && r != 0) continue;
            for (int l = 0; l < manifest_nlayers(m); l++) {
                size_t numel = manifest_layer_numel(m, l);
                Range g = m->kind[k].ranks == 1 ? (Range){ 0, numel } : shard_range(numel, r, m->ranks);
                for (size_t i = g.first; i < g.first + g.count; i++) {
                    float v = tiny_value(k, l, i);
                    uint16_t b = to_bf16(v);
                    ck_assert_ptr_null(k == 2 ? st_append_bytes(&w, &b, 2) : st_append(&w, &v, 1));
                }
            }
        }
        ck_assert_ptr_null(st_finish(&w));
        ck_assert_uint_eq(w.size, (uint64_t)file_size(path));
        uint64_t size, hash;
        ck_assert_ptr_null(file_digest(path, "checkpoint file", &size, &hash));
        ck_assert_uint_eq(hash, file_hash_value(&w.hash));  // the writer's running checksum is the file's
        m->file_size[r] = size;
        m->file_hash[r] = hash;
    }
}

// Writes text to path with its 'end' line's checksum made right again, as a
// hand edit that knew the format would: the line checks behind it must hold.
static void write_signed(const char *path, const char *text) {
    ck_assert_int_eq(sign_manifest_write(path, text), 0);
}

START_TEST(test_manifest) {
    static Manifest m, back;
    tiny_manifest(&m, 3);
    m.file_size[2] = 123, m.file_hash[1] = 0xfedcba9876543210ull;
    ck_assert_ptr_null(manifest_write(&m, path_of("manifest")));
    ck_assert_ptr_null(manifest_read(&back, path_of("manifest")));
    ck_assert_mem_eq(&back, &m, sizeof m);
    // Each line changed in a way a reader must not accept, even with the
    // manifest's checksum made to match.
    static const char *bad[][2] = {
        { "ranks 3\n", "ranks 3x\n" },
        { "kind s F32 3\n", "kind s F32 2\n" },           // neither whole nor over every rank
        { "kind h BF16 3\n", "kind h Q4 3\n" },
        { "kind h BF16 3\n", "kind h BF16 3\nkind h BF16 3\n" },   // a kind twice
        { "value scale", "value scale 1\nvalue scale" },   // a value twice
        { "padding segment", "padding row" },
        { "step 7\n", "step -7\n" },
        { "step 7\n", "step 4\n" },                       // Adam's step 5 past it
        { "step 7\n", "step 7\nstep 8\n" },              // a line twice
        { "step 7\n", "" },                                // a line missing
        { "adam_step 5\n", "" },
        { "seed 18446744073709551615\n", "" },
        { "examples 1000\n", "" },
        { "examples 1000\n", "examples 0\n" },
        { "data 0000000000000000\n", "" },
        { "data 0000000000000000\n", "data 00000000000000zz\n" },
        { "file rank-00001", "file rank-00002" },
        { "fedcba9876543210", "fedcba987654321" },
        { "model context 1", "model context 99" },
        { "layer 1 weight 27 2", "layer 1 weight 27 3" },   // not the shape the model line gives
        { "psi 137\n", "psi 138\n" },
        { "psi 137\n", "" },                             // a shape line missing
    };
    FILE *f = fopen(path_of("manifest"), "r");
    static char text[8192], edited[8192];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *at = strstr(text, bad[i][0]);
        ck_assert_msg(at != NULL, "%s", bad[i][0]);
        snprintf(edited, sizeof edited, "%.*s%s%s", (int)(at - text), text, bad[i][1], at + strlen(bad[i][0]));
        write_signed(path_of("bad_manifest"), edited);
        const char *err = manifest_read(&back, path_of("bad_manifest"));
        ck_assert_msg(err && (strstr(err, "is corrupt") || strstr(err, "is incomplete")), "change %zu accepted: %s",
                      i, err ? err : "(no error)");
    }
    // A line missing is named; an edit that leaves the checksum as it was is
    // corrupt, whatever line it changed; a manifest cut before its end is
    // incomplete.
    snprintf(edited, sizeof edited, "%.*s%s", (int)(strstr(text, "seed ") - text), text, strstr(text, "batch "));
    write_signed(path_of("bad_manifest"), edited);
    const char *why = manifest_read(&back, path_of("bad_manifest"));
    ck_assert_msg(why && strstr(why, "is incomplete: it has no 'seed' line"), "%s", why ? why : "(accepted)");
    char *step = strstr(text, "step 7\n");
    snprintf(edited, sizeof edited, "%.*sstep 6\n%s", (int)(step - text), text, step + 7);
    FILE *g = fopen(path_of("bad_manifest"), "w");
    fputs(edited, g);
    fclose(g);
    why = manifest_read(&back, path_of("bad_manifest"));
    ck_assert_msg(why && strstr(why, "do not match the checksum on its 'end' line"), "%s", why ? why : "(accepted)");
    g = fopen(path_of("bad_manifest"), "w");
    fprintf(g, "%.*s", (int)(strstr(text, "\nend ") - text) + 1, text);
    fclose(g);
    why = manifest_read(&back, path_of("bad_manifest"));
    ck_assert_msg(why && strstr(why, "is incomplete: it has no 'end' line"), "%s", why ? why : "(accepted)");
    // A manifest with fewer file lines than ranks (cut after its rank 1) is
    // incomplete, not corrupt: nothing in it is wrong, something is missing.
    char *cut = strstr(text, "file rank-00002");
    ck_assert_ptr_nonnull(cut);
    snprintf(edited, sizeof edited, "%.*send 0\n", (int)(cut - text), text);
    write_signed(path_of("short_manifest"), edited);
    why = manifest_read(&back, path_of("short_manifest"));
    ck_assert_msg(why && strstr(why, "is incomplete"), "%s", why ? why : "(accepted)");
    // A checkpoint of an older format (1: FNV-1a checksums; 2: no data
    // fingerprint, no checksum of its own) is refused with the reason.
    for (int v = 1; v <= 2; v++) {
        g = fopen(path_of("old_manifest"), "w");
        fprintf(g, "zero-course training checkpoint %d%s", v, strchr(text, '\n'));
        fclose(g);
        const char *err = manifest_read(&back, path_of("old_manifest"));
        ck_assert_msg(err && strstr(err, "from another version of the course"), "%s", err);
    }
    // The checksum is XXH3-64: its value for no bytes is xxHash's published one.
    fclose(fopen(path_of("empty"), "w"));
    uint64_t size, hash;
    ck_assert_ptr_null(file_digest(path_of("empty"), "file", &size, &hash));
    ck_assert_uint_eq(size, 0);
    ck_assert_uint_eq(hash, 0x2D06800538D394C2ull);
}
END_TEST

START_TEST(test_shards_read) {
    // Saved at N = 1..5, read back whole and in every range that straddles
    // slices (which is what a rank of another N asks for).
    for (int n = 1; n <= 5; n++) {
        static Manifest m;
        static ManifestReader r;
        char d[256];
        snprintf(d, sizeof d, "%s/ck%d", dir, n);
        tiny_manifest(&m, n);
        tiny_checkpoint(&m, d);
        manifest_reader(&r, &m, d);
        for (int k = 0; k < m.nkinds; k++)
            for (int l = 0; l < manifest_nlayers(&m); l++) {
                size_t numel = manifest_layer_numel(&m, l);
                for (size_t first = 0; first < numel; first += 7)
                    for (size_t count = 0; first + count <= numel; count += 5) {
                        float got[81];
                        uint16_t half[81];
                        ck_assert_ptr_null(manifest_reader_read(&r, k, l, first, count, k == 2 ? (void *)half : got));
                        for (size_t i = 0; i < count; i++) {
                            float v = k == 2 ? from_bf16(half[i]) : got[i];
                            ck_assert_float_eq(v, tiny_value(k, l, first + i));
                        }
                    }
            }
        manifest_reader_close(&r);
        // A byte changed anywhere in a file: its checksum no longer matches.
        char path[512];
        manifest_rank_file(path, sizeof path, d, n - 1);
        FILE *f = fopen(path, "r+b");
        fseek(f, -1, SEEK_END);
        int c = fgetc(f);
        fseek(f, -1, SEEK_END);
        fputc(c ^ 1, f);
        fclose(f);
        manifest_reader(&r, &m, d);
        const char *err = manifest_reader_read(&r, 1, 1, 0, manifest_layer_numel(&m, 1), (float[81]){ 0 });
        ck_assert_ptr_nonnull(err);
        ck_assert_ptr_nonnull(strstr(err, "is corrupt"));
        manifest_reader_close(&r);
    }
}
END_TEST

START_TEST(test_shards_locate) {
    char d[256], found[512], path[600];
    snprintf(d, sizeof d, "%s/save", dir);
    mkdir(d, 0777);
    ck_assert_ptr_nonnull(strstr(manifest_locate(d, found, sizeof found), "no checkpoint in"));
    snprintf(path, sizeof path, "%s/step-00000004", d);
    mkdir(path, 0777);
    FILE *f = fopen(path_of("save/latest"), "w");
    fprintf(f, "step-00000004\n");
    fclose(f);
    ck_assert_ptr_nonnull(strstr(manifest_locate(d, found, sizeof found), "is incomplete"));
    f = fopen(path_of("save/step-00000004/manifest"), "w");
    fclose(f);
    ck_assert_ptr_null(manifest_locate(d, found, sizeof found));
    ck_assert_str_eq(found, path);
    ck_assert_ptr_null(manifest_locate(path, found, sizeof found));  // the folder itself
    ck_assert_str_eq(found, path);
    f = fopen(path_of("save/latest"), "w");
    fprintf(f, "../../etc\n");
    fclose(f);
    ck_assert_ptr_nonnull(strstr(manifest_locate(d, found, sizeof found), "is corrupt"));
}
END_TEST

static Suite *suite(void) {
    unit_temp_dir(dir);
    Suite *s = suite_create("manifest");
    TCase *tl = tcase_create("training checkpoints");
    tcase_add_test(tl, test_shard_ranges);
    tcase_add_test(tl, test_manifest);
    tcase_add_test(tl, test_shards_read);
    tcase_add_test(tl, test_shards_locate);
    suite_add_tcase(s, tl);
    return s;
}

UNIT_MAIN("test_manifest", suite)
