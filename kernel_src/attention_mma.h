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

FT_DEVICE unsigned smem_addr(const void* p) {
  unsigned long long a;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return static_cast<unsigned>(a);
}

// 16 bytes global -> LDS; zero-filled when !valid (src is then not read).
FT_DEVICE void cp_async16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(valid ? 16 : 0));
}
FT_DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
FT_DEVICE void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

// `addr` is a shared-window address (smem_addr), computed once per tile.
FT_DEVICE void ldmatrix_x4(unsigned r[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
FT_DEVICE void ldmatrix_x4_trans(unsigned r[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

template <typename T> struct MmaType;
template <> struct MmaType<bf16> {
  FT_DEVICE static void mma(float c[4], const unsigned a[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  // lo in the low half, hi in the high half.
  FT_DEVICE static unsigned pack(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
  }
};
template <> struct MmaType<f16> {
  FT_DEVICE static void mma(float c[4], const unsigned a[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  FT_DEVICE static unsigned pack(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
  }
};

// Element offset of (row, 8-element chunk) in a swizzled [rows][kHeadDim] tile.
template <int kHeadDim>
FT_DEVICE int swz(int row, int chunk) {
  return row * kHeadDim + ((chunk ^ (row & 7)) << 3);
}

template <typename T, int kHeadDim, int kGroup, int kBlockSize>
FT_DEVICE void attention_prefill_mma(const PrefillArgs<T>& a) {
  constexpr int kRows = 64, kKeys = 64, kThreads = 128;
  constexpr int kChunks = kHeadDim / 8;   // 16-byte chunks per row
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
  const int tid = thread_x(), lane = lane_id(), warp = wave_id();
  const int last = attn_min(t.row_base + kRows, t.rows) - 1;
  const int max_pos = t.ctx - t.q_len + last / kGroup;
  const int min_pos = t.ctx - t.q_len + t.row_base / kGroup;
  const int* table = a.block_tables + static_cast<long long>(t.seq) * a.max_blocks;

  for (int i = tid; i < kRows * kChunks; i += kThreads) {
    const int r = i / kChunks, c = i % kChunks;
    const bool valid = t.row_base + r < t.rows;
    const int token = t.q0 + (t.row_base + r) / kGroup, head = t.kvh * kGroup + (t.row_base + r) % kGroup;
    const T* src = valid ? a.q + (static_cast<long long>(token) * a.n_heads + head) * kHeadDim + c * 8 : a.q;
    cp_async16(&sq[swz<kHeadDim>(r, c)], src, valid);
  }
  // Each thread copies kKvIters 16-byte chunks per tile. The block-table
  // lookups come first, all of them, so their latencies overlap instead of
  // stalling each cp.async in turn.
  constexpr int kKvIters = kKeys * kChunks / kThreads;
  static_assert(kKeys * kChunks % kThreads == 0 && kThreads % kChunks == 0, "whole rows per pass");
  auto load_kv = [&](T* dst, const T* cache, int k0) {
    const int c = tid % kChunks;
    long long off[kKvIters];
#pragma unroll
    for (int i = 0; i < kKvIters; ++i) {
      const int p = k0 + i * (kThreads / kChunks) + tid / kChunks;
      off[i] = p <= max_pos ? static_cast<long long>(table[p / kBlockSize]) * kBlockSize + p % kBlockSize : -1;
    }
#pragma unroll
    for (int i = 0; i < kKvIters; ++i) {
      const int key = i * (kThreads / kChunks) + tid / kChunks;
      const T* src = off[i] >= 0 ? cache + (off[i] * a.n_kv_heads + t.kvh) * kHeadDim + c * 8 : cache;
      cp_async16(&dst[swz<kHeadDim>(key, c)], src, off[i] >= 0);
    }
    cp_async_commit();
  };
  load_kv(buf[1], a.k_cache, 0);  // commits Q with it

  // This thread's rows in the accumulators: g and g + 8 of the warp's 16.
  const int g = lane >> 2, c2 = (lane & 3) * 2;
  int row_pos[2];
  for (int h = 0; h < 2; ++h) row_pos[h] = t.pos<kGroup>(warp * 16 + g + 8 * h);

  unsigned qf[kDSteps][4];
  float o[kONb][4];
  for (int n = 0; n < kONb; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float m[2] = {kAttnMinus, kAttnMinus}, l[2] = {0.0f, 0.0f};

  cp_async_wait_all();
  sync_threads();
  {
    const int r = warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
#pragma unroll
    for (int ks = 0; ks < kDSteps; ++ks) ldmatrix_x4(qf[ks], smem_addr(&sq[swz<kHeadDim>(r, ks * 2 + (lane >> 4))]));
  }
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
    float s[8][4];
#pragma unroll
    for (int n = 0; n < 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
    for (int ks = 0; ks < kDSteps; ++ks) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        unsigned b[4];
        ldmatrix_x4(b, k_base + j * 16 * kHeadDim * 2 + (((ks * 2) ^ k_x) << 4));
        MmaType<T>::mma(s[2 * j], qf[ks], b[0], b[1]);
        MmaType<T>::mma(s[2 * j + 1], qf[ks], b[2], b[3]);
      }
    }
    // Scale, causal mask (only tiles that reach past the first row's position),
    // online softmax over the two rows this thread holds.
    const bool masked = k0 + kKeys - 1 > min_pos;
    float corr[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = kAttnMinus;
#pragma unroll
      for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float v = s[n][2 * h + e] * a.scale_log2;
          if (masked && k0 + n * 8 + c2 + e > row_pos[h]) v = attn_neg_inf();
          s[n][2 * h + e] = v;
          mx = attn_max(mx, v);
        }
      mx = attn_max(mx, shfl_xor(mx, 1));
      mx = attn_max(mx, shfl_xor(mx, 2));
      const float m_new = attn_max(m[h], mx);
      corr[h] = fast_exp2(m[h] - m_new);
      m[h] = m_new;
      float sum = 0.0f;
#pragma unroll
      for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float p = fast_exp2(s[n][2 * h + e] - m_new);
          s[n][2 * h + e] = p;
          sum += p;
        }
      l[h] = l[h] * corr[h] + sum;  // this thread's share; the quad is summed at the end
    }
#pragma unroll
    for (int n = 0; n < kONb; ++n) {
      o[n][0] *= corr[0];
      o[n][1] *= corr[0];
      o[n][2] *= corr[1];
      o[n][3] *= corr[1];
    }

    cp_async_wait_all();
    sync_threads();  // V[t] and K[t+1] landed; every warp is done with K[t]
    if (k0 + 2 * kKeys <= max_pos) load_kv(buf[(it & 1) ^ 1], a.k_cache, k0 + 2 * kKeys);

#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      unsigned pa[4] = {MmaType<T>::pack(s[2 * kk][0], s[2 * kk][1]), MmaType<T>::pack(s[2 * kk][2], s[2 * kk][3]),
                        MmaType<T>::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                        MmaType<T>::pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dj = 0; dj < kONb / 2; ++dj) {
        unsigned b[4];
        ldmatrix_x4_trans(b, v_base + v_row + kk * 16 * kHeadDim * 2 + (((dj * 2) ^ v_x) << 4));
        MmaType<T>::mma(o[2 * dj], pa, b[0], b[1]);
        MmaType<T>::mma(o[2 * dj + 1], pa, b[2], b[3]);
      }
    }
    sync_threads();  // every warp is done with V[t]
    if (k0 + kKeys <= max_pos) load_kv(sv, a.v_cache, k0 + kKeys);
  }

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += shfl_xor(l[h], 1);
    l[h] += shfl_xor(l[h], 2);
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = t.row_base + warp * 16 + g + 8 * h;
    if (r >= t.rows) continue;
    const int token = t.q0 + r / kGroup, head = t.kvh * kGroup + r % kGroup;
    T* dst = a.out + (static_cast<long long>(token) * a.n_heads + head) * kHeadDim + c2;
    const float inv = l[h] > 0.0f ? 1.0f / l[h] : 0.0f;
#pragma unroll
    for (int n = 0; n < kONb; ++n) {
      const unsigned packed = MmaType<T>::pack(o[n][2 * h] * inv, o[n][2 * h + 1] * inv);
      *reinterpret_cast<unsigned*>(dst + n * 8) = packed;
    }
  }
}

}  // namespace ft
