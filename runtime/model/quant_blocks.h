// Byte layouts of the ggml blocks ft decodes and encodes (internal to
// runtime/model). Every struct is exactly the on-disk block: the static_asserts
// hold the sizes that GGUF files depend on. Blocks are copied out of files with
// memcpy, never cast in place, since a mapped tensor can sit at any even offset.
#pragma once

#include <cstdint>

#include "runtime/model/ggml_types.h"

namespace ft::quant {

struct BlockQ4_0 {
  static constexpr GgmlType kType = GgmlType::kQ4_0;
  static constexpr int kElements = 32;
  uint16_t d;
  uint8_t qs[16];
};
struct BlockQ4_1 {
  static constexpr GgmlType kType = GgmlType::kQ4_1;
  static constexpr int kElements = 32;
  uint16_t d;
  uint16_t m;
  uint8_t qs[16];
};
struct BlockQ5_0 {
  static constexpr GgmlType kType = GgmlType::kQ5_0;
  static constexpr int kElements = 32;
  uint16_t d;
  uint8_t qh[4];  // bit j = fifth bit of element j
  uint8_t qs[16];
};
struct BlockQ8_0 {
  static constexpr GgmlType kType = GgmlType::kQ8_0;
  static constexpr int kElements = 32;
  uint16_t d;
  int8_t qs[32];
};
struct BlockQ4_K {
  static constexpr GgmlType kType = GgmlType::kQ4_K;
  static constexpr int kElements = kQK_K;
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];  // 8 six-bit scales and 8 six-bit mins, packed
  uint8_t qs[128];
};
struct BlockQ5_K {
  static constexpr GgmlType kType = GgmlType::kQ5_K;
  static constexpr int kElements = kQK_K;
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
struct BlockQ6_K {
  static constexpr GgmlType kType = GgmlType::kQ6_K;
  static constexpr int kElements = kQK_K;
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);

// The K-quant 12-byte scale packing: sub-blocks 0..3 keep their 6-bit scale and
// min in the low bits of bytes 0..3 and 4..7; sub-blocks 4..7 split theirs into
// a low nibble in bytes 8..11 and the two high bits in the top of bytes 0..7.
inline void unpack_k_scale(const uint8_t* s, int j, uint8_t* scale, uint8_t* min) {
  if (j < 4) {
    *scale = s[j] & 63;
    *min = s[j + 4] & 63;
  } else {
    *scale = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
    *min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

inline void pack_k_scales(const uint8_t scale[8], const uint8_t min[8], uint8_t* s) {
  for (int j = 0; j < 12; ++j) s[j] = 0;
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      s[j] = scale[j];
      s[j + 4] = min[j];
    } else {
      s[j + 4] = static_cast<uint8_t>((scale[j] & 0x0F) | ((min[j] & 0x0F) << 4));
      s[j - 4] |= static_cast<uint8_t>((scale[j] >> 4) << 6);
      s[j] |= static_cast<uint8_t>((min[j] >> 4) << 6);
    }
  }
}

}  // namespace ft::quant
