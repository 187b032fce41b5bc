#include <bit>
#include <cmath>
#include <limits>

#include "runtime/model/ggml_types.h"
#include "runtime/model/quantize.h"
#include "tests/model/model_test_util.h"

namespace ft {
namespace {

void put16(std::vector<uint8_t>& b, size_t at, uint16_t v) { std::memcpy(b.data() + at, &v, 2); }

std::vector<float> decode(GgmlType type, const std::vector<uint8_t>& bytes, size_t n) {
  std::vector<float> out(n, std::nanf(""));
  Status s = dequantize_row(type, bytes, out.data(), n);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return out;
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

TEST(QuantFp16, KnownValuesAndRounding) {
  EXPECT_EQ(f32_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(f32_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(f32_to_fp16(65520.0f), 0x7C00);  // halfway to the next power: ties to even = inf
  EXPECT_EQ(f32_to_fp16(65519.0f), 0x7BFF);
  EXPECT_EQ(f32_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even
  EXPECT_EQ(f32_to_fp16(std::ldexp(3.0f, -26)), 0x0001);
  EXPECT_EQ(f32_to_fp16(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 ulp ties to even (2)
  EXPECT_EQ(f32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);       // tie, even stays
  EXPECT_EQ(f32_to_fp16(1.0f + std::ldexp(3.0f, -11)), 0x3C02);       // tie, odd rounds up
  EXPECT_EQ(f32_to_fp16(std::ldexp(1.0f, -14) * (1.0f - std::ldexp(1.0f, -12))), 0x0400);  // rounds up to normal
  EXPECT_EQ(f32_to_fp16(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(f32_to_fp16(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(fp16_to_f32(f32_to_fp16(std::nanf("")))));
}

TEST(QuantFp16, EveryHalfRoundTripsExactly) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(fp16_to_f32(f32_to_fp16(f)))) << h;
      continue;
    }
    ASSERT_EQ(f32_to_fp16(f), h) << "half " << h << " -> " << f;
  }
}

TEST(QuantBf16, RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie, even stays
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3F818000u)), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3F808001u)), 0x3F81);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
  EXPECT_EQ(bf16_to_f32(0xC040), -3.0f);
}

TEST(QuantDequant, Q8_0HandBuiltBlock) {
  std::vector<uint8_t> b(34);
  put16(b, 0, 0x3800);  // d = 0.5
  for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(j - 16));
  auto y = decode(GgmlType::kQ8_0, b, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], 0.5f * (j - 16)) << j;
}

TEST(QuantDequant, Q4_0HandBuiltBlock) {
  std::vector<uint8_t> b(18);
  put16(b, 0, 0x4000);  // d = 2
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>((15 - j) << 4 | j);
  auto y = decode(GgmlType::kQ4_0, b, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 2.0f * (j - 8));
    EXPECT_EQ(y[j + 16], 2.0f * (15 - j - 8));
  }
}

TEST(QuantDequant, Q4_1HandBuiltBlock) {
  std::vector<uint8_t> b(20);
  put16(b, 0, 0x3C00);  // d = 1
  put16(b, 2, 0xBC00);  // m = -1
  for (int j = 0; j < 16; ++j) b[4 + j] = 0xF5;
  auto y = decode(GgmlType::kQ4_1, b, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 4.0f);
    EXPECT_EQ(y[j + 16], 14.0f);
  }
}

TEST(QuantDequant, Q5_0HandBuiltBlock) {
  std::vector<uint8_t> b(22);
  put16(b, 0, 0x3C00);
  const uint32_t qh = 0x00010001u | (1u << 5) | (1u << 31);  // high bits of elements 0, 5, 16, 31
  std::memcpy(b.data() + 2, &qh, 4);
  for (int j = 0; j < 16; ++j) b[6 + j] = 0x21;  // low 1, high 2
  auto y = decode(GgmlType::kQ5_0, b, 32);
  for (int j = 0; j < 32; ++j) {
    const int low = j < 16 ? 1 : 2;
    const int high = (qh >> j) & 1;
    EXPECT_EQ(y[j], static_cast<float>((low | high << 4) - 16)) << j;
  }
}

// K-quant scale packing written out from the format description: bytes 0-3
// and 4-7 hold scales and mins of sub-blocks 0-3 in their low 6 bits and the
// top 2 bits of sub-blocks 4-7; bytes 8-11 hold the low nibbles of 4-7.
void pack_scales_by_hand(const int sc[8], const int mn[8], uint8_t* s) {
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<uint8_t>(sc[j] | (sc[j + 4] >> 4) << 6);
    s[j + 4] = static_cast<uint8_t>(mn[j] | (mn[j + 4] >> 4) << 6);
    s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | (mn[j + 4] & 15) << 4);
  }
}

TEST(QuantDequant, Q4_KHandBuiltBlock) {
  const int sc[8] = {1, 7, 20, 63, 33, 47, 16, 62};
  const int mn[8] = {0, 5, 63, 12, 61, 17, 48, 3};
  auto b = random_bytes(144, 4);
  put16(b, 0, 0x3C00);  // d = 1
  put16(b, 2, 0x3800);  // dmin = 0.5
  pack_scales_by_hand(sc, mn, b.data() + 4);
  auto y = decode(GgmlType::kQ4_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int sub = e / 32, group = e / 64, l = e % 32;
    const uint8_t byte = b[16 + 32 * group + l];
    const int q = sub % 2 == 0 ? byte & 15 : byte >> 4;
    ASSERT_EQ(y[e], 1.0f * sc[sub] * q - 0.5f * mn[sub]) << e;
  }
}

TEST(QuantDequant, Q5_KHandBuiltBlock) {
  const int sc[8] = {63, 2, 19, 40, 17, 31, 55, 8};
  const int mn[8] = {9, 60, 1, 0, 33, 22, 44, 63};
  auto b = random_bytes(176, 5);
  put16(b, 0, 0x3400);  // d = 0.25
  put16(b, 2, 0x4000);  // dmin = 2
  pack_scales_by_hand(sc, mn, b.data() + 4);
  auto y = decode(GgmlType::kQ5_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int sub = e / 32, group = e / 64, l = e % 32;
    const uint8_t byte = b[48 + 32 * group + l];
    const int q = (sub % 2 == 0 ? byte & 15 : byte >> 4) + 16 * ((b[16 + l] >> sub) & 1);
    ASSERT_EQ(y[e], 0.25f * sc[sub] * q - 2.0f * mn[sub]) << e;
  }
}

TEST(QuantDequant, Q6_KHandBuiltBlock) {
  auto b = random_bytes(210, 6);
  put16(b, 208, 0x3000);  // d = 0.125
  auto y = decode(GgmlType::kQ6_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int half = e / 128, r = e % 128, k = r / 32, l = r % 32;
    const uint8_t ql = b[64 * half + l + (k % 2) * 32];
    const int low = k < 2 ? ql & 15 : ql >> 4;
    const int high = (b[128 + 32 * half + l] >> (2 * k)) & 3;
    const int scale = static_cast<int8_t>(b[192 + e / 16]);
    ASSERT_EQ(y[e], 0.125f * scale * ((low | high << 4) - 32)) << e;
  }
}

TEST(QuantDequant, RefusesUnsupportedTypesAndShortInput) {
  std::vector<uint8_t> b(84);
  float y[256];
  EXPECT_EQ(dequantize_row(GgmlType::kQ2_K, b, y, 256).code(), ErrorCode::kUnsupported);
  EXPECT_EQ(dequantize_row(GgmlType::kQ8_0, b, y, 31).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(dequantize_row(GgmlType::kQ8_0, b, y, 96).code(), ErrorCode::kInvalidArgument);
}

// Bounds from napkin math for uniform levels: a 32-value gaussian block spans
// about 4.1 sigma, so Q4_K's 15 steps give RMS ~0.079 sigma before the
// scale/min search trims it (~0.071); Q5_K's 31 steps ~0.038; Q6_K's 16-value
// sub-blocks with 63 steps ~0.017; Q8_0 ~0.005.
struct Bound {
  GgmlType type;
  double max_rel_l2;
};

class QuantRoundTrip : public ::testing::TestWithParam<Bound> {};

TEST_P(QuantRoundTrip, GaussianErrorWithinBound) {
  const Bound bound = GetParam();
  const size_t n = 256 * 64;
  const auto x = test::gaussian(n, 42, 0.7f);
  std::vector<uint8_t> q(*ggml_bytes(bound.type, n), 0xAB);
  ASSERT_TRUE(encode_row(bound.type, x.data(), n, q).ok());
  const auto y = decode(bound.type, q, n);
  const double err = test::relative_l2(x, y);
  EXPECT_LT(err, bound.max_rel_l2) << ggml_type_name(bound.type);
  // Errors shrink with more bits: no type should be near-lossless by accident.
  EXPECT_GT(err, 0.0) << ggml_type_name(bound.type);
}

INSTANTIATE_TEST_SUITE_P(QuantTypes, QuantRoundTrip,
                         ::testing::Values(Bound{GgmlType::kF16, 1e-3}, Bound{GgmlType::kBF16, 5e-3},
                                           Bound{GgmlType::kQ8_0, 0.01}, Bound{GgmlType::kQ6_K, 0.02},
                                           Bound{GgmlType::kQ5_K, 0.04}, Bound{GgmlType::kQ5_0, 0.06},
                                           Bound{GgmlType::kQ4_K, 0.075}, Bound{GgmlType::kQ4_1, 0.1},
                                           Bound{GgmlType::kQ4_0, 0.12}),
                         [](const auto& info) { return std::string(ggml_type_name(info.param.type)); });

TEST(QuantRoundTripExact, Q8_0RepresentableValuesSurvive) {
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[i] = 0.25f * ((i * 37) % 255 - 127);  // d = 0.25 exactly
  x[0] = 0.25f * 127;
  x[32] = -0.25f * 127;
  std::vector<uint8_t> q(68);
  ASSERT_TRUE(encode_row(GgmlType::kQ8_0, x.data(), 64, q).ok());
  EXPECT_EQ(decode(GgmlType::kQ8_0, q, 64), x);
}

TEST(QuantRoundTripExact, ZerosAndConstantsAreHandled) {
  for (GgmlType t : {GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kQ4_0, GgmlType::kQ8_0}) {
    std::vector<float> zeros(256, 0.0f);
    std::vector<uint8_t> q(*ggml_bytes(t, 256));
    ASSERT_TRUE(encode_row(t, zeros.data(), 256, q).ok());
    EXPECT_EQ(decode(t, q, 256), zeros) << ggml_type_name(t);
    std::vector<float> ones(256, 1.0f);
    ASSERT_TRUE(encode_row(t, ones.data(), 256, q).ok());
    for (float v : decode(t, q, 256)) EXPECT_NEAR(v, 1.0f, 0.01f) << ggml_type_name(t);
  }
}

TEST(QuantEncode, RejectsNonFiniteAndWrongSizes) {
  std::vector<float> x(32, 1.0f);
  x[5] = std::numeric_limits<float>::infinity();
  std::vector<uint8_t> q(34);
  EXPECT_EQ(encode_row(GgmlType::kQ8_0, x.data(), 32, q).code(), ErrorCode::kInvalidArgument);
  x[5] = 0.0f;
  EXPECT_EQ(encode_row(GgmlType::kQ8_0, x.data(), 32, std::span<uint8_t>(q).first(33)).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(encode_row(GgmlType::kQ2_K, x.data(), 32, q).code(), ErrorCode::kUnsupported);
}

TEST(QuantTraits, TableMatchesBlockLayouts) {
  EXPECT_EQ(ggml_traits(GgmlType::kQ4_K).bytes_per_block, 144u);
  EXPECT_EQ(ggml_traits(GgmlType::kQ6_K).bytes_per_block, 210u);
  EXPECT_EQ(ggml_type_from_name("Q4_K"), GgmlType::kQ4_K);
  EXPECT_EQ(ggml_type_from_name("iq4_xs"), GgmlType::kIQ4_XS);
  EXPECT_FALSE(ggml_traits(4u).has_value());  // a removed type id
  EXPECT_FALSE(ggml_bytes(GgmlType::kQ8_0, 33).has_value());
  EXPECT_FALSE(ggml_bytes(GgmlType::kF32, uint64_t{1} << 63).has_value());
}

}  // namespace
}  // namespace ft
