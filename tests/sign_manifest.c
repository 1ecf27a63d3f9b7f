// sign_manifest: makes a hand-edited checkpoint manifest's checksum (its 'end'
// line) match its lines again, so a test can reach the checks behind it: the
// ranges of its values, their agreement, lc5's scaler state. test_manifest
// includes this file for sign_manifest_write (SIGN_MANIFEST_TEST).
// usage: sign_manifest MANIFEST
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

// Writes text to path with its 'end' line's checksum made right again: XXH3 of
// every byte before it, as the course writes it. 0, or -1 if text has no 'end'
// line or path cannot be written.
static int sign_manifest_write(const char *path, const char *text) {
    const char *end = strstr(text, "\nend ");
    if (!end) return -1;
    size_t body = (size_t)(end - text) + 1;
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "%.*send %016llx\n", (int)body, text, (unsigned long long)XXH3_64bits(text, body));
    return fclose(f) != 0 ? -1 : 0;
}

#ifndef SIGN_MANIFEST_TEST
int main(int argc, char **argv) {
    static char text[1 << 20];
    if (argc != 2) return fprintf(stderr, "usage: sign_manifest MANIFEST\n"), 2;
    FILE *f = fopen(argv[1], "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = '\0';
    if (sign_manifest_write(argv[1], text) != 0)
        return fprintf(stderr, "sign_manifest: %s: no 'end' line, or it cannot be written\n", argv[1]), 2;
    return 0;
}
#endif
