# lc2-staging-copy-reads-past-its-layer at N = 4, where the last layer (1026
# elements) is padded to 1028: rank 3's staging copy of a whole shard reads
# two floats past the end of the params. The fence after the buffer faults at
# the first, and the fault names the buffer and the function.
# file: lc2_zero1/zero1.c
# ranks: 4
# check: lc2.3a
# says: rank 3: mem: a read past the end of a buffer of params (21864 bytes, 5466 floats): byte 1 after its last one (a loop one element too far, or a length too long?), in all_gather_params
/^void all_gather_params/,/^}/{
s/^        if (seg == t->padded) copy(mine, own_slice(m, m->params, l), own_numel(L));$/        if (seg == t->padded) copy(mine, own_slice(m, m->params, l), L->shard);/
}
