#include "runtime/model/ggml_types.h"

#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>

#include "runtime/model/quant_blocks.h"

namespace ft {

namespace {

using T = GgmlType;

// Block sizes and bytes per block of every ggml type id a GGUF file may carry.
constexpr std::array<GgmlTypeTraits, 32> kTraits = {{
    {T::kF32, "f32", 1, 4, true},          {T::kF16, "f16", 1, 2, true},
    {T::kQ4_0, "q4_0", 32, 18, true},      {T::kQ4_1, "q4_1", 32, 20, true},
    {T::kQ5_0, "q5_0", 32, 22, true},      {T::kQ5_1, "q5_1", 32, 24, false},
    {T::kQ8_0, "q8_0", 32, 34, true},      {T::kQ8_1, "q8_1", 32, 36, false},
    {T::kQ2_K, "q2_K", 256, 84, false},    {T::kQ3_K, "q3_K", 256, 110, false},
    {T::kQ4_K, "q4_K", 256, 144, true},    {T::kQ5_K, "q5_K", 256, 176, true},
    {T::kQ6_K, "q6_K", 256, 210, true},    {T::kQ8_K, "q8_K", 256, 292, false},
    {T::kIQ2_XXS, "iq2_xxs", 256, 66, false}, {T::kIQ2_XS, "iq2_xs", 256, 74, false},
    {T::kIQ3_XXS, "iq3_xxs", 256, 98, false}, {T::kIQ1_S, "iq1_s", 256, 50, false},
    {T::kIQ4_NL, "iq4_nl", 32, 18, false}, {T::kIQ3_S, "iq3_s", 256, 110, false},
    {T::kIQ2_S, "iq2_s", 256, 82, false},  {T::kIQ4_XS, "iq4_xs", 256, 136, false},
    {T::kI8, "i8", 1, 1, false},           {T::kI16, "i16", 1, 2, false},
    {T::kI32, "i32", 1, 4, false},         {T::kI64, "i64", 1, 8, false},
    {T::kF64, "f64", 1, 8, false},         {T::kIQ1_M, "iq1_m", 256, 56, false},
    {T::kBF16, "bf16", 1, 2, true},        {T::kTQ1_0, "tq1_0", 256, 54, false},
    {T::kTQ2_0, "tq2_0", 256, 66, false},  {T::kMXFP4, "mxfp4", 32, 17, false},
}};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

template <typename Block>
Block load_block(const uint8_t* p) {
  Block b;
  std::memcpy(&b, p, sizeof(Block));
  return b;
}

void dequant_block(const quant::BlockQ4_0& b, float* y) {
  const float d = fp16_to_f32(b.d);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>((b.qs[j] & 0x0F) - 8);
    y[j + 16] = d * static_cast<float>((b.qs[j] >> 4) - 8);
  }
}

void dequant_block(const quant::BlockQ4_1& b, float* y) {
  const float d = fp16_to_f32(b.d);
  const float m = fp16_to_f32(b.m);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(b.qs[j] & 0x0F) + m;
    y[j + 16] = d * static_cast<float>(b.qs[j] >> 4) + m;
  }
}

void dequant_block(const quant::BlockQ5_0& b, float* y) {
  const float d = fp16_to_f32(b.d);
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  for (int j = 0; j < 16; ++j) {
    const int hi0 = static_cast<int>((qh >> j) & 1u) << 4;
    const int hi1 = static_cast<int>((qh >> (j + 16)) & 1u) << 4;
    y[j] = d * static_cast<float>(((b.qs[j] & 0x0F) | hi0) - 16);
    y[j + 16] = d * static_cast<float>(((b.qs[j] >> 4) | hi1) - 16);
  }
}

void dequant_block(const quant::BlockQ8_0& b, float* y) {
  const float d = fp16_to_f32(b.d);
  for (int j = 0; j < 32; ++j) y[j] = d * static_cast<float>(b.qs[j]);
}

void dequant_block(const quant::BlockQ4_K& b, float* y) {
  const float d = fp16_to_f32(b.d);
  const float dmin = fp16_to_f32(b.dmin);
  const uint8_t* q = b.qs;
  for (int group = 0; group < 4; ++group) {
    uint8_t sc0, m0, sc1, m1;
    quant::unpack_k_scale(b.scales, 2 * group, &sc0, &m0);
    quant::unpack_k_scale(b.scales, 2 * group + 1, &sc1, &m1);
    for (int l = 0; l < 32; ++l) y[l] = d * sc0 * (q[l] & 0x0F) - dmin * m0;
    for (int l = 0; l < 32; ++l) y[32 + l] = d * sc1 * (q[l] >> 4) - dmin * m1;
    q += 32;
    y += 64;
  }
}

void dequant_block(const quant::BlockQ5_K& b, float* y) {
  const float d = fp16_to_f32(b.d);
  const float dmin = fp16_to_f32(b.dmin);
  const uint8_t* q = b.qs;
  for (int group = 0; group < 4; ++group) {
    uint8_t sc0, m0, sc1, m1;
    quant::unpack_k_scale(b.scales, 2 * group, &sc0, &m0);
    quant::unpack_k_scale(b.scales, 2 * group + 1, &sc1, &m1);
    const uint8_t bit0 = static_cast<uint8_t>(1u << (2 * group));
    const uint8_t bit1 = static_cast<uint8_t>(1u << (2 * group + 1));
    for (int l = 0; l < 32; ++l)
      y[l] = d * sc0 * ((q[l] & 0x0F) + ((b.qh[l] & bit0) ? 16 : 0)) - dmin * m0;
    for (int l = 0; l < 32; ++l)
      y[32 + l] = d * sc1 * ((q[l] >> 4) + ((b.qh[l] & bit1) ? 16 : 0)) - dmin * m1;
    q += 32;
    y += 64;
  }
}

void dequant_block(const quant::BlockQ6_K& b, float* y) {
  const float d = fp16_to_f32(b.d);
  for (int half = 0; half < 2; ++half) {
    const uint8_t* ql = b.ql + 64 * half;
    const uint8_t* qh = b.qh + 32 * half;
    const int8_t* sc = b.scales + 8 * half;
    float* out = y + 128 * half;
    // Sixteen elements share a scale: the loops over them have no index
    // arithmetic on the scale and vectorize (the same products as d * sc * q).
    for (int is = 0; is < 2; ++is) {
      const float s1 = d * sc[is], s2 = d * sc[is + 2], s3 = d * sc[is + 4], s4 = d * sc[is + 6];
      for (int l = 16 * is; l < 16 * is + 16; ++l) {
        const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        out[l] = s1 * q1;
        out[l + 32] = s2 * q2;
        out[l + 64] = s3 * q3;
        out[l + 96] = s4 * q4;
      }
    }
  }
}

template <typename Block>
void dequant_blocks(const uint8_t* src, float* dst, size_t n) {
  for (size_t i = 0; i < n / Block::kElements; ++i)
    dequant_block(load_block<Block>(src + i * sizeof(Block)), dst + i * Block::kElements);
}

template <typename Load>
void convert_elements(const uint8_t* src, float* dst, size_t n, size_t width, Load load) {
  for (size_t i = 0; i < n; ++i) dst[i] = load(src + i * width);
}

}  // namespace

std::optional<GgmlTypeTraits> ggml_traits(uint32_t type_id) {
  for (const auto& t : kTraits)
    if (static_cast<uint32_t>(t.type) == type_id) return t;
  return std::nullopt;
}

const GgmlTypeTraits& ggml_traits(GgmlType type) {
  for (const auto& t : kTraits)
    if (t.type == type) return t;
  // Every GgmlType enumerator has a row; reaching here means the table lost one.
  assert(false && "ggml type missing from the traits table");
  return kTraits[0];
}

std::string_view ggml_type_name(GgmlType type) { return ggml_traits(type).name; }

std::optional<GgmlType> ggml_type_from_name(std::string_view name) {
  for (const auto& t : kTraits)
    if (iequals(t.name, name)) return t.type;
  return std::nullopt;
}

std::optional<uint64_t> ggml_bytes(GgmlType type, uint64_t n_elements) {
  const auto& t = ggml_traits(type);
  if (n_elements % t.block_size != 0) return std::nullopt;
  const uint64_t blocks = n_elements / t.block_size;
  uint64_t bytes;
  if (__builtin_mul_overflow(blocks, static_cast<uint64_t>(t.bytes_per_block), &bytes)) return std::nullopt;
  return bytes;
}

float fp16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F;
  const uint32_t mant = h & 0x3FF;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t f32_to_fp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000;
  const uint32_t exp = (x >> 23) & 0xFF;
  uint32_t mant = x & 0x7FFFFF;
  if (exp == 0xFF) return static_cast<uint16_t>(sign | 0x7C00 | (mant ? 0x200 | (mant >> 13) : 0));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7C00);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    const int shift = 14 - e;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  // A carry out of the mantissa correctly bumps the exponent (up to inf).
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float bf16_to_f32(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t f32_to_bf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7FFFFFFF) > 0x7F800000) return static_cast<uint16_t>((x >> 16) | 0x40);
  return static_cast<uint16_t>((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}

Status dequantize_row(GgmlType type, std::span<const uint8_t> src, float* dst, size_t n) {
  const auto& t = ggml_traits(type);
  if (!t.supported) return FT_ERROR(ErrorCode::kUnsupported, "cannot decode tensor type {}", t.name);
  if (n % t.block_size != 0)
    return FT_ERROR(ErrorCode::kInvalidArgument, "{} elements is not a whole number of {} blocks", n, t.name);
  const uint64_t need = static_cast<uint64_t>(n / t.block_size) * t.bytes_per_block;
  if (src.size() < need)
    return FT_ERROR(ErrorCode::kInvalidArgument, "{} source bytes for {} elements of {} (need {})", src.size(),
                    n, t.name, need);
  const uint8_t* p = src.data();
  switch (type) {
    case GgmlType::kF32:
      convert_elements(p, dst, n, 4, [](const uint8_t* q) { float v; std::memcpy(&v, q, 4); return v; });
      break;
    case GgmlType::kF16:
      convert_elements(p, dst, n, 2, [](const uint8_t* q) { uint16_t v; std::memcpy(&v, q, 2); return fp16_to_f32(v); });
      break;
    case GgmlType::kBF16:
      convert_elements(p, dst, n, 2, [](const uint8_t* q) { uint16_t v; std::memcpy(&v, q, 2); return bf16_to_f32(v); });
      break;
    case GgmlType::kQ4_0: dequant_blocks<quant::BlockQ4_0>(p, dst, n); break;
    case GgmlType::kQ4_1: dequant_blocks<quant::BlockQ4_1>(p, dst, n); break;
    case GgmlType::kQ5_0: dequant_blocks<quant::BlockQ5_0>(p, dst, n); break;
    case GgmlType::kQ8_0: dequant_blocks<quant::BlockQ8_0>(p, dst, n); break;
    case GgmlType::kQ4_K: dequant_blocks<quant::BlockQ4_K>(p, dst, n); break;
    case GgmlType::kQ5_K: dequant_blocks<quant::BlockQ5_K>(p, dst, n); break;
    case GgmlType::kQ6_K: dequant_blocks<quant::BlockQ6_K>(p, dst, n); break;
    default:
      return FT_ERROR(ErrorCode::kInternal, "type {} is marked supported but has no decoder", t.name);
  }
  return Status();
}

}  // namespace ft
