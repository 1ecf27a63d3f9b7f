# The learner's Adam asks for scratch of the whole model's size with the wrong
# unit (bytes << 40): a block no node has. The system would grant it
# (overcommit) and the OOM killer end the run without a word of memory once
# grading's poison writes it; mem refuses it where it is asked for, with the
# numbers, and the check says so.
# file: lc2_zero1/zero1.c
# check: lc2.5a
# says: cannot allocate 1024.00 GiB of adam_m in host memory: this node has
/^void adam_step(Adam \*o, Model \*m) {$/,/^}/{
s/^    o->step++;$/    mem_free(mem_alloc(MEM_ADAM_M, (size_t)1 << 40));\n&/
}
