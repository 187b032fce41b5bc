// attention_prefill_wgmma: the Hopper (sm_90a) form of attention_mma.h's
// prefill, for targets whose matrix core is wgmma (included by
// attention_mma.h there only). Same tiles and softmax as the mma.sync
// kernel: one warpgroup, 64 rows x 64-key tiles, K double-buffered and V
// single, online softmax in registers. The products are wgmma.mma_async
// with A from registers and B read by the tensor cores straight from shared
// memory: S = Q K^T (m64n64k16, K K-major) and O += P V (m64n128k16, V
// N-major), so K and V never pass through ldmatrix. Q fragments come from
// one ldmatrix pass, as in the mma.sync kernel.
//
// K and V tiles use wgmma's 64-byte-swizzled layout [head_dim / 32][64
// keys][32] (wgmma.h): a 32-column block of 64 keys is 4 KiB, 16-byte chunk c
// of key r sits at c ^ ((r >> 1) & 3). Read with keys as rows it is K-major K;
// read with keys as the K dimension it is N-major V (column blocks LBO = 4 KiB
// apart, 8-key groups SBO = 512 bytes apart, a 16-key step = 1 KiB).
#pragma once

#if !defined(FT_NVIDIA) || !defined(FT_MATRIX_CORE_WGMMA)
#error "attention_wgmma.h is for wgmma targets only"
#endif

namespace ft {

#include "wgmma.h"

// Element offset of 16-byte chunk c of key r in a wgmma K/V tile of kKeys keys.
template <int kKeys>
FT_DEVICE int wgmma_kv_offset(int r, int c) {
  return (c >> 2) * kKeys * 32 + r * 32 + (((c & 3) ^ ((r >> 1) & 3)) << 3);
}

template <typename T, int kHeadDim, int kGroup, int kBlockSize>
FT_DEVICE void attention_prefill_wgmma(const PrefillArgs<T>& a) {
  constexpr int kRows = 64, kKeys = 64, kThreads = 128;
  constexpr int kDSteps = kHeadDim / 16;        // k-steps of S = Q K^T
  constexpr unsigned kColBlock = kKeys * 64;    // bytes of one 32-column block
  constexpr bool kBf16 = MmaType<T>::kBf16;
  // head_dim 64 compiles but failed op_check on the H200 (S, not PV: a
  // 128-byte-swizzled V gave the same error), so the catalog sends it to the
  // mma.sync kernel until that is understood.
  static_assert(kHeadDim == 128, "head_dim 128");
  // buf[0] holds Q (ldmatrix layout) until its fragments are in registers,
  // then alternates with buf[1] as the K double buffer; buf[2] is V.
  __shared__ __attribute__((aligned(1024))) T buf[3][kKeys * kHeadDim];
  T* const sq = buf[0];
  T* const sv = buf[2];

  PrefillTile t;
  if (!prefill_tile<T, kGroup>(a, kRows, &t)) return;
  const int max_pos = t.max_pos, min_pos = t.min_pos;
  const int* table = t.table;

  prefill_q_async<T, kHeadDim, kGroup, kRows, kThreads>(a, t, sq);
  // One commit group per call, empty past the last key, so the waits below
  // can count groups.
  auto load_kv = [&](T* dst, const T* cache, int k0) {
    if (k0 > max_pos) return cp_async_commit();
    prefill_kv_async<T, kHeadDim, kBlockSize, kKeys, kThreads>(dst, cache, k0, max_pos, table, a.n_kv_heads, t.kvh,
                                                               [](int r, int c) { return wgmma_kv_offset<kKeys>(r, c); });
  };
  load_kv(buf[1], a.k_cache, 0);  // commits Q with it

  PrefillRows rows = prefill_rows<kGroup>(t);
  unsigned qf[kDSteps][4];
  float o[kHeadDim / 2];
#pragma unroll
  for (int i = 0; i < kHeadDim / 2; ++i) o[i] = 0.0f;

  cp_async_wait<0>();
  fence_proxy_async();  // K[0] is read by wgmma
  sync_threads();
  prefill_q_frags<kHeadDim>(sq, qf);
  sync_threads();  // Q is in registers: buf[0] is free

  // Pipeline: the end of tile t-1 issues V[t], then K[t+1] (into K[t-1]'s
  // buffer). Tile t waits for K[t] before S (V[t] and K[t+1] may still be in
  // flight) and for V[t] before PV (K[t+1] may still be). Issuing both loads
  // after PV, where only O and Q are live, keeps the address arithmetic out
  // of the PV and softmax register peaks.
  load_kv(sv, a.v_cache, 0);
  load_kv(buf[0], a.k_cache, kKeys);
  const unsigned v_base = smem_addr(sv);
  for (int k0 = 0, it = 0; k0 <= max_pos; k0 += kKeys, ++it) {
    const unsigned k_base = smem_addr(buf[(it & 1) ^ 1]);
    cp_async_wait<2>();
    fence_proxy_async();
    sync_threads();  // K[t] landed
    float s[kKeys / 2];
#pragma unroll
    for (int i = 0; i < kKeys / 2; ++i) s[i] = 0.0f;
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kDSteps; ++ks)
      wgmma_m64n64k16_rs<kBf16, false>(s, qf[ks], wgmma_desc_k64(k_base + (ks >> 1) * kColBlock + (ks & 1) * 32));
    wgmma_commit_wait();
    wgmma_pin(s);

    float corr[2];
    prefill_softmax<kKeys / 8, true>(s, k0, k0 + kKeys - 1 > min_pos, a.scale_log2, rows, corr);
    prefill_rescale<true>(o, corr);
    unsigned pa[kKeys / 16][4];
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk) prefill_p_frag<T, kKeys / 8>(s, kk, pa[kk]);

    cp_async_wait<1>();
    fence_proxy_async();
    sync_threads();  // V[t] landed
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk) {
      const ft_u64 dv = wgmma_desc(v_base + kk * 16 * 64, kColBlock, 512);
      wgmma_m64n128k16_rs<kBf16, true>(o, pa[kk], dv);
    }
    wgmma_commit_wait();
    wgmma_pin(o);
    sync_threads();  // every warp is done with K[t] and V[t]
    load_kv(sv, a.v_cache, k0 + kKeys);
    load_kv(buf[(it & 1) ^ 1], a.k_cache, k0 + 2 * kKeys);
  }
  prefill_store<T, kHeadDim, kGroup>(a, t, o, rows);
}

}  // namespace ft
