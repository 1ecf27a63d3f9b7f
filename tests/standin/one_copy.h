// Included first in test_lc0's copy of kernels_cpu.c (the Makefile says why):
// common/hd.h's markers with every function compiled once, so the copy holds
// no second set of the clones' resolvers, which the linker would take for the
// library's own and drop one of.
#define HD_H
#define ZC_HD
#define ZC_WIDE
