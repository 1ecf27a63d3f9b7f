// file: path checks and atomic writes.
#include "file.h"
#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t's size, which FileHash holds
#include <xxhash.h>

static char reason[1024];

#define REFUSE(...) do { snprintf(reason, sizeof reason, __VA_ARGS__); return reason; } while (0)

// Up to len bytes of src into dst (cap bytes, NUL included), each control
// character as an escape (\n, \t, \x1b): a message stays one line. Returns
// the bytes of src taken.
static size_t escape(char *dst, size_t cap, const char *src, size_t len) {
    size_t i = 0, o = 0;
    for (; i < len; i++) {
        unsigned char c = (unsigned char)src[i];
        char e[5] = { (char)c, 0 };
        if (c == '\n' || c == '\t') snprintf(e, sizeof e, "\\%c", c == '\n' ? 'n' : 't');
        else if (c < 0x20 || c == 0x7f) snprintf(e, sizeof e, "\\x%02x", c);
        size_t n = strlen(e);
        if (o + n >= cap) break;
        memcpy(dst + o, e, n), o += n;
    }
    dst[o] = '\0';
    return i;
}

const char *file_shown(const char *path) {
    static char shown[4][200];
    static int next;
    size_t n = strlen(path);
    char *s = shown[next++ % 4];
    if (escape(s, sizeof shown[0], path, n) == n) return s;
    size_t head = escape(s, 84, path, 80);  // head ... tail: at most 83 + 3 + 100 + 1
    strcat(s, "...");
    char *at = s + strlen(s);
    size_t space = sizeof shown[0] - (size_t)(at - s), tail = n - head < 100 ? n - head : 100;
    while (escape(at, space, path + n - tail, tail) < tail) tail--;  // the end, whole: it names the file
    return s;
}

// The directory path is in ("." for a bare name), into dir.
static void dir_of(const char *path, char *dir, size_t cap) {
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, cap, ".");
    else if (slash == path) snprintf(dir, cap, "/");
    else snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

// ----------------------------------------------------------------------------
// checks

const char *file_check_input(const char *path, const char *what) {
    struct stat sb;
    if (stat(path, &sb) != 0) REFUSE("cannot read %s '%s': %s", what, file_shown(path), strerror(errno));
    if (!S_ISREG(sb.st_mode)) REFUSE("cannot read %s '%s': not a regular file", what, file_shown(path));
    if (access(path, R_OK) != 0) REFUSE("cannot read %s '%s': %s", what, file_shown(path), strerror(errno));
    return NULL;
}

// NULL if directory dir takes a new file and the disk a block of it (written,
// synced and removed at once); else why not, naming path.
static const char *probe_dir(const char *dir, const char *path, const char *what) {
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/.zc-probe-XXXXXX", dir);
    int fd = mkstemp(probe);
    if (fd < 0) REFUSE("cannot write %s '%s': %s", what, file_shown(path), strerror(errno));
    static const char block[4096];
    int ok = write(fd, block, sizeof block) == (ssize_t)sizeof block && fsync(fd) == 0;
    int e = errno;
    close(fd);
    unlink(probe);
    if (!ok) REFUSE("cannot write %s '%s': %s", what, file_shown(path), strerror(e ? e : ENOSPC));
    return NULL;
}

const char *file_check_output(const char *path, const char *what) {
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (!S_ISREG(sb.st_mode)) REFUSE("cannot write %s '%s': not a regular file", what, file_shown(path));
        if (access(path, W_OK) != 0) REFUSE("cannot write %s '%s': %s", what, file_shown(path), strerror(errno));
    } else if (errno != ENOENT) {
        REFUSE("cannot write %s '%s': %s", what, file_shown(path), strerror(errno));
    }
    // The write's own temporary file (NAME.tmp.PID.N: a long name may fit where
    // it does not) must be created beside the target, and the disk take a
    // block of it, synced: that is how the file will be written.
    AtomicFile w;
    const char *err = file_begin(&w, path, what);
    if (err) return err;
    static const char block[4096];
    int ok = fwrite(block, 1, sizeof block, w.f) == sizeof block && fflush(w.f) == 0 && fsync(fileno(w.f)) == 0;
    int e = errno;
    file_abandon(&w);
    if (!ok) REFUSE("cannot write %s '%s': %s", what, file_shown(path), strerror(e ? e : ENOSPC));
    return NULL;
}

const char *file_check_dir(const char *path, const char *what) {
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode)) REFUSE("cannot write %s '%s': not a directory", what, file_shown(path));
        return probe_dir(path, path, what);
    }
    if (errno != ENOENT) REFUSE("cannot write %s '%s': %s", what, file_shown(path), strerror(errno));
    if (lstat(path, &sb) == 0)  // a link to nothing: a folder could not be made there
        REFUSE("cannot write %s '%s': a link to a path that does not exist", what, file_shown(path));
    char dir[PATH_MAX];
    if (strlen(path) >= sizeof dir) REFUSE("cannot write %s '%s': %s", what, file_shown(path), strerror(ENAMETOOLONG));
    dir_of(path, dir, sizeof dir);
    return probe_dir(dir, path, what);
}

// Where path is or would be: its real directory and its name.
static int resolve(const char *path, char *out, size_t cap) {
    char real[PATH_MAX], dir[PATH_MAX];
    if (realpath(path, real)) return snprintf(out, cap, "%s", real) < (int)cap;
    dir_of(path, dir, sizeof dir);
    if (!realpath(dir, real)) return 0;
    const char *slash = strrchr(path, '/');
    return snprintf(out, cap, "%s/%s", real, slash ? slash + 1 : path) < (int)cap;
}

int file_inside(const char *path, const char *dir) {
    static char rp[2 * PATH_MAX], rd[PATH_MAX];
    if (file_same(path, dir)) return 1;
    if (!resolve(path, rp, sizeof rp) || !realpath(dir, rd)) return 0;
    size_t n = strlen(rd);
    return strncmp(rp, rd, n) == 0 && (rp[n] == '/' || (n == 1 && rd[0] == '/'));
}

int file_same(const char *a, const char *b) {
    static char ra[2 * PATH_MAX], rb[2 * PATH_MAX];
    if (!resolve(a, ra, sizeof ra) || !resolve(b, rb, sizeof rb)) return strcmp(a, b) == 0;
    return strcmp(ra, rb) == 0;
}

// ----------------------------------------------------------------------------
// the temporary files open now: removed if the process ends before committing
// them (fatal, exit, or a signal that ends it), so a stopped run leaves no
// partial file behind

#define MAX_OPEN 8
static AtomicFile *volatile open_files[MAX_OPEN];

void file_remove_unfinished(void) {
    for (int i = 0; i < MAX_OPEN; i++)
        if (open_files[i]) unlink(open_files[i]->tmp);  // async-signal-safe
}

static void on_fatal_signal(int sig) {
    file_remove_unfinished();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void watch_once(void) {
    static int done;
    if (done) return;
    done = 1;
    base_on_fatal(file_remove_unfinished);
    atexit(file_remove_unfinished);
    // Past a file-size limit (ulimit -f), a write fails with EFBIG and is
    // reported like any other write error, instead of killing the process.
    signal(SIGXFSZ, SIG_IGN);
    int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        // A signal the launcher set to be ignored stays ignored.
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) sigaction(sigs[i], &sa, NULL);
    }
}

static int watch(AtomicFile *w) {
    watch_once();
    for (int i = 0; i < MAX_OPEN; i++)
        if (!open_files[i]) return open_files[i] = w, 1;
    return 0;
}

static void unwatch(AtomicFile *w) {
    for (int i = 0; i < MAX_OPEN; i++)
        if (open_files[i] == w) open_files[i] = NULL;
}

// ----------------------------------------------------------------------------
// atomic writes

// follow: the file a link names is the one replaced (the link stays); else the
// name itself is (a link there becomes the file). A device or a FIFO is never
// replaced.
static const char *begin(AtomicFile *w, const char *path, const char *what, int follow) {
    static unsigned serial;
    memset(w, 0, sizeof *w);
    w->what = what;
    if (snprintf(w->path, sizeof w->path, "%s", path) >= (int)sizeof w->path)
        REFUSE("cannot write %s '%s': %s", what, file_shown(path), strerror(ENAMETOOLONG));
    struct stat sb;
    if ((follow ? stat(path, &sb) : lstat(path, &sb)) == 0 && !S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode))
        REFUSE("cannot write %s '%s': not a regular file", what, file_shown(path));
    if (!follow || !realpath(path, w->target)) snprintf(w->target, sizeof w->target, "%s", path);
    if (!watch(w)) REFUSE("cannot write %s '%s': more than %d files open for writing", what, file_shown(path), MAX_OPEN);
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {  // another writer may hold a name: take the next
        snprintf(w->tmp, sizeof w->tmp, "%s.tmp.%ld.%u", w->target, (long)getpid(), serial++);
        fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0 || !(w->f = fdopen(fd, "wb"))) {
        int e = errno;
        if (fd >= 0) close(fd), unlink(w->tmp);
        unwatch(w);
        REFUSE("cannot write %s '%s': %s", what, file_shown(path), strerror(e));
    }
    return NULL;
}

const char *file_begin(AtomicFile *w, const char *path, const char *what) { return begin(w, path, what, 1); }

const char *file_begin_here(AtomicFile *w, const char *path, const char *what) { return begin(w, path, what, 0); }

int file_is_temporary(const char *name, const char *of) {
    size_t n = strlen(of);
    return strncmp(name, of, n) == 0 && strncmp(name + n, ".tmp.", 5) == 0;
}

// Makes the rename itself durable. A file system that cannot sync a
// directory (EINVAL) has nothing more to do.
static int sync_dir(const char *path) {
    char dir[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return 0;
    int ok = fsync(fd) == 0 || errno == EINVAL;
    close(fd);
    return ok;
}

const char *file_commit(AtomicFile *w) {
    if (!w->f) REFUSE("cannot write %s '%s': not open", w->what, file_shown(w->path));
    int ok = fflush(w->f) == 0 && !ferror(w->f) && fsync(fileno(w->f)) == 0;
    int e = errno;
    if (fclose(w->f) != 0 && ok) ok = 0, e = errno;
    w->f = NULL;
    if (ok && rename(w->tmp, w->target) != 0) ok = 0, e = errno;
    if (ok) {
        unwatch(w);
        if (!sync_dir(w->target)) REFUSE("cannot write %s '%s': %s", w->what, file_shown(w->path), strerror(errno));
        return NULL;
    }
    unlink(w->tmp);
    unwatch(w);
    REFUSE("cannot write %s '%s': %s", w->what, file_shown(w->path), strerror(e ? e : EIO));
}

void file_abandon(AtomicFile *w) {
    if (!w->f) return;
    fclose(w->f);
    w->f = NULL;
    unlink(w->tmp);
    unwatch(w);
}

const char *file_fail(AtomicFile *w, int e) {
    file_abandon(w);
    REFUSE("cannot write %s '%s': %s", w->what, file_shown(w->path), strerror(e ? e : EIO));
}

// ----------------------------------------------------------------------------
// checksums

_Static_assert(sizeof(XXH3_state_t) <= sizeof(FileHash) && _Alignof(XXH3_state_t) <= _Alignof(FileHash),
               "FileHash must hold xxHash's XXH3 state: grow it to this version's size");
#define XXH_STATE(h) ((XXH3_state_t *)(void *)(h)->state)

void file_hash_begin(FileHash *h) {
    if (XXH3_64bits_reset(XXH_STATE(h)) != XXH_OK) fatal("xxHash: cannot start a checksum");
}

void file_hash_add(FileHash *h, const void *p, size_t n) {
    if (XXH3_64bits_update(XXH_STATE(h), p, n) != XXH_OK) fatal("xxHash: cannot add to a checksum");
}

uint64_t file_hash_value(const FileHash *h) {
    return XXH3_64bits_digest((const XXH3_state_t *)(const void *)h->state);
}

const char *file_digest(const char *path, const char *what, uint64_t *size, uint64_t *hash) {
    const char *err = file_check_input(path, what);
    if (err) return err;
    FILE *f = fopen(path, "rb");
    if (!f) REFUSE("cannot read %s '%s': %s", what, file_shown(path), strerror(errno));
    static unsigned char buf[1 << 20];
    static FileHash h;
    uint64_t n = 0;
    size_t got;
    file_hash_begin(&h);
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) file_hash_add(&h, buf, got), n += got;
    int bad = ferror(f);
    fclose(f);
    if (bad) REFUSE("cannot read %s '%s': read error", what, file_shown(path));
    *size = n;
    *hash = file_hash_value(&h);
    return NULL;
}
