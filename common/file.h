// file: the paths a run reads and writes. Inputs and outputs are checked
// before anything is opened (a FIFO or a directory is refused, not waited
// on), and every output is written atomically: into a temporary file beside
// the target, flushed and synced, then renamed over it. A failed write leaves
// the previous file as it was and no partial one. Reasons are one line, with
// the system's reason kept whole however long the path.
#ifndef FILE_H
#define FILE_H

#include <stdint.h>
#include <stdio.h>

// path (or any value a message quotes) as a message shows it: whole, or its
// head and tail if it is long, control characters escaped so the message stays
// one line. Valid until four more calls.
const char *file_shown(const char *path);
// NULL if path is a regular file this process can read; else why not, saying
// it is the `what` (e.g. "data file"). Opens nothing.
const char *file_check_input(const char *path, const char *what);
// NULL if path can be written: it is a regular file or absent, and the
// temporary file a write of it uses can be created and take a synced block
// (tried, then removed at once). Leaves nothing behind.
const char *file_check_output(const char *path, const char *what);
// NULL if path can hold new files: a directory, or absent with a parent that
// takes new files (tried as above). Creates nothing.
const char *file_check_dir(const char *path, const char *what);
// 1 if a and b name the same file, or would once created.
int file_same(const char *a, const char *b);
// 1 if path is, or would be once created, folder dir itself (file_same) or
// inside it or a folder below it (links followed); 0 if not.
int file_inside(const char *path, const char *dir);

typedef struct {
    FILE *f;                // the temporary file, while open
    char path[4096];        // the target, as given
    char target[4096];      // the file replaced: path with its links resolved
    char tmp[4096 + 32];    // the temporary file beside the target
    const char *what;       // for messages: "model file", "loss log", ...
} AtomicFile;

// Opens a temporary file beside path for writing (beside the file a link at
// path names: that file is replaced, the link stays). NULL or why not.
const char *file_begin(AtomicFile *w, const char *path, const char *what);
// The same, but the name path itself is replaced: a link there becomes the
// file, so the write never leaves path's folder.
const char *file_begin_here(AtomicFile *w, const char *path, const char *what);
// 1 if name (a file name, no folder) is one of the temporary files a write of
// the file named `of` makes: of.tmp.PID.N.
int file_is_temporary(const char *name, const char *of);
// Removes the temporary files of writes still open; async-signal-safe, for a
// handler that ends the process.
void file_remove_unfinished(void);
// Flushes, syncs and closes the temporary file, then renames it over the
// target. NULL, or why not: then the target is as it was and the temporary
// file is gone.
const char *file_commit(AtomicFile *w);
// Closes and removes the temporary file: the target stays as it was.
void file_abandon(AtomicFile *w);
// A write to w failed with errno e: abandons it and says why, in the words of
// every other write error ("cannot write <what> '<path>': <reason>").
const char *file_fail(AtomicFile *w, int e);


// A checksum of bytes, taken piece by piece as a file is written: XXH3, 64
// bits (xxHash), at memory speed, so a multi-GB checkpoint pays for its write,
// not for its checksum. The state is xxHash's, held here as bytes of its size
// and alignment (file.c checks both), so that no header of the course carries
// a type of xxHash's and a FileHash needs no allocation.
typedef struct { _Alignas(64) unsigned char state[576]; } FileHash;
void file_hash_begin(FileHash *h);
void file_hash_add(FileHash *h, const void *p, size_t n);
uint64_t file_hash_value(const FileHash *h);
// Reads the whole regular file at path: its size and checksum. NULL or why not.
const char *file_digest(const char *path, const char *what, uint64_t *size, uint64_t *hash);

#endif
