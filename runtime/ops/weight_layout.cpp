#include "runtime/ops/weight_layout.h"

#include <cstring>
#include <vector>

namespace ft {

namespace {

constexpr size_t kQ8Bytes = 34, kQ6Bytes = 210;

// Calls move(offset in the GGUF block, offset in the planes, bytes) for every
// field run of block b of a tensor of B blocks.
template <typename Move>
void q8_0_runs(size_t B, size_t b, Move&& move) {
  move(0, 32 * B + 2 * b, 2);  // d
  move(2, 32 * b, 32);         // qs
}

template <typename Move>
void q6_k_runs(size_t B, size_t b, Move&& move) {
  // GGUF: ql[128] at 0, qh[64] at 128, scales[16] at 192, d at 208.
  const size_t ql = 128 * b, qh = 128 * B + 64 * b, sc = 192 * B + 16 * b, d = 208 * B + 2 * b;
  for (size_t p = 0; p < 8; ++p) {
    const size_t h = p / 4, l0 = 8 * (p % 4);
    move(64 * h + l0, ql + 16 * p, 8);
    move(64 * h + 32 + l0, ql + 16 * p + 8, 8);
    move(128 + 32 * h + l0, qh + 8 * p, 8);
  }
  for (size_t h = 0; h < 2; ++h)
    for (size_t is = 0; is < 2; ++is)
      for (size_t i = 0; i < 4; ++i) move(192 + 8 * h + is + 2 * i, sc + 4 * (2 * h + is) + i, 1);
  move(208, d, 2);
}

Status convert(GgmlType type, std::span<const uint8_t> src, std::span<uint8_t> dst, bool to_planes) {
  if (!has_device_layout(type))
    return FT_ERROR(ErrorCode::kInvalidArgument, "weight layout: {} has no device layout", ggml_type_name(type));
  const size_t block = type == GgmlType::kQ8_0 ? kQ8Bytes : kQ6Bytes;
  if (src.size() % block != 0 || dst.size() != src.size())
    return FT_ERROR(ErrorCode::kInvalidArgument, "weight layout: {} bytes are not whole {} blocks (or dst is {} bytes)",
                    src.size(), ggml_type_name(type), dst.size());
  const size_t B = src.size() / block;
  const uint8_t* from = src.data();
  uint8_t* to = dst.data();
  const int64_t n = static_cast<int64_t>(B);
#pragma omp parallel for schedule(static) if (n > 4096)
  for (int64_t i = 0; i < n; ++i) {
    const size_t b = static_cast<size_t>(i);
    auto move = [&](size_t in_block, size_t in_planes, size_t bytes) {
      if (to_planes) std::memcpy(to + in_planes, from + block * b + in_block, bytes);
      else std::memcpy(to + block * b + in_block, from + in_planes, bytes);
    };
    if (type == GgmlType::kQ8_0) q8_0_runs(B, b, move);
    else q6_k_runs(B, b, move);
  }
  return Status();
}

}  // namespace

bool has_device_layout(GgmlType type) { return type == GgmlType::kQ8_0 || type == GgmlType::kQ6_K; }

WeightLayout layout_for(const Backend& b, GgmlType type) {
  return b.kind() != DeviceKind::kCpu && has_device_layout(type) ? WeightLayout::kDevice : WeightLayout::kGguf;
}

Result<WeightLayout> upload_weight(Backend& b, GgmlType type, std::span<const uint8_t> gguf, DeviceBuffer dst) {
  if (dst.bytes < gguf.size())
    return FT_ERROR(ErrorCode::kInvalidArgument, "upload_weight: {} bytes into a buffer of {}", gguf.size(), dst.bytes);
  const WeightLayout layout = layout_for(b, type);
  if (layout == WeightLayout::kGguf) {
    FT_RETURN_IF_ERROR(b.copy_to_device(dst, gguf.data(), gguf.size()));
    return layout;
  }
  std::vector<uint8_t> planes(gguf.size());
  FT_RETURN_IF_ERROR(to_device_layout(type, gguf, planes));
  FT_RETURN_IF_ERROR(b.copy_to_device(dst, planes.data(), planes.size()));
  return layout;
}

Status check_layout(const Backend& b, const char* op, const WeightView& w) {
  const WeightLayout want = layout_for(b, w.type);
  if (w.layout == want) return Status();
  return FT_ERROR(ErrorCode::kInvalidArgument, "{}: {} weights on {} are read in the {} layout (upload them with upload_weight)",
                  op, ggml_type_name(w.type), b.kind() == DeviceKind::kCpu ? "the CPU" : "a GPU",
                  want == WeightLayout::kDevice ? "device" : "GGUF");
}

uint64_t weight_blocks(const WeightView& w) {
  const uint64_t block = ggml_traits(w.type).bytes_per_block;
  return block ? w.data.bytes / block : 0;
}

Status to_device_layout(GgmlType type, std::span<const uint8_t> src, std::span<uint8_t> dst) {
  return convert(type, src, dst, true);
}

Status from_device_layout(GgmlType type, std::span<const uint8_t> src, std::span<uint8_t> dst) {
  return convert(type, src, dst, false);
}

}  // namespace ft
