// dtype: the element types that buffers and collectives carry, and exact
// conversions between fp32 and the 16-bit types (bf16, fp16): round to nearest,
// ties to even; overflow goes to infinity; fp16 keeps subnormals; NaN stays NaN.
#ifndef DTYPE_H
#define DTYPE_H

#include <stddef.h>
#include <stdint.h>

typedef enum { DT_F32, DT_BF16, DT_F16, DT_F64, DT_I32 } DType;

// Bytes per element.
size_t dtype_size(DType dt);
// "f32", "bf16", "f16", "f64", "i32".
const char *dtype_name(DType dt);
// fp32 -> bf16 bits, round to nearest even.
uint16_t f32_to_bf16(float x);
float bf16_to_f32(uint16_t h);
// fp32 -> IEEE half bits, round to nearest even (subnormals kept, overflow to inf).
uint16_t f32_to_f16(float x);
float f16_to_f32(uint16_t h);

#endif
