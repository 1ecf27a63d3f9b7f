// check_mpi: running Check tests on every rank, one check at a time. Tests run
// without fork (MPI and fork do not mix); every assertion in a multi-rank test
// is agreed by all ranks (CK_ALL), so all ranks leave a failing test together
// and none is left waiting in a collective. Each check's verdict is agreed by
// every rank too (a failure on rank 2 alone fails it, with rank 2's message),
// a watchdog ends a check that runs past its budget with each rank's state, and
// the verdicts go to a file the grader names (ZC_RESULTS), never only to stdout.
#ifndef CHECK_MPI_H
#define CHECK_MPI_H

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <stdarg.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/clock.h"
#include "../common/comm.h"
#include "../common/comm_p2p.h"
#include "../common/env.h"
#include "../common/file.h"
#include "../common/rt.h"

// Fails the test on every rank if cond is false on any rank.
#define CK_ALL(cond, ...) do {                                   \
        int ok_ = (cond) ? 1 : 0;                                \
        comm_agree_min(&ok_);                                    \
        ck_assert_msg(ok_, __VA_ARGS__);                         \
    } while (0)

// The verdict of every rank together: 1 only if ok on every rank; else msg (512
// bytes) becomes the message of the lowest rank that failed. Collective.
static inline int agree_verdict(int ok, char *msg) {
    int first = ok ? rt.world : rt.rank;
    comm_agree_min(&first);
    if (first == rt.world) return 1;
    int32_t text[128];  // 512 bytes of text, moved as ints
    memcpy(text, msg, sizeof text);
    ((char *)text)[sizeof text - 1] = '\0';
    comm_broadcast(text, 128, DT_I32, first);
    memcpy(msg, text, sizeof text);
    return 0;
}

// Fails the test on every rank if ok is 0 on any rank, with the message that
// the lowest such rank formats: rank 0 prints what rank 2 saw. Collective,
// through the backend in use (a test of a hand-written backend switches back
// to the library's first).
static inline void ck_all_msg(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void ck_all_msg(int ok, const char *fmt, ...) {
    char msg[512] = "";
    if (!ok) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
    }
    if (!agree_verdict(ok, msg)) ck_abort_msg("%s", msg);
}

// ----------------------------------------------------------------------------
// graded checks (make grade): each is one Check test, run alone, at the N it is
// graded at. make test runs the same programs the same way, every check at once.

typedef struct {
    const char *id;       // "lc2.1a": exercise lc2.1's check a
    int points;           // per N; 0: a project test, run by make test only
    const char *ns;       // the ranks it is graded at ("1 2 3 4"; lc0's "1")
    const char *title;    // what it checks, as the grader prints it
    const TTest *test;
} Graded;

#define GRADED_MAX 64
// What the watchdog allows a check. Counted in this rank's processor time,
// which a loaded machine does not stretch (a rank that waits for another spins
// in MPI, so it uses about the processor time its partner's work takes,
// however slowly the machine runs both):
//   GRADED_STALL processor seconds in which the rank neither completes a
//     collective or a message nor launches compute: a deadlock (its ranks
//     spin), or a loop that never ends; a check here stands still for a
//     fraction of a second (at most 0.3 s, measured in every suite and
//     grade, loaded);
//   GRADED_LOOP processor seconds in which messages pass but no collective
//     completes and no compute starts: a hand-written collective that never
//     ends (a loop that exchanges forever);
//   GRADED_CPU processor seconds in all: a loop that goes on computing or
//     communicating. The slowest check of make test used 3.7 s on a rank in
//     make test itself (test_lc5's bf16 run against fp32 at N = 2, its ranks
//     spinning while the other waits for a core; 2.5 s beside eight busy
//     loops, 8.0 s under the sanitizers, which run with ZC_TIME_SCALE=3), the
//     slowest graded one 1.0 s (0.35 s quiet): a sixteenth and a sixtieth of
//     it, under the tenth the other limits keep from right code. An endless
//     loop of training steps costs a learner this at every check it reaches,
//     and the mutation run as much for each mutant that loops.
// A waiting rank's processor time stands for its partner's work only where
// the scheduler shares the core fairly among the ranks that wait, and Linux's
// EEVDF scheduler (6.6 on) does not: each sched_yield of a waiting poll moves
// the rank a whole slice back, so beside busy processes it gets turns of a few
// microseconds (0.8 ms of processor time a second beside eight busy loops on
// 2 cores), and a deadlock took minutes to use 3 s. So the first two limits
// count, for each second in which the rank was awake and got less than half
// its fair share of the machine (the cores over the tasks that want one), that
// fair share: what a partner at work gets, which the rank's own waiting no
// longer shows.
// Two limits in wall-clock time end what uses no processor time at all:
//   GRADED_ASLEEP seconds with no progress in which every thread but the
//     watchdog was asleep each time it looked (not runnable: a thread that
//     waits for the processor on a busy machine counts as awake), waiting
//     for what never comes;
//   GRADED_WALL seconds in all: a backstop that a check reaches only on a
//     machine loaded hundreds of times over (its message gives the load).
// ZC_TIME_SCALE multiplies all five (sanitizers, a slow machine).
#define GRADED_STALL 3.0
#define GRADED_LOOP 15.0
#define GRADED_CPU 60.0
#define GRADED_ASLEEP 30.0
#define GRADED_WALL 600.0

// 1 if the list of ranks ns ("2 3 4") holds n; an empty list holds every n.
static inline int graded_at(const char *ns, int n) {
    if (!ns[0]) return 1;
    for (const char *p = ns; *p;) {
        char *end;
        long k = strtol(p, &end, 10);
        if (end == p) break;
        if (k == n) return 1;
        p = end;
    }
    return 0;
}

// 1 if the space-separated list holds word.
static inline int listed(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
    return 0;
}

// ZC_TIME_SCALE, read strictly by common/env (rt_init refuses a bad value, or
// one not the same on every rank, before any check; graded_list before it lists).
static inline double graded_scale(void) { return env_number("ZC_TIME_SCALE", 1.0); }

// The wall-clock seconds a check may take at most (the grader's own limit
// for a program is the sum of its checks').
static inline double graded_budget(void) { return GRADED_WALL * graded_scale(); }

// The graded checks, one line each: id|points|ranks|budget|title.
static inline int graded_list(const Graded *g, int n) {
    const char *why = env_check();
    if (why) {
        fprintf(stderr, "%s\n", why);
        return 2;
    }
    for (int i = 0; i < n; i++)
        if (g[i].points > 0) printf("%s|%d|%s|%.0f|%s\n", g[i].id, g[i].points, g[i].ns, graded_budget(), g[i].title);
    return EXIT_SUCCESS;
}

// Processor seconds this process has used, all its threads.
static inline double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// 1 if every thread of this process but the caller is asleep (its state in
// /proc: S, D, T or I, not R), as a deadlock without spinning leaves them.
static inline int others_asleep(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    long me = (long)syscall(SYS_gettid);
    int asleep = 1;
    struct dirent *e;
    while (asleep && (e = readdir(d))) {
        if (e->d_name[0] == '.' || atol(e->d_name) == me) continue;
        char path[64], line[512];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;  // a thread that ended meanwhile
        size_t n = fread(line, 1, sizeof line - 1, f);
        fclose(f);
        line[n] = '\0';
        const char *state = strrchr(line, ')');  // the name may hold spaces and parentheses
        if (state && state[1] == ' ' && state[2] == 'R') asleep = 0;
    }
    closedir(d);
    return asleep;
}

// The tasks that want a core now, the machine's (the fourth field of
// /proc/loadavg, "running/total"); 0 where unknown.
static inline long tasks_runnable(void) {
    long running = 0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%*f %*f %*f %ld", &running) != 1) running = 0;
        fclose(f);
    }
    return running;
}

// The cores this process may use: those it may run on, fewer where its
// control group's quota allows fewer (cpu.max: "200000 100000" is 2 cores).
static inline double cores_usable(void) {
    cpu_set_t set;
    double cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    if (cores < 1) cores = (double)sysconf(_SC_NPROCESSORS_ONLN);
    FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
    double quota, period;
    if (f) {
        if (fscanf(f, "%lf %lf", &quota, &period) == 2 && quota > 0 && period > 0 && quota / period < cores)
            cores = quota / period;
        fclose(f);
    }
    return cores < 1 ? 1 : cores;
}

// The share of a core a task at work gets now, fairly shared among the tasks
// that want one: 1 on a quiet machine, 0.2 with ten tasks on 2 cores.
static inline double fair_share(double cores, long runnable) {
    double share = cores / (double)runnable;
    return share > 1 || !(share > 0) ? 1 : share;
}

// The machine's load in words: "load average 9.1 on 2 cores".
static inline void load_in_words(char *out, size_t len) {
    double load = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1) load = -1;
        fclose(f);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (load < 0) snprintf(out, len, "load average unknown, %ld cores", cores);
    else snprintf(out, len, "load average %.1f on %ld cores", load, cores);
}

// ----------------------------------------------------------------------------
// the watchdog: a check that stands still, or runs past its budget, is ended,
// each rank saying where it is and why

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    const char *id;       // the check armed, or NULL
    double start;         // now_s() when it was armed
    double start_cpu;     // cpu_s() then
} watchdog = { .lock = PTHREAD_MUTEX_INITIALIZER };

// A rank that stops a check says where it is, and so must every other rank:
// the grader names a deadlock from all their states ("rank 0 waits for a
// message from rank 1, which sends to rank 2"). A deadlock stalls every rank,
// but on a loaded machine one rank reaches its limit of processor time long
// before another (48 s of wall-clock time for 15 s of processor time, seen in
// make test): had it ended the run on its own, the others would never have
// said where they were. So each rank that reports leaves a file named for its
// rank in mpirun's session folder of the job (OMPI_FILE_LOCATION, shared by
// the ranks of a node, removed by mpirun at the end); a watchdog that sees
// one reports at once, and a rank that reported ends the run only when every
// rank of its node has (OMPI_COMM_WORLD_LOCAL_SIZE; or after GRADED_ASLEEP
// seconds, for a rank that cannot say). Ranks on other nodes, which have
// folders of their own, report on their own, as before. Without the folder
// (one process, another launcher): the report, two seconds for the others,
// and the end.
// The folder the reports' files go in, or NULL where there is none to share.
static const char *report_dir(void) {
    const char *dir = getenv("OMPI_FILE_LOCATION");
    return dir && *dir && rt.world > 1 ? dir : NULL;
}

static int reports_filed(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) n += strncmp(e->d_name, "zc-watchdog-", 12) == 0;
    closedir(d);
    return n;
}

static void file_report(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/zc-watchdog-%d", dir, rt.rank);
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
}

static _Noreturn void watchdog_report(const char *why) {
    char state[320];
    comm_describe(state, sizeof state);
    fprintf(stderr, "watchdog: rank %d: %s: %s: %s\n", rt.rank, watchdog.id, why, state);
    fflush(stderr);
    const char *dir = report_dir(), *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (dir) {
        file_report(dir);
        int here = local ? atoi(local) : 0;  // the ranks of this node, whose files land here
        double until = now_s() + GRADED_ASLEEP * graded_scale();
        while (reports_filed(dir) < (here > 0 ? here : rt.world) && now_s() < until) usleep(100000);
    }
    sleep(2);  // the last lines through mpirun's forwarding before the run ends
    _exit(124);
}

// 1 if another rank of this job reported (its file is there).
static int another_reported(void) {
    const char *dir = report_dir();
    return dir && reports_filed(dir) > 0;
}

// ----------------------------------------------------------------------------
// a deadlock, proven: every rank waits for what no other rank can give it
//
// A rank that waits to receive from rank f, having received every message f
// began to send it, waits for f to send again; one inside MPI's collective
// that needs every rank waits for those not in it. Where every rank of the
// job waits so, and one at least for a message, none can ever go on, however
// busy the machine: so this verdict is never graded again with more time. At
// each look at which its state is the one it saw at its last look, each
// rank's watchdog leaves it in the session folder (zc-wait-R: the look's
// number, then its progress, its message counts per rank, and what holds it)
// and reads every rank's; a rank that got anywhere since its last look
// writes and reads nothing. A state counts only when it reads the same
// twice, its rank having looked again in between: at the first read every
// rank was in it, all at once. It looks four times a second and takes two to
// four looks; the limits below took 23 s, beside make test's load, and a
// grade again at twice the time.
#define DEADLOCK_WHY "deadlock, every rank waits for another that waits too"

static struct {
    char mine[4096];                      // this rank's state at its last look
    unsigned long looks;                  // the looks it has left a state at
    unsigned long look[P2P_TRACK];        // each rank's look number at the last read
    char state[P2P_TRACK][4096];          // and its state then ("" before: matches none)
} proof;

// All ranks on this node (their files in one folder), and few enough to count.
static const char *proof_dir(void) {
    const char *dir = report_dir(), *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    return dir && local && atoi(local) == rt.world && rt.world <= P2P_TRACK ? dir : NULL;
}

// This rank's state, as one line: the counts first, then what holds it
// (comm_blocked says why in that order).
static void wait_state(char *line, size_t len) {
    size_t n = (size_t)snprintf(line, len, "%lu %lu", comm_progress(), p2p_messages());
    for (int r = 0; r < rt.world && n < len; r++)
        n += (size_t)snprintf(line + n, len - n, " %lu %lu", p2p_sent_to(r), p2p_received_from(r));
    int from = -1;
    CommBlock b = comm_blocked(&from);
    if (n < len) snprintf(line + n, len - n, " %d %d", (int)b, from);
}

static void wait_state_file(const char *dir, unsigned long look, const char *line) {
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/zc-wait-%d", dir, rt.rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    int ok = fprintf(f, "%lu %s\n", look, line) > 0;
    if (fclose(f) != 0 || !ok || rename(tmp, path) != 0) remove(tmp);  // no file: no proof
}

// Rank r's counts and hold, from its state line; 0 if it does not parse.
typedef struct { unsigned long sent[P2P_TRACK], received[P2P_TRACK]; int block, from; } WaitState;
static int wait_state_parse(const char *line, WaitState *w) {
    char *end = (char *)line;
    for (int skip = 0; skip < 2; skip++) (void)strtoul(end, &end, 10);  // progress, messages: compared only
    for (int r = 0; r < rt.world; r++) {
        w->sent[r] = strtoul(end, &end, 10);
        w->received[r] = strtoul(end, &end, 10);
    }
    w->block = (int)strtol(end, &end, 10);
    w->from = (int)strtol(end, &end, 10);
    return *end == '\n' || *end == '\0';
}

// 1 if every rank is held as above: each waits for a message from a rank that
// has sent it nothing it has not received, or in MPI's collective, and one
// at least for a message.
static int deadlocked(const WaitState *w) {
    int receivers = 0;
    for (int r = 0; r < rt.world; r++) {
        if (w[r].block == COMM_BLOCKED_ALL) continue;
        int f = w[r].from;
        if (w[r].block != COMM_BLOCKED_RECV || f < 0 || f >= rt.world) return 0;
        if (w[f].sent[r] != w[r].received[f]) return 0;  // a message on its way
        receivers++;
    }
    return receivers > 0;
}

// Leaves this rank's state and reads every rank's, where it stands still:
// 1 once a deadlock is proven.
static int deadlock_proven(void) {
    const char *dir = proof_dir();
    if (!dir) return 0;
    char line[4096];
    wait_state(line, sizeof line);
    if (strcmp(line, proof.mine) != 0) {  // it got somewhere: no proof can hold it yet
        snprintf(proof.mine, sizeof proof.mine, "%s", line);
        return 0;
    }
    wait_state_file(dir, ++proof.looks, line);
    static WaitState w[P2P_TRACK];
    int stable = 1;
    for (int r = 0; r < rt.world; r++) {
        char path[4096], theirs[4200] = "";
        snprintf(path, sizeof path, "%s/zc-wait-%d", dir, r);
        FILE *f = fopen(path, "r");
        if (!f || !fgets(theirs, sizeof theirs, f)) stable = 0;
        if (f) fclose(f);
        char *rest;
        unsigned long look = strtoul(theirs, &rest, 10);
        if (*rest == ' ') rest++;
        stable = stable && look > proof.look[r] && strcmp(rest, proof.state[r]) == 0 && wait_state_parse(rest, &w[r]);
        proof.look[r] = look;
        snprintf(proof.state[r], sizeof proof.state[r], "%s", rest);
    }
    return stable && deadlocked(w);
}

// The processor time a second of waiting stands for: the rank's own, or its
// fair share of the machine where it got less than half of that (starved by
// its own yields: see GRADED_STALL; a rank that spins gets about its share,
// and is charged what it used, as before).
typedef struct {
    double at, cpu;      // when the watchdog last looked, and the processor time then
    double still, loop;  // charged since the last progress of any kind, and of a collective or compute
    double still_cpu, loop_cpu;  // of which processor time
    double since;        // when that progress was
    double cores;        // cores_usable() when the check was armed
    long runnable;       // tasks_runnable() at the last look
    double share;        // fair_share() then
} Charge;

static void charge_second(Charge *c, double now, double cpu, int awake) {
    c->runnable = tasks_runnable();
    c->share = fair_share(c->cores, c->runnable);
    double used = cpu - c->cpu, fair = awake ? (now - c->at) * c->share : 0;
    double charged = used < fair / 2 ? fair : used;
    c->still += charged, c->loop += charged, c->still_cpu += used, c->loop_cpu += used;
    c->at = now, c->cpu = cpu;
}

// Progress: a message (the standstill starts again) or a collective or
// compute (the loop too).
static void charge_progress(Charge *c, double now, int collective) {
    c->still = c->still_cpu = 0;
    if (collective) c->loop = c->loop_cpu = 0;
    c->since = now;
}

// ZC_WATCHDOG_LOG=FILE: every look at a check that has stood still for a
// tenth of a limit or more adds a line to FILE, to measure how far right code
// stays from the limits (docs/grading.md). The line names the program by its
// path: the tree's own test program, or the one a grade built in its folder
// (the self-test's slots, the mutation run's), so a log of make test says
// whose look it was.
static char exe_path[512];  // read once, before the watchdog starts: both threads log
static const char *program_path(void) { return exe_path[0] ? exe_path : "program unknown"; }

// One line to ZC_WATCHDOG_LOG, if set, ending with the program's path.
static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...) {
    const char *path = getenv("ZC_WATCHDOG_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fprintf(f, " (%s)\n", program_path());
    fclose(f);
}

// A log that cannot be written is refused at the start, on every rank
// together, not found empty after the run.
static void watchdog_log_writable(void) {
    const char *path = getenv("ZC_WATCHDOG_LOG");
    static char why[700];
    FILE *f = path ? fopen(path, "a") : NULL;
    if (path && !f) snprintf(why, sizeof why, "ZC_WATCHDOG_LOG='%s': cannot write it: %s", file_shown(path), strerror(errno));
    if (f) fclose(f);
    agree_input(path && !f ? why : NULL);
}

static void log_look(const char *id, const Charge *c, double k) {
    if (c->still < 0.1 * GRADED_STALL * k && c->loop < 0.1 * GRADED_LOOP * k) return;
    log_line("%s rank %d of %d: still %.2f s (%.2f of processor time), loop %.2f s, share %.3f", id, rt.rank,
             rt.world, c->still, c->still_cpu, c->loop, c->share);
}

// And a check that ended having used a tenth of GRADED_CPU or more on this
// rank adds one, which measures the margin of that limit the same way.
static void log_spent(const char *id, double used, double secs) {
    if (used < 0.1 * GRADED_CPU * graded_scale()) return;
    log_line("%s rank %d of %d: used %.2f s of processor time in %.2f s", id, rt.rank, rt.world, used, secs);
}

// Waits s seconds, or until a check is armed or disarmed (the lock held).
static void watchdog_nap(double s) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long ns = ts.tv_nsec + (long)(s * 1e9);
    ts.tv_sec += ns / 1000000000L, ts.tv_nsec = ns % 1000000000L;
    pthread_cond_timedwait(&watchdog.cv, &watchdog.lock, &ts);
}

static void *watchdog_thread(void *arg) {
    (void)arg;
    double k = graded_scale(), awake = 0;
    unsigned long seen = 0, heard = 0;
    const char *id = NULL;
    Charge c = { 0 };
    pthread_mutex_lock(&watchdog.lock);
    for (;;) {
        while (!watchdog.id) pthread_cond_wait(&watchdog.cv, &watchdog.lock);
        // A look a second, the limits' accounts kept per second; between looks,
        // every quarter, the deadlock's proof alone (its reads need no pace).
        if (watchdog.id == id && now_s() - c.at < 1.0) {
            if (deadlock_proven()) watchdog_report(DEADLOCK_WHY);
            watchdog_nap(0.25);
            continue;
        }
        double now = now_s(), cpu = cpu_s();
        unsigned long progress = comm_progress(), messages = p2p_messages();
        int running = !others_asleep();
        if (watchdog.id != id) id = watchdog.id, c = (Charge){ now, cpu, 0, 0, 0, 0, now, cores_usable(), 0, 1 };
        charge_second(&c, now, cpu, running);
        if (progress != seen) seen = progress, heard = messages, awake = now, charge_progress(&c, now, 1);
        if (messages != heard) heard = messages, awake = now, charge_progress(&c, now, 0);
        if (running) awake = now;
        log_look(id, &c, k);
        double used = cpu - watchdog.start_cpu;
        char why[200] = "", load[64];  // no colon: grade.sh reads the line as rank: check: why: state
        if (another_reported())
            snprintf(why, sizeof why, "stopped with another rank, which stopped first");
        else if (deadlock_proven())
            snprintf(why, sizeof why, DEADLOCK_WHY);
        else if (c.still_cpu >= GRADED_STALL * k)
            snprintf(why, sizeof why, "no progress in %.0f s of processor time", c.still_cpu);
        else if (c.still >= GRADED_STALL * k)
            snprintf(why, sizeof why, "no progress in %.0f s awake, a fair share of %.0f s of processor time "
                     "(%ld tasks runnable on %.0f cores)", now - c.since, c.still, c.runnable, c.cores);
        else if (c.loop >= GRADED_LOOP * k)
            snprintf(why, sizeof why, "messages pass, but no collective completes and no compute starts, in %.0f s "
                     "of %s, a loop that never ends", c.loop, c.loop_cpu >= GRADED_LOOP * k ? "processor time" :
                     "a fair share of the processor");
        else if (used >= GRADED_CPU * k)
            snprintf(why, sizeof why, "past its %.0f s of processor time, still going", GRADED_CPU * k);
        else if (now - awake >= GRADED_ASLEEP * k)
            snprintf(why, sizeof why, "asleep %.0f s with no progress", now - awake);
        else if (now - watchdog.start >= GRADED_WALL * k) {
            load_in_words(load, sizeof load);
            snprintf(why, sizeof why, "past %.0f s of wall-clock time with %.1f s of processor time used, the machine "
                     "too busy (%s; ZC_TIME_SCALE=4 gives four times as long)", now - watchdog.start, used, load);
        }
        if (!why[0]) {
            watchdog_nap(0.25);
            continue;
        }
        watchdog_report(why);
    }
    return NULL;
}

static inline void watchdog_start(void) {
    ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
    exe_path[n > 0 ? n : 0] = '\0';
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&watchdog.cv, &a);
    pthread_t t;
    if (pthread_create(&t, NULL, watchdog_thread, NULL) != 0) fatal("check: cannot start the watchdog");
    pthread_detach(t);
}

static inline void watchdog_arm(const char *id) {
    pthread_mutex_lock(&watchdog.lock);
    watchdog.id = id;
    watchdog.start = now_s();
    watchdog.start_cpu = cpu_s();
    pthread_cond_signal(&watchdog.cv);
    pthread_mutex_unlock(&watchdog.lock);
}

static inline void watchdog_disarm(void) {
    pthread_mutex_lock(&watchdog.lock);
    watchdog.id = NULL;
    pthread_cond_signal(&watchdog.cv);
    pthread_mutex_unlock(&watchdog.lock);
}

// ----------------------------------------------------------------------------
// running the checks

static const char *volatile check_running;  // the check in progress, for an exit in its middle

// An exit() in the code under test leaves no verdict: say so, as a rank's line.
static void exit_in_check(void) {
    if (check_running)
        fprintf(stderr, "rank %d: the program exited in the middle of check %s: an exit() in the code it runs?\n",
                rt.rank, check_running);
}

// Runs one check on this rank; returns 1 if it passed here, else copies
// Check's message into msg.
static inline int run_check(const Graded *g, char *msg, size_t len) {
    Suite *s = suite_create(g->id);
    TCase *tc = tcase_create(g->id);
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, g->test);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_SILENT);
    int ok = srunner_ntests_failed(sr) == 0;
    msg[0] = '\0';
    if (!ok) {
        TestResult **f = srunner_failures(sr);
        snprintf(msg, len, "%s", f && f[0] ? tr_msg(f[0]) : "failed");
        free(f);
    }
    srunner_free(sr);
    return ok;
}

// Runs the checks graded at this N (ZC_CHECKS: only those named, stopping at the
// first that fails, so that none runs after a failure left state behind). Rank 0
// prints a line per check and Check's summary, and writes each verdict to
// ZC_RESULTS as it comes ("start ID", "ok ID SECS", "fail ID SECS MESSAGE"),
// then "end": a file the grader owns, so a program that dies or prints a
// verdict of its own is never counted as passing. Returns the failures.
static inline int run_graded(const Graded *g, int n) {
    const char *only = getenv("ZC_CHECKS"), *path = getenv("ZC_RESULTS");
    FILE *res = NULL;
    if (rt.rank == 0 && path && !(res = fopen(path, "w"))) fatal("check: cannot write %s", path);
    watchdog_start();
    atexit(exit_in_check);
    int strict = comm_strict(), ran = 0, failed = 0, stopped = 0;
    for (int i = 0; i < n && !stopped; i++) {
        if (only ? !listed(only, g[i].id) : !graded_at(g[i].ns, rt.world)) continue;
        comm_barrier();  // every rank starts the check together, so their watchdogs fire together
        if (res) fprintf(res, "start %s\n", g[i].id), fflush(res);
        char msg[512];
        double t0 = now_s();
        watchdog_arm(g[i].id);
        check_running = g[i].id;
        int ok = run_check(&g[i], msg, sizeof msg);
        check_running = NULL;
        watchdog_disarm();
        double secs = now_s() - t0;
        log_spent(g[i].id, cpu_s() - watchdog.start_cpu, secs);
        comm_use("mpi");  // a check that failed on another backend, or mode, leaves neither behind
        comm_set_strict(strict);
        ok = agree_verdict(ok, msg);
        for (char *c = msg; *c; c++)
            if (*c == '\n') *c = ' ';
        ran++;
        if (rt.rank == 0) {
            if (ok) printf("  ok   %s (%.1fs)\n", g[i].id, secs);
            else printf("FAIL   %s (%.1fs): %s\n", g[i].id, secs, msg);
            fflush(stdout);
        }
        if (res) {
            if (ok) fprintf(res, "ok %s %.1f\n", g[i].id, secs);
            else fprintf(res, "fail %s %.1f %s\n", g[i].id, secs, msg);
            fflush(res);
        }
        if (!ok) failed++, stopped = only != NULL;
    }
    if (rt.rank == 0)
        printf("%d%%: Checks: %d, Failures: %d, Errors: 0\n", ran ? 100 * (ran - failed) / ran : 100, ran, failed);
    if (res) {
        if (!stopped) fprintf(res, "end\n");
        fclose(res);
    }
    return failed;
}

// main() of a graded test program: checks(g) fills the table, setup() runs
// after MPI is up (loading references, say). `prog --list` prints the graded
// checks and exits without MPI. The program runs in grading mode (ZC_GRADING:
// strict collectives, poisoned frees), under make grade and make test alike.
#define GRADED_MAIN(name, checks, setup)                                          \
    int main(int argc, char **argv) {                                             \
        Graded g_[GRADED_MAX];                                                    \
        int n_ = checks(g_);                                                      \
        if (argc == 2 && strcmp(argv[1], "--list") == 0) return graded_list(g_, n_); \
        setenv("ZC_GRADING", "1", 0);                                             \
        rt_init(&argc, &argv, name);                                              \
        watchdog_log_writable();                                                  \
        setup();                                                                  \
        int failed = run_graded(g_, n_);                                          \
        rt_exit(failed ? EXIT_FAILURE : EXIT_SUCCESS);                            \
    }

#endif
