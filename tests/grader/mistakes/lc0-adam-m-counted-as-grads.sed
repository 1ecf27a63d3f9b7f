# Adam's m allocated under the grads category: the memory report lies.
# file: lc0_adam/adam.c
# check: lc0.4a
# says: adam_m 0
s/^    o->m = mem_alloc(MEM_ADAM_M, n \* sizeof(float));/    o->m = mem_alloc(MEM_GRADS, n * sizeof(float));/
