// rt: MPI lifetime, the command line, and input every rank must agree on.
#include "rt.h"
#include "comm.h"
#include "kernels.h"
#include "mem.h"
#ifdef ZC_CUDA
#include "gpu.h"
#include "kernels_cuda.h"
#endif

#include <errno.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

// fatal's way out: no rank is left waiting in a collective.
static void abort_every_rank(void) { MPI_Abort(MPI_COMM_WORLD, 1); }

void rt_init(int *argc, char ***argv, const char *prog) {
    int provided = 0;
    rt.prog = prog;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "%s: MPI_Init_thread failed\n", prog);
        exit(1);
    }
    base_set_abort(abort_every_rank);
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

void rt_finalize(void) {
    comm_finalize();
#ifdef ZC_CUDA
    if (rt.device == DEV_CUDA) {
        cuda_kernels_close();
        gpu_close();
    }
#endif
    fflush(stdout);
    base_set_abort(NULL);
    MPI_Finalize();
}

// ----------------------------------------------------------------------------
// the command line and the run's files

// The lowest rank whose x differs from rank 0's, or rt.world if none does.
static int first_differing(uint64_t x) {
    uint64_t x0 = x;
    comm_broadcast(&x0, 1, DT_F64, 0);  // 8 bytes, moved as they are
    int first = x == x0 ? rt.world : rt.rank;
    comm_agree_min(&first);
    return first;
}

void rt_args(Args *a, int argc, char **argv, const char *accepted) {
    char err[512];
    int r = args_parse(a, argc, argv, accepted, rt.world, err, sizeof err);
    // Every rank must run with the same options: an MPMD launch, a wrapper
    // script or an environment per rank can give them different command lines,
    // and a rank that stopped alone would leave the others in a collective.
    agree_input(r == ARGS_ERROR ? err : NULL);
    int differs = first_differing((uint64_t)r);
    if (differs < rt.world)
        usage_error("--help was given to some ranks only (rank %d's command line %s it)", differs,
                    r == ARGS_HELP ? "lacks" : "has");
    if (r == ARGS_HELP) {
        if (rt.rank == 0) args_help(rt.prog, accepted);
        rt_finalize();
        exit(0);
    }
    differs = first_differing(args_fingerprint(a));
    if (differs < rt.world)
        usage_error("the ranks were started with different options (rank %d's differ from rank 0's): every rank "
                    "must get the same command line", differs);
    rt_use_device(a->device);
}

void rt_use_device(const char *name) {
    if (strcmp(name, "cuda") != 0) return;
#ifdef ZC_CUDA
    agree_input(gpu_open(rt.local_rank));  // a GPU missing on one node stops every rank
    rt.device = DEV_CUDA;
    cuda_kernels_init();
#else
    usage_error("--device cuda: this build has no CUDA support (use --device cpu)");
#endif
}

// NULL if rank 0 can create or append to path (checked before training, not after).
static const char *can_write(const char *path, const char *what) {
    static char reason[512];
    FILE *f = fopen(path, "ab");
    if (!f) {
        snprintf(reason, sizeof reason, "cannot write %s '%s': %s", what, path, strerror(errno));
        return reason;
    }
    fclose(f);
    return NULL;
}

void rt_setup(const Args *a) {
    if (!comm_use(a->comm)) usage_error("--comm %s: not in this build (%s)", a->comm, comm_backends());
    const char *outputs[][2] = { { a->save_model, "model file" }, { a->loss_log, "loss log" },
                                 { a->trace, "trace" } };
    for (int k = 0; k < 3; k++) {
        const char *err = NULL;
        if (outputs[k][0] && rt.rank == 0) err = can_write(outputs[k][0], outputs[k][1]);
        agree_input(err);
    }
}

// ----------------------------------------------------------------------------
// bad input

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

void agree_input(const char *err) {
    int mine = err ? rt.rank : rt.world, first = mine;
    comm_agree_min(&first);
    if (first == rt.world) return;
    if (first == rt.rank) fprintf(stderr, "%s: %s\n", rt.prog, err);
    exit_bad_input();
}
