// test_comm_device: every collective through buffers on the run's device
// (COMM_TEST_DEVICE=cuda: GPU memory, and NCCL among the backends), checked
// element by element from host copies against a double-precision reference:
// fp32, bf16 and fp16; all-reduce, reduce-scatter and all-gather in place and
// out of place, broadcast, reduce (in place on the root too), scatter,
// barrier; counts of 1, 7, 1001 and 65537 per rank. The inputs are halves in
// [-7.5, 7.5], so every partial sum over up to 8 ranks is exact in each type
// and results compare bit for bit whatever the order. It runs in grading mode
// (strict collectives: poison until the wait, inputs hashed, on the GPU
// through host copies). On the CPU it runs in make test (mpi, ring, naive),
// which keeps its own checking honest; on a GPU tests/test_gpu.sh runs it.
// usage: COMM_TEST_DEVICE=cpu|cuda tools/launch N build/test/test_comm_device
#include "check_mpi.h"

#include <string.h>

#include "../common/dtype.h"
#include "../common/mem.h"

static const char *backend = "mpi";
static const DType types[] = { DT_F32, DT_BF16, DT_F16 };
static const size_t counts[] = { 1, 7, 1001, 65537 };
#define NTYPES (sizeof types / sizeof types[0])
#define NCOUNTS (sizeof counts / sizeof counts[0])

// Rank r's input element i.
static float input(int r, size_t i) { return (float)((int)((i * 7 + (size_t)r * 13) % 31) - 15) * 0.5f; }
static float sum_over_ranks(size_t i) {
    double s = 0;
    for (int r = 0; r < rt.world; r++) s += input(r, i);
    return (float)s;
}

// ----------------------------------------------------------------------------
// buffers on the device, read and written through the host

static void store(void *h, DType dt, size_t i, float v) {
    if (dt == DT_F32) ((float *)h)[i] = v;
    else ((uint16_t *)h)[i] = dt == DT_BF16 ? f32_to_bf16(v) : f32_to_f16(v);
}
static float load(const void *h, DType dt, size_t i) {
    if (dt == DT_F32) return ((const float *)h)[i];
    uint16_t b = ((const uint16_t *)h)[i];
    return dt == DT_BF16 ? bf16_to_f32(b) : f16_to_f32(b);
}

// A device buffer of n elements of dt, each `constant`, or with constant INPUT
// this rank's inputs from element `first` on.
#define INPUT 1000.0f
static void *device(DType dt, size_t n, size_t first, float constant) {
    size_t esz = dtype_size(dt);
    void *h = mem_alloc_host(MEM_COMM_BUFFERS, n * esz), *d = mem_alloc(MEM_COMM_BUFFERS, n * esz);
    for (size_t i = 0; i < n; i++) store(h, dt, i, constant == INPUT ? input(rt.rank, first + i) : constant);
    mem_copy(d, h, n * esz);
    mem_free(h);
    return d;
}
// n elements of d back on the host, widened to float.
static float *host(const void *d, DType dt, size_t n) {
    size_t esz = dtype_size(dt);
    void *h = mem_alloc_host(MEM_COMM_BUFFERS, n * esz);
    float *f = mem_alloc_host(MEM_COMM_BUFFERS, n * sizeof(float));
    mem_copy(h, d, n * esz);
    for (size_t i = 0; i < n; i++) f[i] = load(h, dt, i);
    mem_free(h);
    return f;
}

// The first element of d[0..n) that is not want(i), or n.
static size_t first_wrong(const void *d, DType dt, size_t n, float (*want)(size_t, size_t), size_t arg) {
    float *f = host(d, dt, n);
    size_t i = 0;
    while (i < n && f[i] == want(i, arg)) i++;
    mem_free(f);
    return i;
}
static float want_sum(size_t i, size_t first) { return sum_over_ranks(first + i); }
static float want_gathered(size_t i, size_t per) { return input((int)(i / per), i % per); }
static float want_root(size_t i, size_t root) { return input((int)root, i); }
static float want_scattered(size_t i, size_t per) { return input(rt.world - 1, (size_t)rt.rank * per + i); }

#define WRONG(what, at, n) CK_ALL((at) == (n), "%s: %s %s of %zu per rank: element %zu wrong", backend, \
                                   dtype_name(dt), what, (size_t)(n), (size_t)(at))

// ----------------------------------------------------------------------------
// the collectives

static void check_all(DType dt, size_t per) {
    size_t esz = dtype_size(dt), N = (size_t)rt.world, n = per * N, r = (size_t)rt.rank, root = N - 1;
    // all-reduce, in place
    void *x = device(dt, per, 0, INPUT);
    comm_all_reduce(x, per, dt, OP_SUM);
    WRONG("all_reduce", first_wrong(x, dt, per, want_sum, 0), per);
    mem_free(x);
    // reduce-scatter, out of place and in place (the slice in its own slot)
    x = device(dt, n, 0, INPUT);
    void *y = device(dt, per, 0, 0.0f);
    comm_reduce_scatter(x, y, per, dt);
    WRONG("reduce_scatter", first_wrong(y, dt, per, want_sum, r * per), per);
    mem_free(x);
    x = device(dt, n, 0, INPUT);
    char *own = (char *)x + r * per * esz;
    comm_reduce_scatter(x, own, per, dt);
    WRONG("in-place reduce_scatter", first_wrong(own, dt, per, want_sum, r * per), per);
    mem_free(x);
    mem_free(y);
    // all-gather, out of place and in place (this rank's part at its offset)
    x = device(dt, per, 0, INPUT);
    y = device(dt, n, 0, -3.0f);
    comm_all_gather(x, y, per, dt);
    WRONG("all_gather", first_wrong(y, dt, n, want_gathered, per), n);
    mem_free(y);
    y = device(dt, n, 0, -3.0f);
    mem_copy((char *)y + r * per * esz, x, per * esz);
    comm_all_gather((char *)y + r * per * esz, y, per, dt);
    WRONG("in-place all_gather", first_wrong(y, dt, n, want_gathered, per), n);
    mem_free(x);
    mem_free(y);
    // broadcast from the last rank
    x = device(dt, per, 0, INPUT);
    comm_broadcast(x, per, dt, (int)root);
    WRONG("broadcast", first_wrong(x, dt, per, want_root, root), per);
    mem_free(x);
    // reduce to the last rank, out of place and in place
    x = device(dt, per, 0, INPUT);
    y = device(dt, per, 0, 0.0f);
    // (Every rank takes part in each verdict; only the root's result is defined.)
    comm_reduce(x, y, per, dt, OP_SUM, (int)root);
    WRONG("reduce", r == root ? first_wrong(y, dt, per, want_sum, 0) : per, per);
    comm_reduce(x, x, per, dt, OP_SUM, (int)root);
    WRONG("in-place reduce", r == root ? first_wrong(x, dt, per, want_sum, 0) : per, per);
    mem_free(x);
    mem_free(y);
}

static void check_scatter(DType dt, size_t per) {
    void *x = device(dt, per * (size_t)rt.world, 0, INPUT), *y = device(dt, per, 0, 0.0f);
    comm_scatter(x, y, per, dt, rt.world - 1);
    WRONG("scatter", first_wrong(y, dt, per, want_scattered, per), per);
    mem_free(x);
    mem_free(y);
    comm_barrier();
}

static void check_every(void) {
    for (size_t t = 0; t < NTYPES; t++) {
        for (size_t c = 0; c < NCOUNTS; c++) {
            check_all(types[t], counts[c]);
            check_scatter(types[t], counts[c]);
        }
    }
}

// Each backend this build and device have: nccl on a GPU; the host ones stage
// GPU buffers through host memory.
START_TEST(test_every_backend) {
    const char *names[] = { "nccl", "mpi", "ring", "naive", "rd", "hier" };
    int ran = 0;
    for (size_t b = 0; b < sizeof names / sizeof names[0]; b++) {
        if (strcmp(names[b], "nccl") == 0 && rt.device != DEV_CUDA) continue;
        if (strcmp(names[b], "hier") == 0 && !comm_ranks_per_node()) continue;
        CK_ALL(comm_use(names[b]), "no backend %s", names[b]);
        backend = names[b];
        check_every();
        ran++;
    }
    comm_use("mpi");
    backend = "mpi";
    CK_ALL(ran >= 3, "only %d backends ran", ran);
}
END_TEST

// Every buffer the checks took is given back: what is live beyond the
// runtime's own (on a GPU, the kernels' flag) once the backends' caches are
// released is a leak.
static size_t runtime_buffers;
START_TEST(test_no_leaks) {
    comm_release_buffers();
    CK_ALL(mem_live_count() == runtime_buffers, "%zu buffers still allocated, beyond the runtime's %zu",
           mem_live_count() - runtime_buffers, runtime_buffers);
}
END_TEST

static int checks(Graded *g) {
    int n = 0;
    g[n++] = (Graded){ "every-backend", 0, "", "every collective, type and size, element by element", test_every_backend };
    g[n++] = (Graded){ "no-leaks", 0, "", "no-leaks", test_no_leaks };
    return n;
}

// The device: COMM_TEST_DEVICE (cpu by default), agreed like --device.
static void setup(void) {
    const char *d = getenv("COMM_TEST_DEVICE");
    rt_use_device(d && *d ? d : "cpu");
    runtime_buffers = mem_live_count();
    if (rt.rank == 0) printf("test_comm_device: on %s\n", rt.device == DEV_CUDA ? "the GPU" : "the CPU");
}

GRADED_MAIN("test_comm_device", checks, setup)
