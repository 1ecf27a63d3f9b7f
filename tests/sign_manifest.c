// sign_manifest: makes a hand-edited checkpoint manifest's checksum (its 'end'
// line) match its lines again, so a test can reach the checks behind it: the
// ranges of its values, their agreement, lc5's scaler state.
// usage: sign_manifest MANIFEST
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

int main(int argc, char **argv) {
    static char text[1 << 20];
    if (argc != 2) return fprintf(stderr, "usage: sign_manifest MANIFEST\n"), 2;
    FILE *f = fopen(argv[1], "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = '\0';
    char *end = strstr(text, "\nend ");
    if (!end) return fprintf(stderr, "sign_manifest: %s: no 'end' line\n", argv[1]), 2;
    size_t body = (size_t)(end - text) + 1;
    f = fopen(argv[1], "w");
    if (!f) return perror(argv[1]), 2;
    fprintf(f, "%.*send %016llx\n", (int)body, text, (unsigned long long)XXH3_64bits(text, body));
    return fclose(f) != 0;
}
