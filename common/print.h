// print: what rank 0 says, and bytes as people read them.
#ifndef PRINT_H
#define PRINT_H

// printf on rank 0 only.
void print0(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// bytes as people read them: "512 B", "3.2 MiB", "60.07 GiB". Valid until four
// more calls.
const char *human_bytes(double bytes);

#endif
