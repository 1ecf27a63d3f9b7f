# The all-gather's staging copy takes a whole shard from the rank's slice, not
# its real elements: on the ranks whose slice holds padding it reads past its
# layer (into the next one's params, which land in the padding and are thrown
# away: every number comes out right), and on the last layer past the end of
# the params (at N = 4: lc2-staging-copy-reads-past-the-params). lc2.3a looks
# in the staging buffer's padding for what the last rank held past its slice.
# file: lc2_zero1/zero1.c
# check: lc2.3a
# says: read by a staging copy of a whole shard
/^void all_gather_params/,/^}/{
s/^        if (seg == t->padded) copy(mine, own_slice(m, m->params, l), own_numel(L));$/        if (seg == t->padded) copy(mine, own_slice(m, m->params, l), L->shard);/
}
