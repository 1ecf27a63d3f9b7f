# The API reduce-scatter returns this rank's own slice, never added to.
# file: common/comm_ring.c
# check: lc1.4a
# says: nothing was added
/^void ring_reduce_scatter(const Group/,/^}/ s/^    for (int s = 0; s < N - 1; s++) {/    for (int s = 0; s < 0; s++) {/
