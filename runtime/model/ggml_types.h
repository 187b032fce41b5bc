// ggml tensor types as used in GGUF files: one traits row per type id, and the
// f32 <-> f16/bf16 conversions every quant format is built on.
//
// Block layouts follow the ggml definitions bit for bit (little-endian):
//   Q4_0 {f16 d; u8 qs[16]}                      x = d * (q - 8)
//   Q4_1 {f16 d; f16 m; u8 qs[16]}               x = d * q + m
//   Q5_0 {f16 d; u8 qh[4]; u8 qs[16]}            x = d * (q - 16)
//   Q8_0 {f16 d; i8 qs[32]}                      x = d * q
//   Q4_K {f16 d; f16 dmin; u8 scales[12]; u8 qs[128]}            256 per block
//   Q5_K {f16 d; f16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}
//   Q6_K {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}
// In the 4- and 5-bit types element j of a 32-block sits in the low nibble of
// qs[j] and element j+16 in the high nibble (K-quants: per 64-element group,
// low nibbles are the first 32 and high nibbles the next 32).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "runtime/base/status.h"

namespace ft {

enum class GgmlType : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8, kQ8_1 = 9,
  kQ2_K = 10, kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kQ8_K = 15,
  kIQ2_XXS = 16, kIQ2_XS = 17, kIQ3_XXS = 18, kIQ1_S = 19, kIQ4_NL = 20, kIQ3_S = 21,
  kIQ2_S = 22, kIQ4_XS = 23, kI8 = 24, kI16 = 25, kI32 = 26, kI64 = 27, kF64 = 28,
  kIQ1_M = 29, kBF16 = 30, kTQ1_0 = 34, kTQ2_0 = 35, kMXFP4 = 39,
};

inline constexpr int kQK_K = 256;  // elements per K-quant super-block

struct GgmlTypeTraits {
  GgmlType type;
  std::string_view name;     // "q4_K", as ggml spells it
  uint32_t block_size;       // elements per block
  uint32_t bytes_per_block;
  bool supported;            // ft can hand out and dequantize its data
};

// Traits of a ggml type id, or nullopt when the id is not a known ggml type.
std::optional<GgmlTypeTraits> ggml_traits(uint32_t type_id);
const GgmlTypeTraits& ggml_traits(GgmlType type);
std::string_view ggml_type_name(GgmlType type);
// Case-insensitive lookup by ggml name ("q4_k", "bf16").
std::optional<GgmlType> ggml_type_from_name(std::string_view name);

// Bytes for `n_elements` of `type`, or nullopt when n_elements is not a whole
// number of blocks or the size overflows.
std::optional<uint64_t> ggml_bytes(GgmlType type, uint64_t n_elements);

float fp16_to_f32(uint16_t h);
uint16_t f32_to_fp16(float f);  // round to nearest even; overflow gives inf
float bf16_to_f32(uint16_t b);
uint16_t f32_to_bf16(float f);  // round to nearest even; NaN stays NaN

// Dequantizes `n` elements (a whole number of blocks) from `src` into `dst`.
// kUnsupported for types ft does not decode; kInvalidArgument when n is not a
// multiple of the block size or `src` is too short.
Status dequantize_row(GgmlType type, std::span<const uint8_t> src, float* dst, size_t n);

}  // namespace ft
