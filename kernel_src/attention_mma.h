// attention_prefill_mma: the NVIDIA tensor-core path of attention.hip's
// prefill (included there inside #if FT_NVIDIA only: the PTX below must never
// reach an AMD compile).
//
// FlashAttention-2 shape: 4 warps, 64 rows (16 per warp) x 64 keys per tile,
// mma.sync m16n8k16 with f32 accumulators. S = Q K^T takes K straight from
// LDS with ldmatrix; P stays in registers (an m16n8 accumulator pair is
// exactly an m16k16 A fragment); O += P V takes V with ldmatrix.trans. K and
// V tiles arrive with cp.async, V overlapping the S product and the next K
// overlapping the PV product. LDS rows are 16-byte chunks XOR-swizzled by row
// so the eight rows one ldmatrix reads sit on different banks. LDS: Q, K, V
// tiles of 64 x head_dim T = 48 KiB at head_dim 128.
#pragma once

#if !defined(FT_NVIDIA)
#error "attention_mma.h is NVIDIA-only"
#endif

namespace ft {

#include "ptx_lds.h"

template <typename T> struct MmaType;
template <> struct MmaType<bf16> {
  static constexpr bool kBf16 = true;
  FT_DEVICE static void mma(float c[4], const unsigned a[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  // lo in the low half, hi in the high half.
  FT_DEVICE static unsigned pack(float lo, float hi) { return pack_pair<bf16>(lo, hi); }
};
template <> struct MmaType<f16> {
  static constexpr bool kBf16 = false;
  FT_DEVICE static void mma(float c[4], const unsigned a[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  FT_DEVICE static unsigned pack(float lo, float hi) { return pack_pair<f16>(lo, hi); }
};

// Element offset of (row, 8-element chunk) in a swizzled [rows][kHeadDim] tile.
template <int kHeadDim>
FT_DEVICE int swz(int row, int chunk) {
  return row * kHeadDim + ((chunk ^ (row & 7)) << 3);
}

// The tile's Q rows (PrefillTile::pos order) into a swizzled [kRows][kHeadDim]
// LDS tile; rows past the end are zero-filled. Not committed.
template <typename T, int kHeadDim, int kGroup, int kRows, int kThreads>
FT_DEVICE void prefill_q_async(const PrefillArgs<T>& a, const PrefillTile& t, T* sq) {
  constexpr int kChunks = kHeadDim / 8;
  for (int i = thread_x(); i < kRows * kChunks; i += kThreads) {
    const int r = i / kChunks, c = i % kChunks;
    const bool valid = t.row_base + r < t.rows;
    const int token = t.q0 + (t.row_base + r) / kGroup, head = t.kvh * kGroup + (t.row_base + r) % kGroup;
    const T* src = valid ? a.q + (static_cast<long long>(token) * a.n_heads + head) * kHeadDim + c * 8 : a.q;
    cp_async16(&sq[swz<kHeadDim>(r, c)], src, valid);
  }
}

// This warp's 16 Q rows as m16k16 A fragments, one per 16 columns.
template <int kHeadDim>
FT_DEVICE void prefill_q_frags(const void* sq_tile, unsigned (&qf)[kHeadDim / 16][4]) {
  const auto* sq = static_cast<const unsigned short*>(sq_tile);
  const int lane = lane_id(), r = wave_id() * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
#pragma unroll
  for (int ks = 0; ks < kHeadDim / 16; ++ks) ldmatrix_x4(qf[ks], smem_addr(&sq[swz<kHeadDim>(r, ks * 2 + (lane >> 4))]));
}

// Copies keys [k0, k0 + kKeys) of one KV head into an LDS tile, 16-byte chunk
// c of key r at element offset layout(r, c), zero-filling keys past max_pos,
// and commits the copy group. Thread tid copies chunk tid % kChunks of keys
// r0 + i * kKeyStep (r0 = tid / kChunks). A pass never crosses a KV block
// (kKeyStep divides the block), so the tile needs one block-table lookup per
// KV block, all issued first, and each copy is the block's base plus
// constants: the address arithmetic was most of the kernel's instructions
// (about 30 per copy) when every copy looked its slot up on its own. The
// layout must repeat its swizzle every kKeyStep rows (the wgmma kernel's
// repeats every 8), so pass i lands at a constant offset from pass 0.
template <typename T, int kHeadDim, int kBlockSize, int kKeys, int kThreads, typename Layout>
FT_DEVICE void prefill_kv_async(T* dst, const T* cache, int k0, int max_pos, const int* table, int n_kv_heads, int kvh,
                                Layout layout) {
  constexpr int kChunks = kHeadDim / 8;
  constexpr int kKeyStep = kThreads / kChunks;
  constexpr int kIters = kKeys / kKeyStep;
  // Keys of one block-table entry within the tile: k0 is a multiple of kKeys.
  constexpr int kSpan = kBlockSize < kKeys ? kBlockSize : kKeys;
  constexpr int kEntries = kKeys / kSpan, kPerEntry = kSpan / kKeyStep;
  static_assert(kThreads % kChunks == 0 && kKeys % kKeyStep == 0 && kKeyStep % 8 == 0, "whole rows per pass");
  static_assert(kSpan % kKeyStep == 0 && (kBlockSize % kKeys == 0 || kKeys % kBlockSize == 0), "passes within blocks");
  const int tid = thread_x(), c = tid % kChunks, r0 = tid / kChunks;
  int entry[kEntries];
#pragma unroll
  for (int j = 0; j < kEntries; ++j)
    entry[j] = k0 + j * kSpan <= max_pos ? table[(k0 + j * kSpan) / kBlockSize] : 0;
  const int row_elems = n_kv_heads * kHeadDim;  // one cache slot
  const T* src0 = cache + (r0 * n_kv_heads + kvh) * kHeadDim + c * 8 + (k0 % kBlockSize) * row_elems;
  T* dst0 = dst + layout(r0, c);
  const int last = max_pos - k0 - r0;  // pass i copies a key when i * kKeyStep <= last
#pragma unroll
  for (int j = 0; j < kEntries; ++j) {
    const T* src = src0 + static_cast<long long>(entry[j]) * kBlockSize * row_elems;
#pragma unroll
    for (int u = 0; u < kPerEntry; ++u) {
      const int i = j * kPerEntry + u;
      cp_async16(dst0 + (layout(i * kKeyStep, 0) - layout(0, 0)), src + u * kKeyStep * row_elems,
                 i * kKeyStep <= last);
    }
  }
  cp_async_commit();
}

// prefill_kv_async's job, one block-table lookup per copy (all issued first,
// so their latencies overlap). The mma.sync kernel's form: fewer registers
// stay live across its loop than with the hoisted per-thread offsets above,
// which cost it a block per SM on sm_80 at head_dim 128 (168 -> 172
// registers, 12 -> 8 warps).
template <typename T, int kHeadDim, int kBlockSize, int kKeys, int kThreads, typename Layout>
FT_DEVICE void prefill_kv_async_rows(T* dst, const T* cache, int k0, int max_pos, const int* table, int n_kv_heads, int kvh,
                                Layout layout) {
  constexpr int kChunks = kHeadDim / 8;
  constexpr int kIters = kKeys * kChunks / kThreads;
  static_assert(kKeys * kChunks % kThreads == 0 && kThreads % kChunks == 0, "whole rows per pass");
  const int tid = thread_x(), c = tid % kChunks;
  int slot[kIters];  // cache slots (< 2^31), -1 past max_pos
#pragma unroll
  for (int i = 0; i < kIters; ++i) {
    const int p = k0 + i * (kThreads / kChunks) + tid / kChunks;
    slot[i] = p <= max_pos ? table[p / kBlockSize] * kBlockSize + p % kBlockSize : -1;
  }
#pragma unroll
  for (int i = 0; i < kIters; ++i) {
    const int key = i * (kThreads / kChunks) + tid / kChunks;
    const T* src =
        slot[i] >= 0 ? cache + (static_cast<long long>(slot[i]) * n_kv_heads + kvh) * kHeadDim + c * 8 : cache;
    cp_async16(&dst[layout(key, c)], src, slot[i] >= 0);
  }
  cp_async_commit();
}

// The two accumulator rows a thread holds (g and g + 8 of its warp's 16, g =
// lane / 4) and their online-softmax state. Accumulators are flat m16n8
// tiles: element 4 n + j of tile n is (row g + 8 (j / 2), column 8 n + 2 (lane
// % 4) + j % 2), for mma.sync and for wgmma alike.
struct PrefillRows {
  int pos[2];  // cache position of the row's token, -1 past the end
  float m[2];
  float l[2];  // this thread's share; the lane quad is summed at the end
};
template <int kGroup>
FT_DEVICE PrefillRows prefill_rows(const PrefillTile& t) {
  const int r = wave_id() * 16 + (lane_id() >> 2);
  return {{t.pos<kGroup>(r), t.pos<kGroup>(r + 8)}, {kAttnMinus, kAttnMinus}, {0.0f, 0.0f}};
}

// S (kN n8 tiles of keys k0 ..) -> P: scale, causal mask (only tiles that
// reach past the first row's position), online softmax; returns the factors
// that rescale O.
//
// kLean (the wgmma kernel): fewer instructions per score. The maximum is
// taken of the raw scores and scaled once (scale_log2 > 0), so each score's
// scale and subtraction are one FMA; fmaxf is one FMNMX where a > b ? a : b
// is a compare and a select; and prefill_rescale skips O when no row of the
// warp saw a new maximum. The mma.sync kernel keeps the plain form: its
// registers sit at occupancy cliffs (168 at head_dim 128 on sm_80, 128 at 64
// on sm_90) that these moved it across, and it was not measured with them.
template <int kN, bool kLean>
FT_DEVICE void prefill_softmax(float (&s)[kN * 4], int k0, bool masked, float scale_log2, PrefillRows& rows,
                               float (&corr)[2]) {
  const int c2 = (lane_id() & 3) * 2;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float mx = kAttnMinus, m_new;
    if constexpr (kLean) {
#pragma unroll
      for (int n = 0; n < kN; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          if (masked && k0 + n * 8 + c2 + e > rows.pos[h]) s[4 * n + 2 * h + e] = attn_neg_inf();
          mx = fmaxf(mx, s[4 * n + 2 * h + e]);
        }
      mx = fmaxf(mx, shfl_xor(mx, 1));
      mx = fmaxf(mx, shfl_xor(mx, 2));
      m_new = fmaxf(rows.m[h], mx * scale_log2);
    } else {
#pragma unroll
      for (int n = 0; n < kN; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float v = s[4 * n + 2 * h + e] * scale_log2;
          if (masked && k0 + n * 8 + c2 + e > rows.pos[h]) v = attn_neg_inf();
          s[4 * n + 2 * h + e] = v;
          mx = attn_max(mx, v);
        }
      mx = attn_max(mx, shfl_xor(mx, 1));
      mx = attn_max(mx, shfl_xor(mx, 2));
      m_new = attn_max(rows.m[h], mx);
    }
    corr[h] = fast_exp2(rows.m[h] - m_new);
    rows.m[h] = m_new;
    float sum = 0.0f;
#pragma unroll
    for (int n = 0; n < kN; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float x = s[4 * n + 2 * h + e];
        const float p = fast_exp2(kLean ? fmaf(x, scale_log2, -m_new) : x - m_new);
        s[4 * n + 2 * h + e] = p;
        sum += p;
      }
    rows.l[h] = rows.l[h] * corr[h] + sum;
  }
}

template <bool kLean, int kRegs>
FT_DEVICE void prefill_rescale(float (&o)[kRegs], const float (&corr)[2]) {
  if (kLean && __all_sync(0xffffffffu, corr[0] == 1.0f && corr[1] == 1.0f)) return;
#pragma unroll
  for (int i = 0; i < kRegs; ++i) o[i] *= corr[(i >> 1) & 1];
}

// Keys 16 kk .. 16 kk + 15 of P as an m16k16 A fragment (n8 tiles 2 kk, 2 kk + 1).
template <typename T, int kN>
FT_DEVICE void prefill_p_frag(const float (&p)[kN * 4], int kk, unsigned (&pa)[4]) {
  const float* q = p + 8 * kk;
  pa[0] = MmaType<T>::pack(q[0], q[1]);
  pa[1] = MmaType<T>::pack(q[2], q[3]);
  pa[2] = MmaType<T>::pack(q[4], q[5]);
  pa[3] = MmaType<T>::pack(q[6], q[7]);
}

// out = O / l for this thread's rows that exist.
template <typename T, int kHeadDim, int kGroup>
FT_DEVICE void prefill_store(const PrefillArgs<T>& a, const PrefillTile& t, const float (&o)[kHeadDim / 2],
                             PrefillRows& rows) {
  const int lane = lane_id(), c2 = (lane & 3) * 2;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    rows.l[h] += shfl_xor(rows.l[h], 1);
    rows.l[h] += shfl_xor(rows.l[h], 2);
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = t.row_base + wave_id() * 16 + (lane >> 2) + 8 * h;
    if (r >= t.rows) continue;
    const int token = t.q0 + r / kGroup, head = t.kvh * kGroup + r % kGroup;
    T* dst = a.out + (static_cast<long long>(token) * a.n_heads + head) * kHeadDim + c2;
    const float inv = rows.l[h] > 0.0f ? 1.0f / rows.l[h] : 0.0f;
#pragma unroll
    for (int n = 0; n < kHeadDim / 8; ++n)
      *reinterpret_cast<unsigned*>(dst + n * 8) = MmaType<T>::pack(o[4 * n + 2 * h] * inv, o[4 * n + 2 * h + 1] * inv);
  }
}

template <typename T, int kHeadDim, int kGroup, int kBlockSize>
FT_DEVICE void attention_prefill_mma(const PrefillArgs<T>& a) {
  constexpr int kRows = 64, kKeys = 64, kThreads = 128;
  constexpr int kDSteps = kHeadDim / 16;  // k-steps of S = Q K^T
  constexpr int kONb = kHeadDim / 8;      // n-blocks of O
  static_assert(kHeadDim % 64 == 0 && kHeadDim <= 128, "head_dim 64 or 128");
  static_assert(kRows == kKeys, "the Q tile's buffer becomes a K buffer");
  // buf[0] holds Q until its fragments are in registers, then alternates with
  // buf[1] as the K double buffer; buf[2] is V.
  __shared__ __attribute__((aligned(128))) T buf[3][kKeys * kHeadDim];
  T* const sq = buf[0];
  T* const sv = buf[2];

  PrefillTile t;
  if (!prefill_tile<T, kGroup>(a, kRows, &t)) return;
  const int lane = lane_id();
  const int max_pos = t.max_pos, min_pos = t.min_pos;
  const int* table = t.table;

  prefill_q_async<T, kHeadDim, kGroup, kRows, kThreads>(a, t, sq);
  auto load_kv = [&](T* dst, const T* cache, int k0) {
    prefill_kv_async_rows<T, kHeadDim, kBlockSize, kKeys, kThreads>(dst, cache, k0, max_pos, table, a.n_kv_heads, t.kvh,
                                                               [](int r, int c) { return swz<kHeadDim>(r, c); });
  };
  load_kv(buf[1], a.k_cache, 0);  // commits Q with it

  PrefillRows rows = prefill_rows<kGroup>(t);
  unsigned qf[kDSteps][4];
  float o[kHeadDim / 2];
#pragma unroll
  for (int i = 0; i < kHeadDim / 2; ++i) o[i] = 0.0f;

  cp_async_wait<0>();
  sync_threads();
  prefill_q_frags<kHeadDim>(sq, qf);
  sync_threads();  // Q is in registers: buf[0] is free
  load_kv(sv, a.v_cache, 0);
  if (kKeys <= max_pos) load_kv(buf[0], a.k_cache, kKeys);

  // Pipeline per tile t: K[t] resident, V[t] and K[t+1] in flight. After S,
  // wait for both; K[t+2] then goes into K[t]'s buffer and loads during PV
  // and the next S; V[t+1] loads during the next S.
  // ldmatrix addresses: row r of a swizzled tile holds chunk c at
  // r * kHeadDim + ((c ^ (r & 7)) << 3); the rows this lane addresses all have
  // r & 7 == lane & 7, and chunk = 2 * step + bit, so the XOR splits into a
  // per-lane part and a per-step constant.
  const unsigned k_row = ((lane & 7) + (lane >> 4) * 8) * kHeadDim * 2;
  const unsigned k_x = ((lane >> 3) & 1) ^ (lane & 7);
  const unsigned v_row = ((lane & 7) + ((lane >> 3) & 1) * 8) * kHeadDim * 2;
  const unsigned v_x = (lane >> 4) ^ (lane & 7);
  const unsigned v_base = smem_addr(sv);
  for (int k0 = 0, it = 0; k0 <= max_pos; k0 += kKeys, ++it) {
    const unsigned k_base = smem_addr(buf[(it & 1) ^ 1]) + k_row;
    float s[kKeys / 2];
#pragma unroll
    for (int i = 0; i < kKeys / 2; ++i) s[i] = 0.0f;
#pragma unroll
    for (int ks = 0; ks < kDSteps; ++ks) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        unsigned b[4];
        ldmatrix_x4(b, k_base + j * 16 * kHeadDim * 2 + (((ks * 2) ^ k_x) << 4));
        MmaType<T>::mma(&s[8 * j], qf[ks], b[0], b[1]);
        MmaType<T>::mma(&s[8 * j + 4], qf[ks], b[2], b[3]);
      }
    }
    float corr[2];
    prefill_softmax<kKeys / 8, false>(s, k0, k0 + kKeys - 1 > min_pos, a.scale_log2, rows, corr);
    prefill_rescale<false>(o, corr);

    cp_async_wait<0>();
    sync_threads();  // V[t] and K[t+1] landed; every warp is done with K[t]
    if (k0 + 2 * kKeys <= max_pos) load_kv(buf[(it & 1) ^ 1], a.k_cache, k0 + 2 * kKeys);

#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk) {
      unsigned pa[4];
      prefill_p_frag<T, kKeys / 8>(s, kk, pa);
#pragma unroll
      for (int dj = 0; dj < kONb / 2; ++dj) {
        unsigned b[4];
        ldmatrix_x4_trans(b, v_base + v_row + kk * 16 * kHeadDim * 2 + (((dj * 2) ^ v_x) << 4));
        MmaType<T>::mma(&o[8 * dj], pa, b[0], b[1]);
        MmaType<T>::mma(&o[8 * dj + 4], pa, b[2], b[3]);
      }
    }
    sync_threads();  // every warp is done with V[t]
    if (k0 + kKeys <= max_pos) load_kv(sv, a.v_cache, k0 + kKeys);
  }
  prefill_store<T, kHeadDim, kGroup>(a, t, o, rows);
}

}  // namespace ft

#if defined(FT_MATRIX_CORE_WGMMA)
#include "attention_wgmma.h"
#endif
