# Adam's v allocated under the grads category: the memory report lies.
# file: lc2_zero1/zero1.c
# check: lc2.6a
# says: adam_v 0
s/^    o->v = mem_alloc(MEM_ADAM_V, n \* sizeof(float));/    o->v = mem_alloc(MEM_GRADS, n * sizeof(float));/
