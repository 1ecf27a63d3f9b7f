// hd: ZC_HD marks the inline functions that kernels_cuda.cu also compiles for
// the GPU (the fp32<->16-bit conversions, the counter-based random numbers), so
// both devices compute the same bits from the same source.
#ifndef HD_H
#define HD_H

#ifdef __CUDACC__
#define ZC_HD __host__ __device__
#else
#define ZC_HD
#endif

#endif
