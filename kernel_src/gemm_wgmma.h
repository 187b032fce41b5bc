// Hopper (sm_90a) path of kernel_src/gemm.hip: wgmma.mma_async with both
// operands read from shared memory through matrix descriptors. Included by
// gemm.hip only on targets whose TargetFacts::matrix_core is kWgmma.
//
// Layout: the A (x) and B (W) tiles are K-major [rows][32] bf16/f16 = 64-byte
// rows, staged by cp.async with gemm.hip's tile_offset<32> swizzle, which is
// exactly the hardware's 64-byte swizzle (16-byte chunk c of row r at
// c ^ ((r >> 1) & 3): address bits [4,6) ^= bits [7,9)). A descriptor names
// an 8-row x 64-byte atom stack: stride 512 bytes between 8-row groups, the
// k16 half of the row selected by a +32-byte start offset. Buffers are
// 1024-byte aligned so the swizzle phase matches the absolute address.
//
// One warpgroup (4 warps) computes 64 rows x kBN columns with m64nNk16; a
// block of kWarps / 4 warpgroups covers kBM = 64 * kWarps / 4 rows. cp.async
// writes are generic-proxy stores that wgmma reads through the async proxy,
// hence fence.proxy.async before the barrier that publishes a stage.
#pragma once

#if !defined(FT_NVIDIA)
#error "gemm_wgmma.h is NVIDIA-only"
#endif

// Included inside namespace ft, after ft::gemm's helpers (GemmArgs,
// GemmTileShape, chunk_src, cp_async16, smem_addr). The instructions and the
// descriptor are in wgmma.h.
#include "wgmma.h"

template <typename T, int kBN>
FT_DEVICE void wgmma_tile(float (&d)[kBN / 2], ft_u64 da, ft_u64 db) {
  if constexpr (kBN == 128) {
    wgmma_m64n128k16<IsBf16<T>::value>(d, da, db);
  } else {
    static_assert(kBN == 256, "wgmma tiles are 128 or 256 columns wide");
    wgmma_m64n256k16<IsBf16<T>::value>(d, da, db);
  }
}

// Same template parameters as ft::gemm so the catalog and the launcher treat
// both alike; kWarpsN must be 1 (a warpgroup spans the whole kBN).
template <typename T, int kK, int kBM, int kBN, int kBK, int kWarpsM, int kWarpsN, int kStages>
FT_DEVICE void gemm_wgmma(const GemmArgs<T>& a) {
  static_assert(kBK == 32 && kWarpsN == 1 && kWarpsM % 4 == 0 && kBM == 16 * kWarpsM, "wgmma tile shape");
  using Shape = GemmTileShape<T, kK, kBM, kBN, kBK, kWarpsM, kWarpsN, kStages>;
  constexpr int kThreads = Shape::kThreads;
  constexpr int kSteps = kK / kBK;

  __shared__ __attribute__((aligned(1024))) ft_u16 sa[kStages][kBM * kBK];
  __shared__ __attribute__((aligned(1024))) ft_u16 sb[kStages][kBN * kBK];

  const int m0 = block_x() * kBM, n0 = block_y() * kBN;
  const int wg = thread_x() / 128;
  float acc[kBN / 2];
#pragma unroll
  for (int i = 0; i < kBN / 2; ++i) acc[i] = 0.0f;

  auto issue = [&](int kt) {
    if (kt < kSteps) {
      const int stage = kt % kStages;
#pragma unroll
      for (int i = 0; i < Shape::kPerThreadA; ++i) {
        int off;
        const ft_u16* src = chunk_src<T, kK, kBK, Shape::kChunksA, Shape::kPerThreadA, kThreads>(a.x, m0, a.m, kt, i, &off);
        cp_async16(sa[stage] + off, src);
      }
#pragma unroll
      for (int i = 0; i < Shape::kPerThreadB; ++i) {
        int off;
        const ft_u16* src = chunk_src<T, kK, kBK, Shape::kChunksB, Shape::kPerThreadB, kThreads>(a.w, n0, a.n, kt, i, &off);
        cp_async16(sb[stage] + off, src);
      }
    }
    cp_async_commit();
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) issue(s);
  for (int kt = 0; kt < kSteps; ++kt) {
    cp_async_wait<kStages - 2>();
    fence_proxy_async();
    sync_threads();  // stage kt visible; every warpgroup finished reading stage kt-1 (waited below)
    issue(kt + kStages - 1);
    const int stage = kt % kStages;
    const ft_u32 a_base = smem_addr(sa[stage]) + wg * 64 * kBK * 2;
    const ft_u32 b_base = smem_addr(sb[stage]);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) wgmma_tile<T, kBN>(acc, wgmma_desc_k64(a_base + kk * 2), wgmma_desc_k64(b_base + kk * 2));
    wgmma_commit_wait();
  }

  // Accumulator i of warp w: n8 tile i / 4, row 16 w + g (+8 for i % 4 >= 2),
  // columns 2t and 2t + 1 in pairs (g = lane / 4, t = lane % 4).
  const int warp = (thread_x() / 32) % 4, g = lane_id() >> 2, t = lane_id() & 3;
#pragma unroll
  for (int i = 0; i < kBN / 2; i += 2) {
    const int row = m0 + wg * 64 + warp * 16 + g + ((i & 2) << 2);
    const int col = n0 + ((i >> 2) << 3) + 2 * t;
    if (row < a.m && col < a.n) {
      float v0 = acc[i], v1 = acc[i + 1];
      if (a.bias) {
        v0 += to_float(a.bias[col]);
        v1 += to_float(a.bias[col + 1]);
      }
      T pair[2] = {from_float<T>(v0), from_float<T>(v1)};
      *reinterpret_cast<ft_u32*>(a.y + static_cast<long long>(row) * a.n + col) = *reinterpret_cast<const ft_u32*>(pair);
    }
  }
}
