// GGUF weight blocks decoded 32 elements at a time on the device, for the
// kernels that expand weights to floats (embedding rows, GEMM's dequantizing
// pass, the few-row GEMM's tiles). Byte layouts are those of
// runtime/model/ggml_types.h, except Q8_0 and Q6_K, which devices hold in the
// planes of runtime/ops/weight_layout.h.
//
// GgmlGroup<type id>: kBlockBytes per block, kGroups 32-element groups per
// block, decode<kAligned>(w, blocks, block, group, y[32]): group `group` of
// block `block` of a tensor of `blocks` blocks at w. Blocks are 18/144/176
// bytes, so by default fields are read bytewise (unaligned). With kAligned
// the caller vouches that w is 16-byte aligned: Q8_0, Q4_K, Q5_K and Q6_K
// then read their runs with 8- and 16-byte loads (Q4_K: 3 loads for a group
// instead of 46). Same bytes, same arithmetic, same values.
#pragma once

#include "ft_device.h"

namespace ft {

FT_DEVICE float load_f16(const ft_u8* p) { return to_float(f16{static_cast<ft_u16>(p[0] | (p[1] << 8))}); }

// kBytes (a multiple of 4) of a block held in 32-bit words, byte i at bits
// 8 (i % 4) of word i / 4 (little-endian, as the file stores them).
template <int kBytes>
struct ByteRun {
  ft_u32 w[kBytes / 4];
  // i need not be a constant: the word is picked by selects, so the run stays
  // in registers (an indexed register array would go to scratch memory).
  FT_DEVICE int operator[](int i) const {
    ft_u32 word = w[0];
#pragma unroll
    for (int k = 1; k < kBytes / 4; ++k) word = (i >> 2) == k ? w[k] : word;
    return static_cast<int>((word >> ((i & 3) * 8)) & 0xFFu);
  }
};

// The run at p: 16- or 8-byte loads when kAligned (p then as aligned as its
// length), else byte loads.
template <int kBytes, bool kAligned>
FT_DEVICE ByteRun<kBytes> load_run(const ft_u8* p) {
  static_assert(kBytes % 4 == 0, "whole words");
  ByteRun<kBytes> r;
  if constexpr (kAligned && kBytes % 8 == 0) {
    constexpr int kVec = kBytes % 16 == 0 ? 16 : 8, kWords = kVec / 4;
#pragma unroll
    for (int c = 0; c < kBytes / kVec; ++c) {
      const Vec<ft_u32, kVec> v = load_vec<ft_u32, kVec>(reinterpret_cast<const ft_u32*>(p) + kWords * c);
#pragma unroll
      for (int j = 0; j < kWords; ++j) r.w[kWords * c + j] = v.v[j];
    }
  } else {
#pragma unroll
    for (int i = 0; i < kBytes / 4; ++i)
      r.w[i] = static_cast<ft_u32>(p[4 * i]) | (static_cast<ft_u32>(p[4 * i + 1]) << 8) |
               (static_cast<ft_u32>(p[4 * i + 2]) << 16) | (static_cast<ft_u32>(p[4 * i + 3]) << 24);
  }
  return r;
}

// An integer 0 <= v < 2^23 as a float, exactly: v in the low mantissa bits
// of 2^23, less 2^23 (a logic op and an add, where a conversion instruction
// is a quarter-rate one on NVIDIA). Offset values (v + 32 for a signed
// 6-bit one) subtract the offset with it: still exact.
FT_DEVICE float small_uint_float(ft_u32 v, float offset = 0.0f) {
  return bits_float(0x4B000000u | v) - (8388608.0f + offset);
}

// Scale and min j (0..7) of a Q4_K / Q5_K block's 12 packed scale bytes,
// which are bytes 4..15 of the block's first 16 (after d and dmin): words
// 1..3 of h. j is not a constant (the group), so bytes are taken by shifts
// of fixed words, with no indexing into h (which would put it in memory).
FT_DEVICE void k_scale_min(const ByteRun<16>& h, int j, float* sc, float* mn) {
  const int shift = 8 * (j & 3);
  const ft_u32 b1 = (h.w[1] >> shift) & 0xFFu, b2 = (h.w[2] >> shift) & 0xFFu, b3 = (h.w[3] >> shift) & 0xFFu;
  // j < 4: scale = byte 4 + j, min = byte 8 + j, 6 bits each; j >= 4: the
  // low 4 bits in byte 12 + j - 4, the high 2 in the top of bytes j and j + 4.
  const ft_u32 s = j < 4 ? (b1 & 63u) : ((b3 & 0x0Fu) | ((b1 >> 6) << 4));
  const ft_u32 m = j < 4 ? (b2 & 63u) : ((b3 >> 4) | ((b2 >> 6) << 4));
  *sc = static_cast<float>(s);
  *mn = static_cast<float>(m);
}

// d and dmin of a K-quant block's first 16 bytes.
FT_DEVICE float k_d(const ByteRun<16>& h) { return to_float(f16{static_cast<ft_u16>(h.w[0] & 0xFFFFu)}); }
FT_DEVICE float k_dmin(const ByteRun<16>& h) { return to_float(f16{static_cast<ft_u16>(h.w[0] >> 16)}); }

// decode = unpack(fetch(...)): fetch only loads (a Raw of registers, or for
// the bytewise types the block's address), unpack does the arithmetic, so a
// kernel can fetch one step's groups before it works on the previous step's.
template <typename G>
struct GroupDecode {
  template <bool kAligned = false>
  static FT_DEVICE void decode(const ft_u8* w, long long blocks, long long idx, int sub, float* y) {
    G::unpack(G::template fetch<kAligned>(w, blocks, idx, sub), sub, y);
  }
};

// The types read bytewise in any case: Raw is the block's address.
template <typename G>
struct BytewiseGroup : GroupDecode<G> {
  struct Raw {
    const ft_u8* b;
  };
  template <bool kAligned = false>
  static FT_DEVICE Raw fetch(const ft_u8* w, long long, long long idx, int) { return {w + idx * G::kBlockBytes}; }
};

template <int kType> struct GgmlGroup;
template <> struct GgmlGroup<0> : BytewiseGroup<GgmlGroup<0>> {  // F32
  static constexpr int kBlockBytes = 128, kGroups = 1;
  static FT_DEVICE void unpack(const Raw& r, int, float* y) {
    for (int l = 0; l < 32; ++l) y[l] = *reinterpret_cast<const float*>(r.b + 4 * l);
  }
};
template <> struct GgmlGroup<1> : BytewiseGroup<GgmlGroup<1>> {  // F16
  static constexpr int kBlockBytes = 64, kGroups = 1;
  static FT_DEVICE void unpack(const Raw& r, int, float* y) {
    for (int l = 0; l < 32; ++l) y[l] = load_f16(r.b + 2 * l);
  }
};
template <> struct GgmlGroup<30> : BytewiseGroup<GgmlGroup<30>> {  // BF16
  static constexpr int kBlockBytes = 64, kGroups = 1;
  static FT_DEVICE void unpack(const Raw& r, int, float* y) {
    for (int l = 0; l < 32; ++l) y[l] = to_float(bf16{static_cast<ft_u16>(r.b[2 * l] | (r.b[2 * l + 1] << 8))});
  }
};
template <> struct GgmlGroup<2> : BytewiseGroup<GgmlGroup<2>> {  // Q4_0 {f16 d; u8 qs[16]}
  static constexpr int kBlockBytes = 18, kGroups = 1;
  static FT_DEVICE void unpack(const Raw& r, int, float* y) {
    const float d = load_f16(r.b);
    for (int j = 0; j < 16; ++j) {
      y[j] = d * static_cast<float>((r.b[2 + j] & 0x0F) - 8);
      y[j + 16] = d * static_cast<float>((r.b[2 + j] >> 4) - 8);
    }
  }
};
template <> struct GgmlGroup<8> : GroupDecode<GgmlGroup<8>> {  // Q8_0, device layout: qs [B][32], d [B]
  static constexpr int kBlockBytes = 34, kGroups = 1;
  struct Raw {
    ByteRun<32> q;
    ft_u16 d;
  };
  template <bool kAligned = false>
  static FT_DEVICE Raw fetch(const ft_u8* w, long long blocks, long long idx, int) {
    const ft_u8* d = w + 32 * blocks + 2 * idx;
    return {load_run<32, kAligned>(w + 32 * idx), static_cast<ft_u16>(d[0] | (d[1] << 8))};
  }
  static FT_DEVICE void unpack(const Raw& r, int, float* y) {
    const float d = to_float(f16{r.d});
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const ft_u32 biased = r.q.w[i] ^ 0x80808080u;  // each int8 + 128
#pragma unroll
      for (int b = 0; b < 4; ++b) y[4 * i + b] = d * small_uint_float((biased >> (8 * b)) & 0xFFu, 128.0f);
    }
  }
};
template <> struct GgmlGroup<12> : GroupDecode<GgmlGroup<12>> {  // Q4_K {f16 d, dmin; u8 scales[12]; u8 qs[128]}
  static constexpr int kBlockBytes = 144, kGroups = 8;
  struct Raw {
    ByteRun<16> h;
    ByteRun<32> q;
  };
  template <bool kAligned = false>
  static FT_DEVICE Raw fetch(const ft_u8* w, long long, long long idx, int sub) {
    const ft_u8* b = w + idx * kBlockBytes;
    return {load_run<16, kAligned>(b), load_run<32, kAligned>(b + 16 + 32 * (sub >> 1))};
  }
  static FT_DEVICE void unpack(const Raw& r, int sub, float* y) {
    float sc, mn;
    k_scale_min(r.h, sub, &sc, &mn);
    const float d = k_d(r.h) * sc, m = k_dmin(r.h) * mn;
    const int shift = (sub & 1) * 4;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const ft_u32 nibbles = (r.q.w[i] >> shift) & 0x0F0F0F0Fu;  // this group's 4 bits of bytes 4i..4i+3
#pragma unroll
      for (int b = 0; b < 4; ++b) y[4 * i + b] = d * small_uint_float((nibbles >> (8 * b)) & 0xFFu) - m;
    }
  }
};
template <> struct GgmlGroup<13> : GroupDecode<GgmlGroup<13>> {  // Q5_K {f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}
  static constexpr int kBlockBytes = 176, kGroups = 8;
  struct Raw {
    ByteRun<16> h;
    ByteRun<32> qh, q;
  };
  template <bool kAligned = false>
  static FT_DEVICE Raw fetch(const ft_u8* w, long long, long long idx, int sub) {
    const ft_u8* b = w + idx * kBlockBytes;
    return {load_run<16, kAligned>(b), load_run<32, kAligned>(b + 16), load_run<32, kAligned>(b + 48 + 32 * (sub >> 1))};
  }
  static FT_DEVICE void unpack(const Raw& r, int sub, float* y) {
    float sc, mn;
    k_scale_min(r.h, sub, &sc, &mn);
    const float d = k_d(r.h) * sc, m = k_dmin(r.h) * mn;
    const int shift = (sub & 1) * 4;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      // Bytes 4i..4i+3: 4 low bits from qs, the fifth from bit `sub` of qh.
      const ft_u32 v = ((r.q.w[i] >> shift) & 0x0F0F0F0Fu) | (((r.qh.w[i] >> sub) & 0x01010101u) << 4);
#pragma unroll
      for (int b = 0; b < 4; ++b) y[4 * i + b] = d * small_uint_float((v >> (8 * b)) & 0xFFu) - m;
    }
  }
};
// Q6_K, device layout: ql [B][8][16], qh [B][8][8], scales [B][16], d [B].
// Group `sub` is y[l + 32 i] of half h (l = 0..31, sub = 4h + i): element l
// is in part p = 4h + l / 8 at e = l % 8: its ql byte is run (i & 1) of the
// part's ql (high nibble for i >= 2), its qh byte qh[p][e] (bits 2i, 2i + 1),
// its scale scales[4 (2h + l / 16) + i].
template <> struct GgmlGroup<14> : GroupDecode<GgmlGroup<14>> {
  static constexpr int kBlockBytes = 210, kGroups = 8;
  struct Raw {
    ByteRun<32> qh;
    ByteRun<8> lo[4];  // the ql run of parts 4h .. 4h + 3
    ft_u16 d;
    ft_i8 sc[2];       // the scales of l < 16 and l >= 16
  };
  template <bool kAligned = false>
  static FT_DEVICE Raw fetch(const ft_u8* w, long long blocks, long long idx, int sub) {
    const int h = sub >> 2, i = sub & 3;
    const ft_u8* ql = w + 128 * idx + 64 * h + 8 * (i & 1);
    const ft_i8* sc = reinterpret_cast<const ft_i8*>(w + 192 * blocks + 16 * idx) + 8 * h + i;
    const ft_u8* d = w + 208 * blocks + 2 * idx;
    Raw r;
    r.qh = load_run<32, kAligned>(w + 128 * blocks + 64 * idx + 32 * h);
#pragma unroll
    for (int p = 0; p < 4; ++p) r.lo[p] = load_run<8, kAligned>(ql + 16 * p);
    r.d = static_cast<ft_u16>(d[0] | (d[1] << 8));
    r.sc[0] = sc[0];
    r.sc[1] = sc[4];
    return r;
  }
  static FT_DEVICE void unpack(const Raw& r, int sub, float* y) {
    const int i = sub & 3;
    const float d = to_float(f16{r.d});
    const float ds[2] = {d * static_cast<float>(r.sc[0]), d * static_cast<float>(r.sc[1])};
    const int lshift = (i >> 1) * 4, hshift = 2 * i;
#pragma unroll
    for (int p = 0; p < 4; ++p)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        // Elements l = 8p + 4h .. +3: low 4 bits from the ql run, high 2 from qh.
        const int l = 8 * p + 4 * h;
        const ft_u32 v = ((r.lo[p].w[h] >> lshift) & 0x0F0F0F0Fu) | (((r.qh.w[l >> 2] >> hshift) & 0x03030303u) << 4);
#pragma unroll
        for (int b = 0; b < 4; ++b) y[l + b] = ds[l >> 4] * small_uint_float((v >> (8 * b)) & 0xFFu, 32.0f);
      }
  }
};

}  // namespace ft
