// GGUF weight blocks decoded 32 elements at a time on the device, for the
// kernels that expand weights to floats (embedding rows, GEMM's dequantizing
// pass). Byte layouts are those of runtime/model/ggml_types.h, except Q8_0 and
// Q6_K, which devices hold in the planes of runtime/ops/weight_layout.h;
// blocks are 18/144/176 bytes, so loads are bytewise (unaligned).
//
// GgmlGroup<type id>: kBlockBytes per block, kGroups 32-element groups per
// block, decode(w, blocks, block, group, y[32]): group `group` of block
// `block` of a tensor of `blocks` blocks at w.
#pragma once

#include "ft_device.h"

namespace ft {

FT_DEVICE float load_f16(const ft_u8* p) { return to_float(f16{static_cast<ft_u16>(p[0] | (p[1] << 8))}); }

// Scale and min j (0..7) of a Q4_K / Q5_K block's 12 packed scale bytes.
FT_DEVICE void k_scale_min(const ft_u8* s, int j, float* sc, float* mn) {
  if (j < 4) {
    *sc = static_cast<float>(s[j] & 63);
    *mn = static_cast<float>(s[j + 4] & 63);
  } else {
    *sc = static_cast<float>((s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4));
    *mn = static_cast<float>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

template <int kType> struct GgmlGroup;
template <> struct GgmlGroup<0> {  // F32
  static constexpr int kBlockBytes = 128, kGroups = 1;
  static FT_DEVICE void decode(const ft_u8* w, long long, long long idx, int, float* y) {
    const ft_u8* b = w + idx * kBlockBytes;
    for (int l = 0; l < 32; ++l) y[l] = *reinterpret_cast<const float*>(b + 4 * l);
  }
};
template <> struct GgmlGroup<1> {  // F16
  static constexpr int kBlockBytes = 64, kGroups = 1;
  static FT_DEVICE void decode(const ft_u8* w, long long, long long idx, int, float* y) {
    const ft_u8* b = w + idx * kBlockBytes;
    for (int l = 0; l < 32; ++l) y[l] = load_f16(b + 2 * l);
  }
};
template <> struct GgmlGroup<30> {  // BF16
  static constexpr int kBlockBytes = 64, kGroups = 1;
  static FT_DEVICE void decode(const ft_u8* w, long long, long long idx, int, float* y) {
    const ft_u8* b = w + idx * kBlockBytes;
    for (int l = 0; l < 32; ++l) y[l] = to_float(bf16{static_cast<ft_u16>(b[2 * l] | (b[2 * l + 1] << 8))});
  }
};
template <> struct GgmlGroup<2> {  // Q4_0 {f16 d; u8 qs[16]}
  static constexpr int kBlockBytes = 18, kGroups = 1;
  static FT_DEVICE void decode(const ft_u8* w, long long, long long idx, int, float* y) {
    const ft_u8* b = w + idx * kBlockBytes;
    const float d = load_f16(b);
    for (int j = 0; j < 16; ++j) {
      y[j] = d * static_cast<float>((b[2 + j] & 0x0F) - 8);
      y[j + 16] = d * static_cast<float>((b[2 + j] >> 4) - 8);
    }
  }
};
template <> struct GgmlGroup<8> {  // Q8_0, device layout: qs [B][32], d [B]
  static constexpr int kBlockBytes = 34, kGroups = 1;
  static FT_DEVICE void decode(const ft_u8* w, long long blocks, long long idx, int, float* y) {
    const float d = load_f16(w + 32 * blocks + 2 * idx);
    const ft_u8* q = w + 32 * idx;
    for (int j = 0; j < 32; ++j) y[j] = d * static_cast<float>(static_cast<ft_i8>(q[j]));
  }
};
template <> struct GgmlGroup<12> {  // Q4_K {f16 d, dmin; u8 scales[12]; u8 qs[128]}
  static constexpr int kBlockBytes = 144, kGroups = 8;
  static FT_DEVICE void decode(const ft_u8* w, long long, long long idx, int sub, float* y) {
    const ft_u8* b = w + idx * kBlockBytes;
    float sc, mn;
    k_scale_min(b + 4, sub, &sc, &mn);
    const float d = load_f16(b) * sc, m = load_f16(b + 2) * mn;
    const ft_u8* q = b + 16 + 32 * (sub >> 1);
    const int shift = (sub & 1) * 4;
    for (int l = 0; l < 32; ++l) y[l] = d * static_cast<float>((q[l] >> shift) & 0x0F) - m;
  }
};
template <> struct GgmlGroup<13> {  // Q5_K {f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}
  static constexpr int kBlockBytes = 176, kGroups = 8;
  static FT_DEVICE void decode(const ft_u8* w, long long, long long idx, int sub, float* y) {
    const ft_u8* b = w + idx * kBlockBytes;
    float sc, mn;
    k_scale_min(b + 4, sub, &sc, &mn);
    const float d = load_f16(b) * sc, m = load_f16(b + 2) * mn;
    const ft_u8* qh = b + 16;
    const ft_u8* q = b + 48 + 32 * (sub >> 1);
    const int shift = (sub & 1) * 4;
    for (int l = 0; l < 32; ++l)
      y[l] = d * static_cast<float>(((q[l] >> shift) & 0x0F) | (((qh[l] >> sub) & 1) << 4)) - m;
  }
};
// Q6_K, device layout: ql [B][8][16], qh [B][8][8], scales [B][16], d [B].
// Group `sub` is y[l + 32 i] of half h (l = 0..31, sub = 4h + i): element l
// is in part p = 4h + l / 8 at e = l % 8: its ql byte is run (i & 1) of the
// part's ql (high nibble for i >= 2), its qh byte qh[p][e] (bits 2i, 2i + 1),
// its scale scales[4 (2h + l / 16) + i].
template <> struct GgmlGroup<14> {
  static constexpr int kBlockBytes = 210, kGroups = 8;
  static FT_DEVICE void decode(const ft_u8* w, long long blocks, long long idx, int sub, float* y) {
    const int h = sub >> 2, i = sub & 3;
    const ft_u8* ql = w + 128 * idx + 64 * h + 8 * (i & 1);
    const ft_u8* qh = w + 128 * blocks + 64 * idx + 32 * h;
    const ft_i8* sc = reinterpret_cast<const ft_i8*>(w + 192 * blocks + 16 * idx) + 8 * h + i;
    const float d = load_f16(w + 208 * blocks + 2 * idx);
    const int lshift = (i >> 1) * 4, hshift = 2 * i;
    for (int l = 0; l < 32; ++l) {
      const int p = l >> 3, e = l & 7;
      const int q = (((ql[16 * p + e] >> lshift) & 0x0F) | (((qh[8 * p + e] >> hshift) & 3) << 4)) - 32;
      y[l] = d * static_cast<float>(sc[4 * (l >> 4)]) * static_cast<float>(q);
    }
  }
};

}  // namespace ft
