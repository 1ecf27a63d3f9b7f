// comm_misuse: an input written while its collective is in flight, in grading
// mode, where a collective runs only once it is waited for: the run must stop,
// naming the collective. The write goes to the input's last element (for a
// reduce-scatter, in the last rank's slice), so a check that hashed only part
// of the input would miss it. tests/test_hostile.sh runs each.
// usage: comm_misuse all_reduce|reduce_scatter|all_gather
#include "../common/comm.h"
#include "../common/mem.h"
#include "../common/rt.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    setenv("ZC_GRADING", "1", 1);
    rt_init(&argc, &argv, "comm_misuse");
    const char *what = argc == 2 ? argv[1] : "";
    size_t per = 1000, n = per * (size_t)rt.world;
    float *in = mem_alloc(MEM_COMM_BUFFERS, n * sizeof(float)), *out = mem_alloc(MEM_COMM_BUFFERS, n * sizeof(float));
    for (size_t i = 0; i < n; i++) in[i] = 1.0f;
    CommReq r;
    size_t last;
    if (strcmp(what, "all_reduce") == 0) r = comm_all_reduce_async(in, n, DT_F32, OP_SUM), last = n - 1;
    else if (strcmp(what, "reduce_scatter") == 0) r = comm_reduce_scatter_async(in, out, per, DT_F32), last = n - 1;
    else if (strcmp(what, "all_gather") == 0) r = comm_all_gather_async(in, out, per, DT_F32), last = per - 1;
    else usage_error("usage: comm_misuse all_reduce|reduce_scatter|all_gather");
    in[last] = 2.0f;  // in flight: the buffer is the comm thread's
    comm_wait(r);
    mem_free(out);
    mem_free(in);
    rt_finalize();
    return 0;
}
