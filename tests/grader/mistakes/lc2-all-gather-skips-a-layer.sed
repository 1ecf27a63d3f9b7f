# A layer skipped in the all-gather: its other slices stay stale.
# file: lc2_zero1/zero1.c
# check: lc2.3a
# says: it never arrived
/^void all_gather_params/,/^}/ s/^    for (int l = 0; l < m->nlayers; l++) {/    for (int l = 1; l < m->nlayers; l++) {/
