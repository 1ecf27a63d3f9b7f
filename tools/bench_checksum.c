// bench_checksum: what a checkpoint's checksum costs. Hashes 1 GiB in memory
// (best of 3: the checksum alone) and, given files, reads and hashes each as a
// resume does (file_digest: the read and the checksum together).
//   build/bin/bench_checksum [FILE ...]
#include "../common/clock.h"
#include "../common/file.h"
#include "../common/mem.h"

#include <stdio.h>
#include <xxhash.h>

int main(int argc, char **argv) {
    size_t n = (size_t)1 << 30;
    unsigned char *p = mem_alloc_host(MEM_DATA, n);
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 2654435761u >> 13);
    static FileHash h;
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t0 = now_s();
        file_hash_begin(&h);
        file_hash_add(&h, p, n);
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    printf("checksum (XXH3-64) of 1 GiB in memory: %.3f s, %.2f GB/s\n", best, (double)n / best / 1e9);
    mem_free(p);
    for (int i = 1; i < argc; i++) {
        uint64_t size, hash;
        double t0 = now_s();
        const char *err = file_digest(argv[i], "file", &size, &hash);
        double t = now_s() - t0;
        if (err) return fprintf(stderr, "bench_checksum: %s\n", err), 2;
        printf("read and checksum of %s: %.1f MiB in %.3f s, %.2f GB/s\n", argv[i], (double)size / 1048576, t,
               (double)size / t / 1e9);
    }
    return 0;
}
