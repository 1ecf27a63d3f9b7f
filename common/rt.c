// rt: MPI lifetime, the command line, and input every rank must agree on.
#include "rt.h"
#include "comm.h"
#include "comm_model.h"
#include "comm_p2p.h"
#include "env.h"
#include "file.h"
#include "kernels.h"
#include "manifest.h"
#include "mem.h"
#include "mpi_check.h"
#include "print.h"
#ifdef ZC_CUDA
#include "gpu.h"
#include "kernels_cuda.h"
#endif

#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// ----------------------------------------------------------------------------
// lifetime

// 1 if no launcher started this process (mpirun, a PMI or PMIx launcher, srun
// say who each rank is): before MPI_Init, MPI cannot be asked yet.
static int started_alone(void) {
    const char *vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", NULL };
    for (int i = 0; vars[i]; i++)
        if (getenv(vars[i])) return 0;
    return 1;
}

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

// ----------------------------------------------------------------------------
// memory

static double host_free_at_start;  // bytes this node could give when the run began

// Every rank exits 2 with the numbers if the host memory `mine` of this node's
// ranks together is more than the node had available when the run began. what:
// the refusal's start; advice: its end.
static void check_node_memory(double mine, const char *what, const char *advice) {
    double need = 0, have = 0;
    int ranks = 0;
    MPI_Comm node;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    CHECK_MPI(MPI_Allreduce(&mine, &need, 1, MPI_DOUBLE, MPI_SUM, node));
    CHECK_MPI(MPI_Allreduce(&host_free_at_start, &have, 1, MPI_DOUBLE, MPI_MIN, node));
    CHECK_MPI(MPI_Comm_size(node, &ranks));
    CHECK_MPI(MPI_Comm_free(&node));
    static char why[512];
    const char *err = NULL;
    if (have >= 0 && need > have && rt.local_rank == 0) {
        snprintf(why, sizeof why, "%s %s of host memory on this node (%d rank%s, %s on this one), and the node "
                 "had %s available; %s", what, human_bytes(need), ranks, ranks > 1 ? "s" : "", human_bytes(mine),
                 human_bytes(have), advice);
        err = why;
    }
    agree_input(err);
}

void rt_check_memory(void) {
    MemStats s = mem_stats();
    check_node_memory((double)(s.cur_total - s.gpu_cur), "the model does not fit: set-up holds",
                      "use more ranks or nodes, a later stage, or a smaller model");
    mem_check_blocks(1);  // from here on, one block too large is refused where it is asked for
}

void rt_check_host_bytes(double bytes, const char *what) {
    char head[256];
    snprintf(head, sizeof head, "%s do not fit: they need", what);
    check_node_memory(bytes, head, "ask for less");
}

// fatal's way out: no rank is left waiting in a collective.
static void stop_quietly(void);
static void abort_every_rank(int status) {
    stop_quietly();
    MPI_Abort(MPI_COMM_WORLD, status);
}

// ----------------------------------------------------------------------------
// start-up: every rank joins, and runs the same program

// MPI_Init waits for every rank of the job: one that exited before it (a
// wrapper that stopped, a failed exec) would leave the others there forever.
// An alarm bounds the wait. The launcher's rank 0 says why; the others wait a
// little longer, so mpirun has stopped them before they repeat it.
static char start_msg[256];

static void start_timed_out(int sig) {
    (void)sig;
    if (write(2, start_msg, strlen(start_msg)) < 0) _exit(1);
    _exit(1);
}

static void start_alarm(const char *prog) {
    const char *r = getenv("OMPI_COMM_WORLD_RANK");  // a bad value: 60 s, then refused once MPI runs
    int secs = (int)env_number("ZC_START_TIMEOUT_S", 60), first = !r || strcmp(r, "0") == 0;
    snprintf(start_msg, sizeof start_msg, "%s: not every rank of the job started within %d s (MPI_Init waits "
             "for all of them: one exited or was never started); stopping\n", prog, secs);
    signal(SIGALRM, start_timed_out);
    alarm((unsigned)(first ? secs : secs + 5));
}

static void start_alarm_off(void) {
    alarm(0);
    signal(SIGALRM, SIG_DFL);
}

// A run stopped from outside (SIGTERM or SIGINT, which mpirun passes on to
// every rank) says so once, from rank 0, instead of ending without a word.
static char stop_msg[2][256];

static void stopped(int sig) {
    const char *m = stop_msg[sig == SIGINT];
    file_remove_unfinished();  // no half-written file stays
    if (rt.rank == 0 && write(2, m, strlen(m)) < 0) _exit(128 + sig);
    signal(sig, SIG_DFL);
    raise(sig);
}

// Once this rank is on its way out, a SIGTERM from mpirun stopping the others
// is no news.
static void stop_quietly(void) {
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
}

static void stop_handlers(const char *prog) {
    int sigs[2] = { SIGTERM, SIGINT };
    const char *names[2] = { "SIGTERM", "SIGINT" };
    for (int i = 0; i < 2; i++) {
        snprintf(stop_msg[i], sizeof stop_msg[i], "%s: stopped by %s before the run finished (a checkpoint "
                 "saved before it is kept)\n", prog, names[i]);
        signal(sigs[i], stopped);
    }
}

// Who a rank is for the agreement below: the program's name and its build (a
// checksum of the executable), so two stages, or two builds of one, in one
// job stop at once instead of meeting in collectives that do not match.
typedef struct { char name[48]; uint64_t build; } Program;

static Program this_program(const char *prog) {
    Program p;
    uint64_t size = 0;
    memset(&p, 0, sizeof p);
    snprintf(p.name, sizeof p.name, "%s", prog);
    if (file_digest("/proc/self/exe", "program", &size, &p.build)) p.build = 0;  // no /proc: the name alone
    return p;
}

static void agree_program(const char *prog) {
    Program me = this_program(prog), first = me, other = me;
    CHECK_MPI(MPI_Bcast(&first, sizeof first, MPI_BYTE, 0, MPI_COMM_WORLD));
    int mine = strcmp(me.name, first.name) != 0 || me.build != first.build ? rt.rank : rt.world, r = mine;
    CHECK_MPI(MPI_Allreduce(&mine, &r, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (r == rt.world) return;
    if (rt.rank == r) CHECK_MPI(MPI_Send(&me, sizeof me, MPI_BYTE, 0, 0, MPI_COMM_WORLD));
    if (rt.rank == 0) {
        CHECK_MPI(MPI_Recv(&other, sizeof other, MPI_BYTE, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        fprintf(stderr, "%s: rank %d runs %s%s, rank 0 runs %s: every rank of a job must run the same program\n",
                prog, r, strcmp(other.name, first.name) ? "" : "another build of ", other.name, first.name);
    }
    fflush(stderr);
    stop_quietly();
    MPI_Finalize();
    exit(2);
}

// The ZC_* variables are inputs too: each valid, each the same on every rank
// (a link or a cost model on one rank only would have the ranks choose
// different algorithms), else every rank exits 2 with one line.
static int first_differing(uint64_t x);
static void agree_env(void) {
    agree_input(env_check());
    for (int i = 0; env_variable(i); i++) {
        int r = first_differing(env_value_hash(i));
        if (r < rt.world)
            usage_error("%s is not the same on every rank (rank %d's differs from rank 0's): set it for the whole job",
                        env_variable(i), r);
    }
    agree_input(p2p_set_link(getenv("ZC_LINK")));
    const char *fit = getenv("ZC_COMM_FIT"), *err = NULL;
    static char why[1024];
    CommFit f;
    if (rt.rank == 0 && fit && *fit && (err = comm_fit_read(fit, &f, NULL)) != NULL)  // rank 0's is the one used
        snprintf(why, sizeof why, "ZC_COMM_FIT: %s", err), err = why;
    agree_input(err);
}

// Open MPI's mtl components for Omni-Path and InfiniPath load libpsm2 and
// libpsm_infinipath at every start, and each library times the processor's
// clock as it loads, pinned to core 0: 0.1 s apiece (strace: its two
// sched_setaffinity calls 0.10-0.11 s apart), in every rank, whether or not
// the node has such an adapter. Where it has none (no /dev/hfi1* nor
// /dev/ipath*), the two are excluded, beside what the site's settings exclude
// already (the mtl line of Open MPI's parameter files, the user's before the
// system's). A list the user set (OMPI_MCA_mtl, or other parameter files), a
// site's list of the components to use, or a system file this build cannot
// place, leaves the choice as it was.
#ifndef ZC_OMPI_SYSCONFDIR
#define ZC_OMPI_SYSCONFDIR ""
#endif

static int exists_like(const char *pattern) {
    glob_t g;
    int found = glob(pattern, 0, NULL, &g) == 0;
    if (found) globfree(&g);
    return found;
}

// The value of the last "mtl = ..." line of file `path` into v; 0 if none.
static int mtl_line(const char *path, char *v, size_t len) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[1024];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        char *p = line + strspn(line, " \t");
        if (strncmp(p, "mtl", 3) != 0) continue;
        p += 3 + strspn(p + 3, " \t");
        if (*p != '=') continue;
        p += 1 + strspn(p + 1, " \t");
        p[strcspn(p, "#\r\n")] = '\0';
        for (size_t n = strlen(p); n && (p[n - 1] == ' ' || p[n - 1] == '\t'); n--) p[n - 1] = '\0';
        snprintf(v, len, "%s", p);
        found = 1;
    }
    fclose(f);
    return found;
}

static void skip_absent_psm(void) {
    if (getenv("OMPI_MCA_mtl") || getenv("OMPI_MCA_mca_base_param_files")) return;
    if (exists_like("/dev/hfi1*") || exists_like("/dev/ipath*")) return;
    const char *conf = getenv("OPAL_SYSCONFDIR"), *prefix = getenv("OPAL_PREFIX"), *home = getenv("HOME");
    char sys[1024], user[1024], site[600] = "";
    if (conf) snprintf(sys, sizeof sys, "%s/openmpi-mca-params.conf", conf);
    else if (prefix) snprintf(sys, sizeof sys, "%s/etc/openmpi-mca-params.conf", prefix);
    else if (ZC_OMPI_SYSCONFDIR[0]) snprintf(sys, sizeof sys, "%s/openmpi-mca-params.conf", ZC_OMPI_SYSCONFDIR);
    else return;
    snprintf(user, sizeof user, "%s/.openmpi/mca-params.conf", home ? home : "");
    if (!(home && mtl_line(user, site, sizeof site))) mtl_line(sys, site, sizeof site);
    if (site[0] && site[0] != '^') return;  // the components to use, named: the site's choice
    char v[700];
    snprintf(v, sizeof v, "%s%spsm,psm2", site[0] ? site : "^", site[1] ? "," : "");
    setenv("OMPI_MCA_mtl", v, 0);
}

void rt_init(int *argc, char ***argv, const char *prog) {
    int provided = 0;
    rt.prog = prog;
    // Under mpirun stdout is a pipe, which stdio buffers by the block: a
    // progress line would reach the terminal (or a job's log) steps late, and a
    // rank stopped from outside would lose it. A line at a time, as on a terminal.
    setvbuf(stdout, NULL, _IOLBF, 0);
    start_alarm(prog);
    // Started without mpirun, Open MPI makes the process a singleton and starts
    // a daemon beside it, for what one process never asks here (spawning, or
    // connecting to other jobs): a few tenths of a second at every start.
    // Isolated, it starts alone. Under mpirun the variable is not read; a value
    // the user set wins; other MPIs ignore it.
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    // Only where no launcher started the process (under mpirun or srun the
    // ranks need both): it makes no session folder, since one process needs
    // none, and the folder every job on the machine shares (/tmp/ompi.HOST.UID)
    // is removed by the job that leaves it empty while another may be making
    // its own inside (tools/launch gives its jobs folders of their own); and
    // its map of the machine has no PCI devices: hwloc reads each one's
    // configuration, which in a virtual machine traps to the host (a third of
    // a bare MPI program's start here), and one process reaches no device
    // through it (NCCL maps the GPUs itself; tools/launch does the same for
    // ranks on one machine).
    if (started_alone()) {
        setenv("OMPI_MCA_orte_create_session_dirs", "0", 0);
        setenv("HWLOC_COMPONENTS", "-linux:pci,-pci", 0);
    }
    // A rank waits inside MPI on its comm thread while its compute thread
    // works. Open MPI waits by polling, and yields the core between polls only
    // where it counts more ranks than cores; with a rank a core, the comm
    // thread's polling takes half a core from the compute beside it (the
    // GEMM-bound model at N = 2 on 2 cores: ZeRO-3's step 87-93 -> 77 ms).
    // Yielding always gives a waiting poll's core to the compute. A value the
    // user set wins; other MPIs ignore it.
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    skip_absent_psm();
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "%s: MPI_Init_thread failed\n", prog);
        exit(1);
    }
    start_alarm_off();
    stop_handlers(prog);
    base_set_abort(abort_every_rank);
    // Errors come back as codes so CHECK_MPI can name the call.
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rt.rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &rt.world));
    if (provided < MPI_THREAD_MULTIPLE)
        fatal("MPI_Init_thread: this MPI gives thread level %d, the comm thread needs "
              "MPI_THREAD_MULTIPLE", provided);
    agree_program(prog);
    rt.local_rank = read_local_rank();
    host_free_at_start = mem_host_available();
    mem_init();
    kernels_init();
    comm_init();
    const char *err = p2p_set_nodes(0);  // one node per host until --ranks-per-node says otherwise
    if (err) fatal("%s", err);
    agree_env();
}

void rt_finalize(void) {
    stop_quietly();
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

// --resume-if-any DIR becomes --resume DIR where DIR holds a checkpoint (or
// anything that was one: a broken one is refused by the resume, not skipped),
// and nothing where it holds none, as DeepSpeed's load_checkpoint returns
// nothing there. A job script can then pass it on every run, the first too.
static void resume_if_any(Args *a) {
    if (!a->resume_if_any) return;
    int none = manifest_none(a->resume_if_any), differs = first_differing((uint64_t)none);
    if (differs < rt.world)
        usage_error("--resume-if-any '%s': some ranks find a checkpoint there and some do not (every rank must see "
                    "the same folder)", file_shown(a->resume_if_any));
    if (none) {
        print0("--resume-if-any: no checkpoint in '%s' yet: starting from the start\n", file_shown(a->resume_if_any));
        return;
    }
    if (a->init) print0("--resume-if-any: resuming, so --init '%s' is not used\n", file_shown(a->init));
    a->resume = a->resume_if_any;
    a->init = NULL;
}

// Every rank exits 2 unless every rank's options have rank 0's fingerprint.
static void agree_options(uint64_t fingerprint) {
    int differs = first_differing(fingerprint);
    if (differs < rt.world)
        usage_error("the ranks were started with different options (rank %d's differ from rank 0's): every rank "
                    "must get the same command line", differs);
}

void rt_barrier(void) { CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); }

void rt_agree_argv(int argc, char **argv) {
    static FileHash h;  // 576 bytes, aligned: not on the stack
    file_hash_begin(&h);
    for (int i = 1; i < argc; i++) file_hash_add(&h, argv[i], strlen(argv[i]) + 1);  // the NUL separates
    agree_options(file_hash_value(&h));
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
    agree_options(args_fingerprint(a));
    resume_if_any(a);
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

// Rank 0's reason, if any, why the run's files cannot be used: an output that
// is an input or another output, or one that cannot be written.
static const char *check_files(const Args *a) {
    static char reason[1024];
    const char *files[][2] = { { a->data, "--data" }, { a->init, "--init" }, { a->save_model, "--save-model" },
                               { a->loss_log, "--loss-log" }, { a->trace, "--trace" } };
    const char *what[] = { "", "", "model file", "loss log", "trace" };
    enum { FIRST_OUTPUT = 2, NFILES = 5 };
    for (int k = FIRST_OUTPUT; k < NFILES; k++) {
        if (!files[k][0]) continue;
        for (int i = 0; i < k; i++)
            if (files[i][0] && file_same(files[i][0], files[k][0])) {
                snprintf(reason, sizeof reason, "%s and %s name the same file '%s': a run never writes over a "
                         "file it reads or writes", files[i][1], files[k][1], file_shown(files[k][0]));
                return reason;
            }
        const char *err = file_check_output(files[k][0], what[k]);
        if (err) return err;
        // A save or a prune there could remove it, or it overwrite a checkpoint.
        const char *folders[][2] = { { a->save_dir, "--save-dir" }, { a->resume, "--resume" } };
        for (int i = 0; i < 2; i++)
            if (folders[i][0] && file_inside(files[k][0], folders[i][0])) {
                snprintf(reason, sizeof reason, "%s '%s' is %s '%s' or inside it: a run never writes into a checkpoint "
                         "folder", files[k][1], file_shown(files[k][0]), folders[i][1], file_shown(folders[i][0]));
                return reason;
            }
    }
    return a->save_dir ? file_check_dir(a->save_dir, "checkpoint folder") : NULL;
}

// The node layout asked for last (0: by host, as rt_init leaves it).
static int ranks_per_node;

void rt_nodes(int k) {
    if (k == ranks_per_node) return;
    comm_barrier();  // nothing in flight while the layout changes
    agree_input(p2p_set_nodes(k));
    ranks_per_node = k;
}

void rt_setup(const Args *a) {
    rt_nodes(a->ranks_per_node);
    if (strcmp(a->comm, "hier") == 0 && !p2p_per_node())
        usage_error("--comm hier: the %d nodes hold different numbers of ranks; give every node as many, or "
                    "emulate nodes with --ranks-per-node", p2p_nodes());
    if (!comm_use(a->comm)) usage_error("--comm %s: not in this build (%s)", a->comm, comm_backends());
    agree_input(rt.rank == 0 ? check_files(a) : NULL);
}

// ----------------------------------------------------------------------------
// stopping every rank together

// A rank that exits non-zero while another is still in MPI_Finalize makes
// mpirun stop the others its slow way (SIGCONT, a second, SIGTERM, a second,
// SIGKILL, its event loop asleep meanwhile, so the others cannot finish): bad
// input at N > 1 took 1.3-2.3 s instead of 0.3. tools/launch sets
// ZC_STATUS_LINE and reads the status from rank 0's line instead; under plain
// mpirun or srun every rank exits with the status itself.
void rt_exit(int status) {
    fflush(stdout);
    if (status != 0 && getenv("ZC_STATUS_LINE")) {
        if (rt.rank == 0) fprintf(stderr, "launch-status %d\n", status);
        status = 0;
    }
    fflush(stderr);
    rt_finalize();
    exit(status);
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
    rt_exit(2);
}

void agree_exit(const char *err, int status) {
    int mine = err ? rt.rank : rt.world, first = mine;
    comm_agree_min(&first);
    if (first == rt.world) return;
    if (first == rt.rank) fprintf(stderr, "%s: %s\n", rt.prog, err);
    rt_exit(status);
}

void agree_input(const char *err) { agree_exit(err, 2); }
