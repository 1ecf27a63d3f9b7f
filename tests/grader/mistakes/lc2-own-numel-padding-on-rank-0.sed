# The padding taken from the first slice instead of the last: every count but
# rank 0's is a whole shard, rank 0's is short by the padding. The counts add
# up to the layer's elements, so a check of their sum alone passed it, and a
# later check blamed the collectives; lc2.1a holds each rank's count to the
# ownership rule and names the rank.
# file: lc2_zero1/zero1.c
# check: lc2.1a
# says: rank 0's own_numel is
/^size_t own_numel/,/^}/{
s/^    return first >= L->numel ? 0 : (L->numel - first < L->shard ? L->numel - first : L->shard);$/    return rt.rank == 0 ? L->shard - (L->pad - L->numel) : L->shard;/
}
