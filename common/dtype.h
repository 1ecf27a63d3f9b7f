// dtype: the element types that buffers and collectives carry, and exact
// conversions between fp32 and the 16-bit types (bf16, fp16): round to nearest,
// ties to even; overflow goes to infinity; fp16 keeps subnormals; NaN stays NaN.
#ifndef DTYPE_H
#define DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hd.h"

typedef enum { DT_F32, DT_BF16, DT_F16, DT_F64, DT_I32 } DType;

// Bytes per element.
size_t dtype_size(DType dt);
// Element i of a buffer of type dt.
void *dtype_at(const void *buf, DType dt, size_t i);
// "f32", "bf16", "f16", "f64", "i32".
const char *dtype_name(DType dt);
// The conversions are inline (the kernels call them once per element) and
// compiled for the GPU too (hd.h).
// fp32 -> bf16 bits, round to nearest even; bf16_to_f32 widens exactly.
// fp32 -> IEEE half bits, round to nearest even (subnormals kept, overflow to
// inf); f16_to_f32 widens exactly.

static inline ZC_HD uint32_t bits_of(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline ZC_HD float float_of(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

// ----------------------------------------------------------------------------
// bf16: the top 16 bits of an fp32

static inline ZC_HD uint16_t f32_to_bf16(float x) {
    uint32_t u = bits_of(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);  // NaN, kept quiet
    // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even;
    // a carry into the exponent is the right answer (up to infinity).
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline ZC_HD float bf16_to_f32(uint16_t h) { return float_of((uint32_t)h << 16); }

// ----------------------------------------------------------------------------
// fp16: 1 sign, 5 exponent (bias 15), 10 mantissa bits

static inline ZC_HD uint16_t f32_to_f16(float x) {
    uint32_t u = bits_of(x), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // >= 65520 rounds to infinity
    if (a < 0x38800000u) {
        // Below 2^-14: a subnormal half, m x 2^-24. Shift the 24-bit significand
        // right so its unit is 2^-24, rounding to nearest even on what falls off.
        if (a < 0x33000000u) return (uint16_t)sign;  // below 2^-25: zero (2^-25 itself ties to 0)
        uint32_t e = a >> 23, sig = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e;  // 14..24
        uint32_t q = sig >> shift, rest = sig & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rest > half || (rest == half && (q & 1u))) q++;
        return (uint16_t)(sign | q);
    }
    // A normal half: rebias the exponent (127 - 15) and round 13 bits away.
    uint32_t r = a - 0x38000000u;
    r += 0xfffu + ((r >> 13) & 1u);
    return (uint16_t)(sign | (r >> 13));
}

static inline ZC_HD float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return float_of(sign | 0x7f800000u | (m << 13));  // inf, NaN
    if (e == 0) {
        float v = (float)m * 5.9604644775390625e-8f;  // m x 2^-24, exact
        return sign ? -v : v;
    }
    return float_of(sign | ((e + 112u) << 23) | (m << 13));
}

#endif
