# Slices that assume numel divisible by N: the padding counted as real.
# file: lc2_zero1/zero1.c
# check: lc2.1a
# says: a whole shard, the padding at the end counted as this rank
s/^    return first >= L->numel ? 0 : (L->numel - first < L->shard ? L->numel - first : L->shard);/    return first >= L->numel ? 0 : L->shard;/
