# The reduce-scattered slice copied back from the start of the padded buffer
# (seg) instead of this rank's slot in it (seg + rank x shard): the rest of an
# in-place reduce-scatter's buffer is undefined. The library's reduce-scatter
# happens to leave the result at the start too; grading mode poisons it.
# file: lc2_zero1/zero1.c
# check: lc2.2a
# says: it came from the wrong place
s/^        if (seg == t->padded) copy(own_slice(m, m->grads, l), mine, own_numel(L));$/        if (seg == t->padded) copy(own_slice(m, m->grads, l), seg, own_numel(L));/
