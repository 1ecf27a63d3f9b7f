// dtype: sizes, names and indexing (the conversions are inline in dtype.h).
#include "dtype.h"

size_t dtype_size(DType dt) {
    static const size_t sz[] = { 4, 2, 2, 8, 4 };
    return sz[dt];
}

const char *dtype_name(DType dt) {
    static const char *names[] = { "f32", "bf16", "f16", "f64", "i32" };
    return names[dt];
}

void *dtype_at(const void *buf, DType dt, size_t i) { return (char *)buf + i * dtype_size(dt); }
