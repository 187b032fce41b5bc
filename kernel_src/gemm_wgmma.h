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
// GemmTileShape, chunk_src, cp_async16, smem_addr).

// d is the m64nN f32 accumulator, N/2 registers per thread. The asm operand
// lists are spelled out by the macros below (asm strings cannot be built
// from template arguments); the four instructions differ only in N and type.
#define FT_WGMMA_D64 \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define FT_WGMMA_D128 FT_WGMMA_D64, \
  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
  "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
  "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
  "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
  "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
  "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
  "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define FT_WGMMA_R0_63 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define FT_WGMMA_R64_127 \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define FT_WGMMA_REGS64 "{" FT_WGMMA_R0_63 "}"
#define FT_WGMMA_REGS128 "{" FT_WGMMA_R0_63 ", " FT_WGMMA_R64_127 "}"
#define FT_WGMMA(N, TYPE, REGS, PRED, A, B, OUTS)                                                            \
  asm volatile("{ .reg .pred p; setp.ne.b32 p, " PRED ", 0; "                                                \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " " REGS ", " A ", " B       \
               ", p, 1, 1, 0, 0; }"                                                                         \
               : OUTS                                                                                       \
               : "l"(desc_a), "l"(desc_b), "r"(1))

template <bool kBf16>
FT_DEVICE void wgmma_m64n128k16(float (&d)[64], ft_u64 desc_a, ft_u64 desc_b) {
  if constexpr (kBf16) FT_WGMMA(128, "bf16", FT_WGMMA_REGS64, "%66", "%64", "%65", FT_WGMMA_D64);
  else FT_WGMMA(128, "f16", FT_WGMMA_REGS64, "%66", "%64", "%65", FT_WGMMA_D64);
}

template <bool kBf16>
FT_DEVICE void wgmma_m64n256k16(float (&d)[128], ft_u64 desc_a, ft_u64 desc_b) {
  if constexpr (kBf16) FT_WGMMA(256, "bf16", FT_WGMMA_REGS128, "%130", "%128", "%129", FT_WGMMA_D128);
  else FT_WGMMA(256, "f16", FT_WGMMA_REGS128, "%130", "%128", "%129", FT_WGMMA_D128);
}

// Shared-memory matrix descriptor: start address, leading byte offset
// (unused for swizzled K-major within one atom; 16), stride byte offset 512,
// layout type 2 = 64-byte swizzle.
FT_DEVICE ft_u64 wgmma_desc(ft_u32 smem_byte_addr) {
  return static_cast<ft_u64>((smem_byte_addr & 0x3FFFF) >> 4) | (static_cast<ft_u64>(16 >> 4) << 16) |
         (static_cast<ft_u64>(512 >> 4) << 32) | (2ull << 62);
}

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
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    sync_threads();  // stage kt visible; every warpgroup finished reading stage kt-1 (waited below)
    issue(kt + kStages - 1);
    const int stage = kt % kStages;
    const ft_u32 a_base = smem_addr(sa[stage]) + wg * 64 * kBK * 2;
    const ft_u32 b_base = smem_addr(sb[stage]);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) wgmma_tile<T, kBN>(acc, wgmma_desc(a_base + kk * 2), wgmma_desc(b_base + kk * 2));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
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
