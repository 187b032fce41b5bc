// The device layout of quantized weights whose GGUF blocks are only 2-byte
// aligned (Q8_0: 34 bytes, Q6_K: 210): on a GPU these are uploaded with their
// fields split into planes, so the GEMV reads each lane's weights with one
// 16-byte load instead of a run of 2-byte loads (those made the GEMV
// load-issue bound: ncu on the H200, Q8_0 LM head, L1 busy 80% at 60% of DRAM
// bandwidth). Same bytes in all, same values; only where they sit.
//
// For a tensor of B blocks (rows x blocks per row, block index = row * (K /
// block elements) + block in row):
//   Q8_0: qs [B][32], then d [B] (f16).
//   Q6_K: ql [B][8][16], qh [B][8][8], scales [B][16], d [B] (f16). Part p
//     (0..7) of a block is half h = p / 4 at l0 = 8 (p % 4): its ql run is
//     ql[64h + l0 ..+8] then ql[64h + 32 + l0 ..+8], its qh run qh[32h + l0
//     ..+8] (the GGUF block's arrays); the 16 scales are reordered so scale
//     4 (2h + l0 / 16) + i is GGUF scale 8h + l0 / 16 + 2i.
// These are the 32 elements 128h + 32i + l0 + (0..7), i = 0..3, that one
// GEMV lane multiplies. kernel_src/gemv.hip and ggml_blocks.h read this.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/base/status.h"
#include "runtime/device/backend.h"
#include "runtime/model/ggml_types.h"

namespace ft {

enum class WeightLayout : uint8_t {
  kGguf,    // the file's blocks as they are
  kDevice,  // planes as above (Q8_0, Q6_K on GPU backends)
};

// A model weight on a backend: GGUF shape {k, n} (k contiguous), row j is
// output feature j. In the device layout the planes span the whole buffer
// (data.bytes / block bytes blocks), so a view's n may be less than the
// buffer's rows only in the GGUF layout.
struct WeightView {
  GgmlType type = GgmlType::kF32;
  int n = 0;  // output features (rows of W)
  int k = 0;  // input features
  DeviceBuffer data;
  WeightLayout layout = WeightLayout::kGguf;
};

// Whether GPU matmuls take `type` in the device layout (and only in it).
bool has_device_layout(GgmlType type);

// The layout a backend keeps `type` weights in: kDevice for has_device_layout
// types on GPU backends, else kGguf.
WeightLayout layout_for(const Backend& b, GgmlType type);

// Copies GGUF bytes (whole blocks) of a `type` weight into dst (as large) in
// layout_for(b, type), which it returns.
Result<WeightLayout> upload_weight(Backend& b, GgmlType type, std::span<const uint8_t> gguf, DeviceBuffer dst);

// An error unless w is in the layout its backend reads (op names the caller).
Status check_layout(const Backend& b, const char* op, const WeightView& w);

// Blocks in w's buffer: the extent of the device layout's planes.
uint64_t weight_blocks(const WeightView& w);

// GGUF bytes of whole blocks of `type` into the device layout; dst is as large as src.
Status to_device_layout(GgmlType type, std::span<const uint8_t> src, std::span<uint8_t> dst);

// The inverse: device layout back to GGUF blocks (for checks and dumps).
Status from_device_layout(GgmlType type, std::span<const uint8_t> src, std::span<uint8_t> dst);

}  // namespace ft
