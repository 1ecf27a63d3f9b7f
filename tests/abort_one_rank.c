// abort_one_rank: rank 1 (or 0 alone) hits a runtime failure while the others
// wait in a collective. tests/test_cli.sh checks that every rank goes down, fast,
// with the failing rank's one-line reason.
#include "../common/comm.h"
#include "../common/rt.h"

int main(int argc, char **argv) {
    rt_init(&argc, &argv, "abort_one_rank");
    if (rt.rank == (rt.world > 1 ? 1 : 0)) fatal("injected failure: the others are in a barrier");
    comm_barrier();
    rt_finalize();
    return 0;
}
