// rt: MPI lifetime, error handling, rank-0 printing and timers.
#include "rt.h"
#include "comm.h"
#include "kernels.h"
#include "mem.h"
#ifdef ZC_CUDA
#include "gpu.h"
#include "kernels_cuda.h"
#endif

#include <mpi.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

Runtime rt = { 0, 1, 0, DEV_CPU, "zero-course" };

// ----------------------------------------------------------------------------
// lifetime

static int read_local_rank(void) {
    // Launchers say which slot on the node a process is; fall back to a split.
    const char *vars[] = { "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                           "SLURM_LOCALID", NULL };
    for (int i = 0; vars[i]; i++) {
        const char *s = getenv(vars[i]);
        if (s) return atoi(s);
    }
    MPI_Comm node;
    int r = 0;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                                  MPI_INFO_NULL, &node));
    CHECK_MPI(MPI_Comm_rank(node, &r));
    CHECK_MPI(MPI_Comm_free(&node));
    return r;
}

void rt_init(int *argc, char ***argv, const char *prog) {
    int provided = 0;
    rt.prog = prog;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "%s: MPI_Init_thread failed\n", prog);
        exit(1);
    }
    // Errors come back as codes so CHECK_MPI can name the call.
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rt.rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &rt.world));
    if (provided < MPI_THREAD_MULTIPLE)
        fatal("MPI_Init_thread: this MPI gives thread level %d, the comm thread needs "
              "MPI_THREAD_MULTIPLE", provided);
    rt.local_rank = read_local_rank();
    mem_init();
    kernels_init();
    comm_init();
}

void rt_use_device(const char *name) {
    if (strcmp(name, "cuda") != 0) return;
#ifdef ZC_CUDA
    const char *why = gpu_open(rt.local_rank);
    agree_input(why == NULL, why);  // a GPU missing on one node stops every rank
    rt.device = DEV_CUDA;
    cuda_kernels_init();
#else
    usage_error("--device cuda: this build has no CUDA support (use --device cpu)");
#endif
}

void rt_finalize(void) {
    comm_finalize();
#ifdef ZC_CUDA
    if (rt.device == DEV_CUDA) {
        cuda_kernels_close();
        gpu_close();
    }
#endif
    fflush(stdout);
    MPI_Finalize();
}

// ----------------------------------------------------------------------------
// errors

void fatal(const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "rank %d: %s\n", rt.rank, msg);
    fflush(stderr);
    int up = 0;
    MPI_Initialized(&up);
    if (up) MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void __attribute__((noreturn)) exit_bad_input(void) {
    fflush(stdout);
    fflush(stderr);
    rt_finalize();
    exit(2);
}

void usage_error(const char *fmt, ...) {
    if (rt.rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "%s: ", rt.prog);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    exit_bad_input();
}

void agree_input(int ok, const char *msg) {
    int mine = ok ? rt.world : rt.rank, first = mine;
    comm_agree_min(&first);
    if (first == rt.world) return;
    if (first == rt.rank) fprintf(stderr, "%s: %s\n", rt.prog, msg);
    exit_bad_input();
}

// ----------------------------------------------------------------------------
// printing and time

void print0(const char *fmt, ...) {
    if (rt.rank != 0) return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define STEPTIMES 65536
static float steptimes[STEPTIMES];  // static: bookkeeping, not a model buffer
static long nsteptimes;

void steptime_record(double ms) { steptimes[nsteptimes++ % STEPTIMES] = (float)ms; }
void steptime_reset(void) { nsteptimes = 0; }

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

double steptime_median(void) {
    long n = nsteptimes < STEPTIMES ? nsteptimes : STEPTIMES;
    if (n == 0) return 0.0;
    static float sorted[STEPTIMES];
    memcpy(sorted, steptimes, (size_t)n * sizeof(float));
    qsort(sorted, (size_t)n, sizeof(float), cmp_float);
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}
