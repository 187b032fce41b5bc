// The device layout of Q8_0 / Q6_K weights (runtime/ops/weight_layout.h): a
// permutation of the GGUF bytes, and one whose planes decode, by the formulas
// the GPU kernels use (kernel_src/ggml_blocks.h, gemv.hip), to the GGUF
// values.
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/device/backend.h"
#include "runtime/model/quantize.h"
#include "runtime/ops/weight_layout.h"

namespace ft {
namespace {

std::vector<uint8_t> encoded(GgmlType type, int rows, int k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  const size_t row_bytes = *ggml_bytes(type, k);
  std::vector<uint8_t> out(row_bytes * rows);
  std::vector<float> row(k);
  for (int r = 0; r < rows; ++r) {
    for (auto& v : row) v = dist(rng);
    EXPECT_TRUE(encode_row(type, row.data(), k, {out.data() + row_bytes * r, row_bytes}).ok());
  }
  return out;
}

float half(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return fp16_to_f32(h);
}

// Element e (0..255 or 0..31) of block idx, read from the planes as the
// device kernels do.
float planes_value(GgmlType type, const uint8_t* w, size_t B, size_t idx, int e) {
  if (type == GgmlType::kQ8_0) return half(w + 32 * B + 2 * idx) * static_cast<float>(static_cast<int8_t>(w[32 * idx + e]));
  const int h = e / 128, l = e % 128 % 32, g = e % 128 / 32;  // y[l + 32 g] of half h
  const int p = 4 * h + l / 8, at = l % 8;
  const uint8_t ql = w[128 * idx + 16 * p + 8 * (g & 1) + at];
  const uint8_t qh = w[128 * B + 64 * idx + 8 * p + at];
  const int q = (((g >= 2 ? ql >> 4 : ql) & 0x0F) | (((qh >> (2 * g)) & 3) << 4)) - 32;
  const int8_t sc = static_cast<int8_t>(w[192 * B + 16 * idx + 4 * (2 * h + l / 16) + g]);
  return half(w + 208 * B + 2 * idx) * sc * static_cast<float>(q);
}

class DeviceLayout : public ::testing::TestWithParam<GgmlType> {};

TEST_P(DeviceLayout, IsAPermutationThatDecodesToTheGgufValues) {
  const GgmlType type = GetParam();
  const int rows = 3, k = 512;
  const auto gguf = encoded(type, rows, k, 7);
  std::vector<uint8_t> planes(gguf.size()), back(gguf.size());
  ASSERT_TRUE(to_device_layout(type, gguf, planes).ok());
  ASSERT_TRUE(from_device_layout(type, planes, back).ok());
  EXPECT_EQ(back, gguf);
  // Same bytes, moved: equal byte histograms.
  std::vector<int> count(256, 0);
  for (uint8_t v : gguf) ++count[v];
  for (uint8_t v : planes) --count[v];
  EXPECT_EQ(count, std::vector<int>(256, 0));

  const GgmlTypeTraits& t = ggml_traits(type);
  const size_t B = gguf.size() / t.bytes_per_block;
  std::vector<float> want(static_cast<size_t>(rows) * k);
  ASSERT_TRUE(dequantize_row(type, gguf, want.data(), want.size()).ok());
  int mismatches = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const float got = planes_value(type, planes.data(), B, i / t.block_size, static_cast<int>(i % t.block_size));
    mismatches += got != want[i];
  }
  EXPECT_EQ(mismatches, 0);
}

INSTANTIATE_TEST_SUITE_P(Types, DeviceLayout, ::testing::Values(GgmlType::kQ8_0, GgmlType::kQ6_K),
                         [](const auto& info) { return std::string(ggml_type_name(info.param)); });

TEST(DeviceLayoutErrors, PartialBlocksOtherTypesAndSizesAreRefused) {
  std::vector<uint8_t> src(34 * 2 + 1), dst(src.size());
  EXPECT_EQ(to_device_layout(GgmlType::kQ8_0, src, dst).code(), ErrorCode::kInvalidArgument);
  src.resize(68);
  EXPECT_EQ(to_device_layout(GgmlType::kQ8_0, src, dst).code(), ErrorCode::kInvalidArgument);  // dst 69 bytes
  dst.resize(68);
  EXPECT_TRUE(to_device_layout(GgmlType::kQ8_0, src, dst).ok());
  std::vector<uint8_t> q4(144), q4_out(144);
  EXPECT_EQ(to_device_layout(GgmlType::kQ4_K, q4, q4_out).code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(has_device_layout(GgmlType::kQ4_K));
  EXPECT_TRUE(has_device_layout(GgmlType::kQ6_K));
}

TEST(DeviceLayoutCpu, TheCpuKeepsGgufBytesAndRefusesThePlanes) {
  auto cpu = open_cpu_backend(1);
  ASSERT_TRUE(cpu.ok());
  Backend& b = **cpu;
  EXPECT_EQ(layout_for(b, GgmlType::kQ8_0), WeightLayout::kGguf);
  const auto gguf = encoded(GgmlType::kQ8_0, 2, 64, 3);
  auto buf = b.alloc(gguf.size());
  ASSERT_TRUE(buf.ok());
  auto layout = upload_weight(b, GgmlType::kQ8_0, gguf, *buf);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(*layout, WeightLayout::kGguf);
  std::vector<uint8_t> back(gguf.size());
  ASSERT_TRUE(b.copy_to_host(back.data(), *buf, back.size()).ok());
  EXPECT_EQ(back, gguf);
  WeightView planes{GgmlType::kQ8_0, 2, 64, *buf, WeightLayout::kDevice};
  EXPECT_EQ(check_layout(b, "matmul", planes).code(), ErrorCode::kInvalidArgument);
  planes.layout = WeightLayout::kGguf;
  EXPECT_TRUE(check_layout(b, "matmul", planes).ok());
  EXPECT_EQ(weight_blocks(planes), 4u);
  b.free(*buf);
}

}  // namespace
}  // namespace ft
