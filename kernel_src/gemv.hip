// GEMV (decode matmul): y[m, n] = x[m, K] * W[n, K]^T (+ bias[n]) for a few
// rows of x (m <= kM <= 8). A block owns kRows consecutive rows of W; its
// waves split K (wave w takes steps w, w + waves, ...) with every lane on its
// own slice, and the partial sums meet in LDS. The kM rows of x are processed
// together so every weight byte is read from memory once per launch.
// grid = ceil(n / kRows). Splitting K over the block rather than giving each
// wave its own rows keeps a 4096-row weight at ~30 warps per H200 SM instead
// of ~8 (it is latency that limits a 2-10 us kernel, not issue).
//
// Memory-bound: at m = 1 a 4096 x 4096 bf16 weight is 32 MiB against 16 KiB
// of x and 8 KiB of y, so what matters is bytes in flight and wide coalesced
// loads of W. x is re-read by every wave; it stays in L1/L2.
//
// Dense weights (F32/F16/BF16): 16-byte loads of W, fp32 FMA (an fp path is
// all there is to do: one FMA per weight per x row).
//
// GGUF blocks (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K): the integer dot path for every
// type. Q8_0 and Q6_K come in the device layout of runtime/ops/weight_layout.h
// (fields in planes: one 16-byte load per lane for the quants, where their
// 2-byte aligned GGUF blocks took a run of 2-byte loads); the others as GGUF
// blocks (Q4_K and Q5_K blocks are 16-byte aligned). x comes quantized
// (quant_x.h, like llama.cpp's q8_1 activations): int8 per element, one f32
// scale (amax / 127) and d times the sum of the int8 values per 32 elements,
// written by quantize_x_q8 below (a small kernel before the GEMV, once per
// projection) or by the RMSNorm that produced x. Each
// lane of the GEMV handles a fixed part of a weight block (QuantXxx::elem
// says which elements), unpacks the weights to signed int8 x 4 and
// accumulates with 4-way int8 dot products: dp4a on NVIDIA, v_dot4_i32_iu8
// (sudot4) on gfx11/gfx12, v_dot4_i32_i8 (sdot4) on gfx9, chosen by the
// FT_HAS_* macros the JIT sets from the target's dot flags. Scales stay
// integer until one conversion per 32-element block. Why integer: an fp path
// costs ~3 ops per weight per x row (extract, convert, FMA); the dot path ~1
// op per 4 weights. Why a separate x pass: quantizing x inside the GEMV cost
// every block the whole x again, about half the instructions of the loop.
// The x quantization costs accuracy (int8 with a scale per 32 elements, as
// llama.cpp's q8_1); f32 activations see the same.
#include "activation_ops.h"
#include "quant_x.h"

namespace ft {

template <typename T>
struct GemvArgs {
  const T* x;       // [m, K], or [m, 2K] gate_up rows with XGated
  const ft_u8* w;   // [n] rows of K elements in the weight format
  T* y;             // [m] rows of ldy elements, the first n written
  const T* bias;    // [n] or null
  int n;
  int m;            // rows of x, 1..kM
  int ldy;          // y's row stride (n, or more when weights side by side share y)
  long long wblocks;  // blocks in the weight buffer (the device layout's planes span them all)
  // gemv_quant2 only: a second weight of another type on the same x, its n2
  // outputs in y's columns n.. (bias from bias + n), run by the blocks from
  // `split` on.
  const ft_u8* w2;
  long long wblocks2;
  int n2;
  int split;
};

// ---- The x input ---------------------------------------------------------------
// XPlain: x as given, rows of K elements. XGated<Op>: x = Op(gate) * up read
// from the fused gate_up row [gate (K) | up (K)] and rounded to T, exactly as
// the gated activation kernel would have stored it: the down projection runs
// the activation itself, saving that kernel's launch and round trip.
struct XPlain {
  static constexpr int kRowScale = 1;  // x row stride in units of K
};
template <typename Op>
struct XGated {
  static constexpr int kRowScale = 2;
  using Act = Op;
};

// kN x elements from k on of one x row, as float.
template <typename T, typename XIn, int kN, int kK>
FT_DEVICE void load_x(const T* row, int k, float (&out)[kN]) {
  const Vec<T, kN * sizeof(T)> v = load_vec<T, kN * sizeof(T)>(row + k);
  if constexpr (XIn::kRowScale == 1) {
#pragma unroll
    for (int j = 0; j < kN; ++j) out[j] = to_float(v.v[j]);
  } else {
    const Vec<T, kN * sizeof(T)> u = load_vec<T, kN * sizeof(T)>(row + kK + k);
#pragma unroll
    for (int j = 0; j < kN; ++j) out[j] = to_float(from_float<T>(XIn::Act::apply(to_float(v.v[j])) * to_float(u.v[j])));
  }
}

// ---- Helpers -----------------------------------------------------------------
FT_DEVICE ft_u32 load_u16(const ft_u8* p) { return *reinterpret_cast<const ft_u16*>(p); }
// A 32-bit word at a 2-byte aligned address (Q4_0 blocks are 18 bytes, so
// their fields are only 2-byte aligned).
FT_DEVICE int load_i32_a2(const ft_u8* p) {
  const ft_u16* q = reinterpret_cast<const ft_u16*>(p);
  return static_cast<int>(static_cast<ft_u32>(q[0]) | (static_cast<ft_u32>(q[1]) << 16));
}
FT_DEVICE float half_bits_to_float(ft_u32 bits) { return to_float(f16{static_cast<ft_u16>(bits)}); }

// Per byte: v in [0, 15] -> v - 8 and v in [0, 63] -> v - 32 as int8 (no
// carry crosses a byte: the sums stay below 0x100).
FT_DEVICE int minus8_i8x4(ft_u32 v) { return static_cast<int>((v + 0x78787878u) ^ 0x80808080u); }
FT_DEVICE int minus32_i8x4(ft_u32 v) { return static_cast<int>((v + 0x60606060u) ^ 0x80808080u); }

// ---- Quant traits ------------------------------------------------------------
// kParts lanes share one block; part p covers kInts runs of 4 consecutive
// elements starting at elem(p, i), kXRun of them contiguous from every
// i % kXRun == 0 (x is loaded that many ints at a time). load(w, blocks,
// first, blk, p, raw) issues the loads of part p of block first + blk of the
// tensor at w (of `blocks` blocks; `first` is the row's first block, so the
// 64-bit part of each address is the same every step: Q6_K 127 -> 103
// registers on sm_90, 4096 x 12288 15.8 -> 13.9 us) and nothing else; unpack(raw, p, regs) turns them into
// signed int8 x 4 and scales, once per step and row; dot(regs, x, xd, xs, p)
// returns the part's sum(w * x) from the quantized x ints of those elements
// and the x scales xd and sums xs of the block's 32-element sub-blocks.
// Holding raw words until the loads land keeps what a step has in flight
// small. kPipelineSteps: from how many steps per wave a wave requests its
// next step's weights before the dot of the current one (0: never). Measured
// on the H200 (gemv_bench, m = 1): Q8_0 and Q6_K gain at every shape (they
// wait on loads with idle issue slots: 4096 x 12288 Q6_K 24.2 -> 15.7 us,
// Q8_0 21.3 -> 15.7, LM heads 173 -> 143 and 168 -> 147); Q4_K gains where
// a wave has several steps (4096 x 12288: 14.5 -> 12.5 us) and lost at one
// step per wave with one group per block (LM head 96.9 -> 123 us: the
// second set of registers cost warps); the persistent grid at one step per
// wave (gemv_quant) pipelines across groups instead, which pays. Q5_K
// follows Q4_K (not measured); Q4_0 is not pipelined (not measured).
// kPipelineAlternates: the pipelined loop over several steps per wave runs
// unrolled by two, alternating two sets of raw words, instead of copying
// the next step's words over the current ones. Q4_K 4096 x 12288: 11.2 ->
// 10.1 us (ptxas kept the loads ahead of the dot: 121 registers against
// 86); Q8_0 and Q6_K lose by it (14.4 -> 16.0 and 12.1 -> 12.7 us).

// Q8_0, device layout (qs [B][32], d [B]): 2 lanes x 16 elements, one
// 16-byte load each.
struct QuantQ8_0 {
  static constexpr int kElems = 32, kBytes = 34, kParts = 2, kInts = 4, kXRun = 4;
  static constexpr int kPipelineSteps = 1;
  static constexpr bool kPipelineAlternates = false;
  static FT_DEVICE int elem(int p, int i) { return 16 * p + 4 * i; }
  struct Raw {
    Vec<int, 16> q;
    ft_u32 d;
  };
  struct Regs {
    int q[4];
    float d;
  };
  static FT_DEVICE void load(const ft_u8* w, long long blocks, long long first, int blk, int p, Raw& r) {
    r.q = load_vec<int, 16>(reinterpret_cast<const int*>((w + 32 * first) + (32 * blk + 16 * p)));
    r.d = load_u16((w + 32 * blocks + 2 * first) + 2 * blk);
  }
  static FT_DEVICE void unpack(const Raw& raw, int, Regs& r) {
#pragma unroll
    for (int i = 0; i < 4; ++i) r.q[i] = raw.q.v[i];
    r.d = half_bits_to_float(raw.d);
  }
  static FT_DEVICE float dot(const Regs& r, const int* x, const float* xd, const float*, int) {
    int s = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) s = dot4_i8(r.q[i], x[i], s);
    return r.d * xd[0] * static_cast<float>(s);
  }
};

// Q4_0 {f16 d; u8 qs[16]}: 4 lanes; part p takes qs[4p..4p+3], whose low
// nibbles are elements 4p.. and high nibbles elements 16 + 4p...
struct QuantQ4_0 {
  static constexpr int kElems = 32, kBytes = 18, kParts = 4, kInts = 2, kXRun = 1;
  static constexpr int kPipelineSteps = 0;
  static constexpr bool kPipelineAlternates = false;
  static FT_DEVICE int elem(int p, int i) { return 4 * p + 16 * i; }
  struct Raw {
    ft_u32 q, d;
  };
  struct Regs {
    int q[2];
    float d;
  };
  static FT_DEVICE void load(const ft_u8* w, long long, long long first, int blk, int p, Raw& r) {
    const ft_u8* b = (w + first * kBytes) + blk * kBytes;
    r.d = load_u16(b);
    r.q = static_cast<ft_u32>(load_i32_a2(b + 2 + 4 * p));
  }
  static FT_DEVICE void unpack(const Raw& raw, int, Regs& r) {
    r.q[0] = minus8_i8x4(raw.q & 0x0F0F0F0Fu);
    r.q[1] = minus8_i8x4((raw.q >> 4) & 0x0F0F0F0Fu);
    r.d = half_bits_to_float(raw.d);
  }
  static FT_DEVICE float dot(const Regs& r, const int* x, const float* xd, const float*, int) {
    return r.d * xd[0] * static_cast<float>(dot4_i8(r.q[1], x[1], dot4_i8(r.q[0], x[0], 0)));
  }
};

// Shared by Q4_K and Q5_K: 8 lanes per 256-element block; part p is half
// p % 2 of group g = p / 2 (64 elements: sub-blocks 2g and 2g + 1): its 16
// quant bytes at byte 16 (p % 2) of the group's 32 give ints 0..3 (low
// nibbles, sub-block 2g) and 4..7 (high nibbles, 2g + 1). The block's first
// 16 bytes (d, dmin, the 12 packed scales) are one 16-byte load (blocks are
// 144 and 176 bytes, 16-byte aligned).
FT_DEVICE int k_quant_elem(int p, int i) { return 64 * (p >> 1) + 16 * (p & 1) + 4 * (i & 3) + 32 * (i >> 2); }
struct KQuantRegs {
  int q[8];
  int sc[2];  // scales of sub-blocks 2g and 2g + 1
  int mn;     // the min of sub-block 2g + p % 2 (the mins term is split over the lane pair)
  float d, dmin;
};
// d, dmin and the 6-bit scales and mins of sub-blocks 2g and 2g + 1 from the
// block's head (g < 2: the low 6 bits of bytes 2g.. and 2g + 4..; g >= 2:
// nibbles of bytes 2g + 4.. with the top bits of bytes 2g - 4.. and 2g..).
// Written without a branch on g: half of every 8 lanes take each side, so a
// branch ran both sides in every wave (lane constants: the shifts).
FT_DEVICE void k_quant_scales(const Vec<ft_u32, 16>& head, int p, KQuantRegs& r) {
  r.d = half_bits_to_float(head.v[0] & 0xFFFFu);
  r.dmin = half_bits_to_float(head.v[0] >> 16);
  const int g = p >> 1, sh = 16 * (g & 1);
  const bool low = g < 2;
  const ft_u32 s0 = head.v[1], s1 = head.v[2], s2 = head.v[3];
  const ft_u32 sc = (((low ? s0 : s2) >> sh) & 0x0F0Fu) | ((s0 >> (low ? sh : sh + 2)) & 0x3030u);
  const ft_u32 mn = (((low ? s1 : s2) >> (low ? sh : sh + 4)) & 0x0F0Fu) | ((s1 >> (low ? sh : sh + 2)) & 0x3030u);
  r.sc[0] = static_cast<int>(sc & 0xFFu), r.sc[1] = static_cast<int>(sc >> 8);
  r.mn = static_cast<int>((mn >> (8 * (p & 1))) & 0xFFu);
}
// The part's sum over sub-blocks 2g and 2g + 1 (x scales xd[2g], xd[2g + 1]).
// The mins term, dmin * mn * (sum of x over the sub-block), covers the whole
// sub-block: lane p adds sub-block 2g + p % 2's, so the pair covers both.
// kHigh16: ints 4..7 hold the high nibbles in place (16 x their value, as
// unsigned bytes), dotted with dot4_u8i8 and the sum shifted back once: one
// AND per int instead of a shift and an AND.
template <bool kHigh16 = false>
FT_DEVICE float k_quant_dot(const KQuantRegs& r, const int* x, const float* xd, const float* xs, int p) {
  int s0 = 0, s1 = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    s0 = dot4_i8(r.q[i], x[i], s0);
    s1 = kHigh16 ? dot4_u8i8(r.q[4 + i], x[4 + i], s1) : dot4_i8(r.q[4 + i], x[4 + i], s1);
  }
  if (kHigh16) s1 >>= 4;  // exact: every term is a multiple of 16
  const int j = 2 * (p >> 1);
  return r.d * (static_cast<float>(s0 * r.sc[0]) * xd[j] + static_cast<float>(s1 * r.sc[1]) * xd[j + 1]) -
         r.dmin * static_cast<float>(r.mn) * xs[j + (p & 1)];
}

// Q4_K {f16 d; f16 dmin; u8 scales[12]; u8 qs[128]}: group g's quants are qs[32g..32g+31].
struct QuantQ4_K {
  static constexpr int kElems = 256, kBytes = 144, kParts = 8, kInts = 8, kXRun = 4;
  static constexpr int kPipelineSteps = 2;
  static constexpr bool kPipelineAlternates = true;
  static FT_DEVICE int elem(int p, int i) { return k_quant_elem(p, i); }
  struct Raw {
    Vec<ft_u32, 16> head, qs;
  };
  using Regs = KQuantRegs;
  static FT_DEVICE void load(const ft_u8* w, long long, long long first, int blk, int p, Raw& r) {
    const ft_u32* b = reinterpret_cast<const ft_u32*>((w + first * kBytes) + blk * kBytes);
    r.head = load_vec<ft_u32, 16>(b);
    r.qs = load_vec<ft_u32, 16>(b + 4 + 4 * p);  // byte 16 + 32 (p / 2) + 16 (p % 2)
  }
  static FT_DEVICE void unpack(const Raw& raw, int p, Regs& r) {
    k_quant_scales(raw.head, p, r);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      r.q[i] = static_cast<int>(raw.qs.v[i] & 0x0F0F0F0Fu);
      r.q[4 + i] = static_cast<int>(kDot4U8I8 ? raw.qs.v[i] & 0xF0F0F0F0u : (raw.qs.v[i] >> 4) & 0x0F0F0F0Fu);
    }
  }
  static FT_DEVICE float dot(const Regs& r, const int* x, const float* xd, const float* xs, int p) {
    return k_quant_dot<kDot4U8I8>(r, x, xd, xs, p);
  }
};

// Q5_K {f16 d; f16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}: bit 2g of
// qh[l] is the fifth bit of the low-nibble element, bit 2g + 1 of the high one.
struct QuantQ5_K {
  static constexpr int kElems = 256, kBytes = 176, kParts = 8, kInts = 8, kXRun = 4;
  static constexpr int kPipelineSteps = 2;
  static constexpr bool kPipelineAlternates = true;
  static FT_DEVICE int elem(int p, int i) { return k_quant_elem(p, i); }
  struct Raw {
    Vec<ft_u32, 16> head, qh, qs;
  };
  using Regs = KQuantRegs;
  static FT_DEVICE void load(const ft_u8* w, long long, long long first, int blk, int p, Raw& r) {
    const ft_u32* b = reinterpret_cast<const ft_u32*>((w + first * kBytes) + blk * kBytes);
    r.head = load_vec<ft_u32, 16>(b);
    r.qh = load_vec<ft_u32, 16>(b + 4 + 4 * (p & 1));  // qh bytes 16 (p % 2)..
    r.qs = load_vec<ft_u32, 16>(b + 12 + 4 * p);       // byte 48 + 32 (p / 2) + 16 (p % 2)
  }
  static FT_DEVICE void unpack(const Raw& raw, int p, Regs& r) {
    k_quant_scales(raw.head, p, r);
    const int g = p >> 1;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const ft_u32 v = raw.qs.v[i], h = raw.qh.v[i];
      r.q[i] = static_cast<int>((v & 0x0F0F0F0Fu) | (((h >> (2 * g)) & 0x01010101u) << 4));
      r.q[4 + i] = static_cast<int>(((v >> 4) & 0x0F0F0F0Fu) | (((h >> (2 * g + 1)) & 0x01010101u) << 4));
    }
  }
  static FT_DEVICE float dot(const Regs& r, const int* x, const float* xd, const float* xs, int p) {
    return k_quant_dot(r, x, xd, xs, p);
  }
};

// Q6_K, device layout (ql [B][8][16], qh [B][8][8], scales [B][16], d [B]):
// 8 lanes per block; part p is half h = p / 4 at l0 = 8 (p % 4): elements
// 128h + 32g + l0 + (0..7) for g = 0..3, ints 2g and 2g + 1. Its 16 ql bytes
// (the low/high nibbles of groups 0/2 in the first 8, 1/3 in the last 8), 8
// qh bytes (bits 2g, 2g + 1 of each) and the 4 scales of groups 0..3 are
// one 16-, one 8- and one 4-byte load.
struct QuantQ6_K {
  static constexpr int kElems = 256, kBytes = 210, kParts = 8, kInts = 8, kXRun = 2;
  static constexpr int kPipelineSteps = 1;
  static constexpr bool kPipelineAlternates = false;
  static FT_DEVICE int elem(int p, int i) { return 128 * (p >> 2) + 32 * (i >> 1) + 8 * (p & 3) + 4 * (i & 1); }
  struct Raw {
    Vec<ft_u32, 16> ql;
    Vec<ft_u32, 8> qh;
    ft_u32 sc;  // 4 int8 scales
    ft_u32 d;
  };
  struct Regs {
    int q[8];
    int sc[4];
    float d;
  };
  static FT_DEVICE void load(const ft_u8* w, long long blocks, long long first, int blk, int p, Raw& r) {
    r.ql = load_vec<ft_u32, 16>(reinterpret_cast<const ft_u32*>((w + 128 * first) + (128 * blk + 16 * p)));
    r.qh = load_vec<ft_u32, 8>(reinterpret_cast<const ft_u32*>((w + 128 * blocks + 64 * first) + (64 * blk + 8 * p)));
    const int h = p >> 2, half_of_32 = (p & 3) >> 1;  // l0 / 16
    r.sc = *reinterpret_cast<const ft_u32*>((w + 192 * blocks + 16 * first) + (16 * blk + 4 * (2 * h + half_of_32)));
    r.d = load_u16((w + 208 * blocks + 2 * first) + 2 * blk);
  }
  static FT_DEVICE void unpack(const Raw& raw, int, Regs& r) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const ft_u32 a = raw.ql.v[j], b = raw.ql.v[2 + j], hb = raw.qh.v[j];
      r.q[0 + j] = minus32_i8x4((a & 0x0F0F0F0Fu) | ((hb << 4) & 0x30303030u));
      r.q[2 + j] = minus32_i8x4((b & 0x0F0F0F0Fu) | ((hb << 2) & 0x30303030u));
      r.q[4 + j] = minus32_i8x4(((a >> 4) & 0x0F0F0F0Fu) | (hb & 0x30303030u));
      r.q[6 + j] = minus32_i8x4(((b >> 4) & 0x0F0F0F0Fu) | ((hb >> 2) & 0x30303030u));
    }
#pragma unroll
    for (int g = 0; g < 4; ++g) r.sc[g] = static_cast<int>(static_cast<signed char>(raw.sc >> (8 * g)));
    r.d = half_bits_to_float(raw.d);
  }
  // Group g lies in the 32-element x block 4h + g of the weight block.
  static FT_DEVICE float dot(const Regs& r, const int* x, const float* xd, const float*, int p) {
    const float* d = xd + 4 * (p >> 2);
    float s = 0.0f;
#pragma unroll
    for (int g = 0; g < 4; ++g)
      s += static_cast<float>(r.sc[g] * dot4_i8(r.q[2 * g + 1], x[2 * g + 1], dot4_i8(r.q[2 * g], x[2 * g], 0))) * d[g];
    return r.d * s;
  }
};

// ---- x quantization: once per launch, before the quantized GEMV ------------------
// x [m, K] (or act(gate) * up with XGated) into the q8 buffer of quant_x.h.
// Each thread takes one 16-byte load of x (8 bf16/f16 or 4 f32 elements), so
// a 32-element block is 4 or 8 neighbouring lanes; grid = ceil(m * K /
// elements per thread / kThreads). (One thread per block left a 12288-wide
// gated row to 3 blocks of 128 threads: 5.7 us on the H200.)
template <typename T>
struct QuantizeXArgs {
  const T* x;
  ft_u8* out;
  int m;
};

template <typename T, int kK, int kThreads, typename XIn = XPlain>
FT_DEVICE void quantize_x_q8(const QuantizeXArgs<T>& a) {
  static_assert(kK % 32 == 0, "K must be a whole number of 32-element blocks");
  constexpr int kPer = 16 / static_cast<int>(sizeof(T));  // elements per 16-byte load
  constexpr int kPerRow = kK / kPer;
  const int i = block_x() * kThreads + thread_x();
  // Threads past the end keep to the shuffles (a block's lanes are all in or all out).
  const bool active = i < a.m * kPerRow;
  const int row = active ? i / kPerRow : 0, k0 = active ? (i % kPerRow) * kPer : 0;
  float v[kPer];
  if (active) {
    load_x<T, XIn, kPer, kK>(a.x + static_cast<long long>(row) * (XIn::kRowScale * kK), k0, v);
  } else {
#pragma unroll
    for (int j = 0; j < kPer; ++j) v[j] = 0.0f;
  }
  quantize_q8_part<kPer>(v, active, a.out, a.m, kK, row, k0);
}

// Sums acc over the block (wave sums, then one LDS slot per wave) and stores
// the kM x kRows outputs of rows row0... A block that stores several row
// groups alternates `parity`: a group's slots are rewritten two groups later,
// after a barrier every thread reaches only once it has read them.
template <typename T, int kM, int kRows, int kWaves>
FT_DEVICE void gemv_store(const GemvArgs<T>& a, int row0, float (&acc)[kM][kRows], int parity = 0) {
  constexpr int kOut = kM * kRows;
  __shared__ float slots[2][kWaves][kOut];
  float (&partial)[kWaves][kOut] = slots[parity];
#pragma unroll
  for (int m = 0; m < kM; ++m)
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const float v = wave_sum(acc[m][r]);
      if (lane_id() == 0) partial[wave_id()][m * kRows + r] = v;
    }
  sync_threads();
  const int i = thread_x();
  if (i >= kOut) return;
  const int m = i / kRows, row = row0 + i % kRows;
  if (m >= a.m || row >= a.n) return;
  float v = a.bias ? to_float(a.bias[row]) : 0.0f;
#pragma unroll
  for (int w = 0; w < kWaves; ++w) v += partial[w][i];
  a.y[static_cast<long long>(m) * a.ldy + row] = from_float<T>(v);
}

// ---- Kernels -------------------------------------------------------------------
// Rows past n and x rows past m are clamped to the last valid one (loads stay
// in bounds, uniform control flow) and never stored.

template <typename T, typename W, int kM, int kK, int kThreads, int kRows, typename XIn = XPlain>
FT_DEVICE void gemv_dense(const GemvArgs<T>& a) {
  constexpr int kPer = 16 / static_cast<int>(sizeof(W));  // weights per 16-byte load
  constexpr int kSpan = FT_WAVE_SIZE * kPer;              // K covered by one wave step
  constexpr int kSteps = (kK + kSpan - 1) / kSpan;
  constexpr int kWaves = kThreads / FT_WAVE_SIZE;
  static_assert(kK % kPer == 0, "K must be a whole number of 16-byte weight vectors");
  static_assert(kM * kRows <= kThreads, "one thread per output in the final sum");
  const int row0 = block_x() * kRows;
  if (row0 >= a.n) return;  // uniform over the block
  const W* w[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    w[r] = reinterpret_cast<const W*>(a.w) + static_cast<long long>(row0 + r < a.n ? row0 + r : a.n - 1) * kK;
  const T* x[kM];
#pragma unroll
  for (int m = 0; m < kM; ++m) x[m] = a.x + static_cast<long long>(m < a.m ? m : a.m - 1) * (XIn::kRowScale * kK);

  float acc[kM][kRows] = {};
  // Unrolled 4 deep for loads in flight; on AMD 2 with the gate (its gate
  // and up loads and exp per element would take gfx1150 below 8 waves per
  // SIMD), 1 for the gated m = 8 kernel (gfx12 spilled 50 VGPRs at 2).
  // NVIDIA has the registers for 4 up to 8 x vectors a step; the gated
  // m = 8 kernel's 16 spilled on sm_90 at 4 deep, so it takes 2.
#if defined(FT_AMD)
  constexpr int kUnroll = XIn::kRowScale == 1 ? 4 : kM > 4 ? 1 : 2;
#else
  constexpr int kUnroll = kM * XIn::kRowScale > 8 ? 2 : 4;
#endif
#pragma unroll kUnroll
  for (int s = wave_id(); s < kSteps; s += kWaves) {
    const int k = s * kSpan + lane_id() * kPer;
    if (kK % kSpan != 0 && k >= kK) continue;
    float wf[kRows][kPer];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const Vec<W, 16> v = load_vec<W, 16>(w[r] + k);
#pragma unroll
      for (int j = 0; j < kPer; ++j) wf[r][j] = to_float(v.v[j]);
    }
#pragma unroll
    for (int m = 0; m < kM; ++m) {
      float xf[kPer];
      load_x<T, XIn, kPer, kK>(x[m], k, xf);
#pragma unroll
      for (int j = 0; j < kPer; ++j)
#pragma unroll
        for (int r = 0; r < kRows; ++r) acc[m][r] += xf[j] * wf[r][j];
    }
  }
  gemv_store<T, kM, kRows, kWaves>(a, row0, acc);
}

// a.x is x quantized for the same m and K (quant_x.h's buffer). Block b of
// the `blocks` running this weight takes the row groups b, b + blocks, ...
// of kRows rows each. Where a wave
// has one step of K per group (K = 4096 Q4_K / Q6_K: 16 blocks, 4 waves of 4)
// the kernel runs persistent: the launcher sizes the grid to what stays
// resident (runtime/ops/matmul.cpp), and a wave's steps run on across its
// groups, the next group's weights in flight while this one's dot products
// and block sum run. Elsewhere the grid has one block per group
// (gemv_steps_per_wave() in jit/catalog.h tells the launcher which).
template <typename T, typename Q, int kM, int kK, int kThreads, int kRows>
FT_DEVICE void gemv_quant_blocks(const GemvArgs<T>& a, int block, int blocks) {
  static_assert(kK % Q::kElems == 0, "K must be a whole number of blocks");
  static_assert(FT_WAVE_SIZE % Q::kParts == 0, "a wave must hold whole blocks");
  constexpr int kBlocks = kK / Q::kElems;
  constexpr int kPerStep = FT_WAVE_SIZE / Q::kParts;  // blocks per wave step
  constexpr int kSteps = (kBlocks + kPerStep - 1) / kPerStep;
  constexpr int kWaves = kThreads / FT_WAVE_SIZE;
  constexpr int kStepsPerWave = (kSteps + kWaves - 1) / kWaves;
  static_assert(kM * kRows <= kThreads, "one thread per output in the final sum");
  const int groups = (a.n + kRows - 1) / kRows;
  if (block >= groups) return;  // uniform over the block (it reads nothing)
  const int part = lane_id() % Q::kParts;
  constexpr int kXBlocks = kK / 32;
  const ft_u8* xq[kM];
  const float *xd[kM], *xs[kM];
  const float* scales = reinterpret_cast<const float*>(reinterpret_cast<const ft_u8*>(a.x) + static_cast<long long>(a.m) * kK);
#pragma unroll
  for (int m = 0; m < kM; ++m) {
    const int mm = m < a.m ? m : a.m - 1;
    xq[m] = reinterpret_cast<const ft_u8*>(a.x) + static_cast<long long>(mm) * kK;
    xd[m] = scales + mm * kXBlocks;
    xs[m] = scales + (a.m + mm) * kXBlocks;
  }

  float acc[kM][kRows] = {};
  constexpr int kSub = Q::kElems / 32;  // x scales per weight block
  using Raw = typename Q::Raw;
  // One step: kRows blocks of weights against the x of kM rows, one x row at
  // a time (so only one row of x is live). A step past the last block (a
  // partial last step) has loaded the last block again and adds nothing.
  auto step = [&](int s, const Raw (&raw)[kRows]) {
    const int blk = s * kPerStep + lane_id() / Q::kParts;
    if (kBlocks % kPerStep != 0 && blk >= kBlocks) return;
    typename Q::Regs wr[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) Q::unpack(raw[r], part, wr[r]);
#pragma unroll
    for (int m = 0; m < kM; ++m) {
      int x[Q::kInts];
      const ft_u8* xb = xq[m] + blk * Q::kElems;
#pragma unroll
      for (int i = 0; i < Q::kInts; i += Q::kXRun) {
        const Vec<int, 4 * Q::kXRun> v = load_vec<int, 4 * Q::kXRun>(reinterpret_cast<const int*>(xb + Q::elem(part, i)));
#pragma unroll
        for (int j = 0; j < Q::kXRun; ++j) x[i + j] = v.v[j];
      }
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[m][r] += Q::dot(wr[r], x, xd[m] + blk * kSub, xs[m] + blk * kSub, part);
    }
  };
  // The first block of each row of group g (rows past n clamped to the last:
  // loaded, never stored), computed once per group so the 64-bit part of
  // each address is the same every step: Q6_K 127 -> 103 registers on sm_90,
  // 4096 x 12288 15.8 -> 13.9 us.
  auto first_blocks = [&](int g, long long (&row_block)[kRows]) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int row = g * kRows + r;
      row_block[r] = static_cast<long long>(row < a.n ? row : a.n - 1) * kBlocks;
    }
  };
  auto load = [&](const long long (&row_block)[kRows], int s, Raw (&wr)[kRows]) {
    int blk = s * kPerStep + lane_id() / Q::kParts;
    if (kBlocks % kPerStep != 0 && blk >= kBlocks) blk = kBlocks - 1;
#pragma unroll
    for (int r = 0; r < kRows; ++r) Q::load(a.w, a.wblocks, row_block[r], blk, part, wr[r]);
  };
  // Either way, the wave's first weights are requested before waiting for
  // the kernel before (no kernel writes weights): under programmatic
  // dependent launch they arrive while that kernel finishes (4096 x 4096
  // Q4_K 5.7 -> 5.1 us, Q8_0 6.2 -> 5.3 on the H200). Everything from x on
  // comes after the wait.
  // Pipelining takes a second set of raw words: NVIDIA only, at m <= 2 (at
  // larger m the x rows take those registers; on gfx1150 it costs waves per
  // SIMD that the tile was chosen for).
#if defined(FT_AMD)
  constexpr bool kCanPipeline = false;
#else
  constexpr bool kCanPipeline = Q::kPipelineSteps > 0 && kM <= 2;
#endif
  long long rows[kRows];
  int g = block;
  first_blocks(g, rows);
  if constexpr (kStepsPerWave == 1) {
    // Persistent, pipelined across groups where it can be: LM head Q6_K 137
    // -> 118 us, Q4_K 106 -> 93 on the H200.
    constexpr bool kPipelined = kCanPipeline;
    const int s = wave_id();
    Raw cur[kRows];
    if (s < kSteps) load(rows, s, cur);
    grid_dependency_begin();
    int parity = 0;
#pragma unroll 1
    while (true) {
      const int next_g = g + blocks;
      const bool more = next_g < groups;
      first_blocks(next_g, rows);
      if constexpr (kPipelined) {
        Raw next[kRows];
        if (more && s < kSteps) load(rows, s, next);
        if (s < kSteps) step(s, cur);
#pragma unroll
        for (int r = 0; r < kRows; ++r) cur[r] = next[r];
      } else {
        if (s < kSteps) step(s, cur);
        if (more && s < kSteps) load(rows, s, cur);
      }
      // Group g's slots are rewritten two groups later, after a barrier
      // every thread reaches only once it has read them.
      gemv_store<T, kM, kRows, kWaves>(a, g * kRows, acc, parity);
      parity ^= 1;
#pragma unroll
      for (int m = 0; m < kM; ++m)
#pragma unroll
        for (int r = 0; r < kRows; ++r) acc[m][r] = 0.0f;
      if (!more) break;
      g = next_g;
    }
  } else {
    // One group per block. From Q::kPipelineSteps steps per wave on, the
    // next step's weights load during this one's dot products.
    constexpr bool kPipelined = kCanPipeline && kStepsPerWave >= Q::kPipelineSteps;
    int s = wave_id();
    Raw cur[kRows];
    if (s < kSteps) load(rows, s, cur);
    grid_dependency_begin();
    if constexpr (kPipelined) {
      Raw next[kRows];
      if constexpr (Q::kPipelineAlternates) {
#pragma unroll 1
        for (; s < kSteps; s += 2 * kWaves) {
          if (s + kWaves < kSteps) load(rows, s + kWaves, next);
          step(s, cur);
          if (s + kWaves >= kSteps) break;
          if (s + 2 * kWaves < kSteps) load(rows, s + 2 * kWaves, cur);
          step(s + kWaves, next);
        }
      } else {
#pragma unroll 1
        for (; s < kSteps; s += kWaves) {
          if (s + kWaves < kSteps) load(rows, s + kWaves, next);
          step(s, cur);
#pragma unroll
          for (int r = 0; r < kRows; ++r) cur[r] = next[r];
        }
      }
    } else {
#pragma unroll 1
      for (; s < kSteps; s += kWaves) {
        step(s, cur);
        if (s + kWaves < kSteps) load(rows, s + kWaves, cur);
      }
    }
    gemv_store<T, kM, kRows, kWaves>(a, g * kRows, acc);
  }
}

template <typename T, typename Q, int kM, int kK, int kThreads, int kRows>
FT_DEVICE void gemv_quant(const GemvArgs<T>& a) {
  gemv_quant_blocks<T, Q, kM, kK, kThreads, kRows>(a, block_x(), grid_x());
}

// Two quantized weights of different types side by side on one x (Q4_K_M's
// q|k and its Q6_K v) in one launch: blocks [0, split) run the first, the
// rest the second, each as gemv_quant would. Its blocks run beside the
// first weight's instead of a second kernel after it.
template <typename T, typename Q, typename Q2, int kM, int kK, int kThreads, int kRows>
FT_DEVICE void gemv_quant2(const GemvArgs<T>& a) {
  if (block_x() < a.split) {
    gemv_quant_blocks<T, Q, kM, kK, kThreads, kRows>(a, block_x(), a.split);
  } else {
    GemvArgs<T> b = a;
    b.w = a.w2;
    b.n = a.n2;
    b.wblocks = a.wblocks2;
    b.y = a.y + a.n;
    b.bias = a.bias ? a.bias + a.n : nullptr;
    gemv_quant_blocks<T, Q2, kM, kK, kThreads, kRows>(b, block_x() - a.split, grid_x() - a.split);
  }
}

}  // namespace ft
