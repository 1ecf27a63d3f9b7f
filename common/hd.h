// hd: what a function is compiled for. ZC_HD marks the inline functions that
// kernels_cuda.cu also compiles for the GPU (the fp32<->16-bit conversions, the
// counter-based random numbers), so both devices compute the same bits from
// the same source. ZC_WIDE marks the CPU's vectorized loops: compiled twice,
// for x86-64's baseline (SSE2: 4 floats a vector) and for AVX2 (8), the loader
// picking the copy the processor runs (GCC's target_clones). The same IEEE
// operations in the same order, without FMA (not in "avx2"), so the same bits.
#ifndef HD_H
#define HD_H

#ifdef __CUDACC__
#define ZC_HD __host__ __device__
#else
#define ZC_HD
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define ZC_WIDE __attribute__((target_clones("avx2", "default")))
#else
#define ZC_WIDE
#endif

#endif
