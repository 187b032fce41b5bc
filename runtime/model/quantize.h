// Encoding f32 rows into ggml tensor types (the inverse of dequantize_row).
//
// The K-quant encoders search, per sub-block, for the scale (and min) that
// minimise the squared error of the quantized values, then quantize those
// scales to the 6-bit (Q4_K/Q5_K) or 8-bit (Q6_K) super-block format and
// re-encode the values against the scales that will actually be decoded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "runtime/base/status.h"
#include "runtime/model/ggml_types.h"

namespace ft {

// True for the types encode_row can produce: F32, F16, BF16, Q8_0, Q4_0, Q4_1,
// Q5_0, Q4_K, Q5_K, Q6_K.
bool can_encode(GgmlType type);

// Encodes `n` values (a whole number of blocks) into `dst`, which must hold at
// least ggml_bytes(type, n) bytes. Non-finite inputs give kInvalidArgument.
Status encode_row(GgmlType type, const float* x, size_t n, std::span<uint8_t> dst);

}  // namespace ft
