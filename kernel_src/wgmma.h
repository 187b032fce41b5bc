// Hopper warpgroup MMA (wgmma.mma_async, sm_90a): the instructions, the
// shared-memory matrix descriptor and the fences, shared by the wgmma GEMM
// (gemm_wgmma.h) and the wgmma prefill attention (attention_wgmma.h).
// NVIDIA-only PTX; included inside namespace ft, after smem_addr.
//
// Fragments (PTX ISA, "Register Fragments" of wgmma .m64nNk16): warp w of the
// warpgroup owns rows 16 w .. 16 w + 15 of A (when A is in registers) and of
// the accumulator D, each in the layout of mma.sync m16n8k16: D register i
// is n8 tile i / 4, row g (+8 when i % 4 >= 2), column 2 t + i % 2 (g =
// lane / 4, t = lane % 4); A registers 0-3 hold (g, 2t..), (g + 8, 2t..),
// (g, 2t + 8..), (g + 8, 2t + 8..). So an f32 accumulator pair of n8 tiles
// packed to 16 bits is the A fragment of the next product.
#pragma once

#if !defined(FT_NVIDIA)
#error "wgmma.h is NVIDIA-only"
#endif

// d is the m64nN f32 accumulator, N/2 registers per thread. The asm operand
// lists are spelled out by the macros below (asm strings cannot be built
// from template arguments); the forms differ only in N, type and where A is.
#define FT_WGMMA_D32 \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define FT_WGMMA_D64 FT_WGMMA_D32, \
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
#define FT_WGMMA_R0_31 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define FT_WGMMA_R0_63 FT_WGMMA_R0_31 ", " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define FT_WGMMA_R64_127 \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define FT_WGMMA_REGS32 "{" FT_WGMMA_R0_31 "}"
#define FT_WGMMA_REGS64 "{" FT_WGMMA_R0_63 "}"
#define FT_WGMMA_REGS128 "{" FT_WGMMA_R0_63 ", " FT_WGMMA_R64_127 "}"
#define FT_WGMMA(N, TYPE, REGS, PRED, A, B, OUTS)                                                            \
  asm volatile("{ .reg .pred p; setp.ne.b32 p, " PRED ", 0; "                                                \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " " REGS ", " A ", " B       \
               ", p, 1, 1, 0, 0; }"                                                                         \
               : OUTS                                                                                       \
               : "l"(desc_a), "l"(desc_b), "r"(1))
// A from registers (a[4], 16-bit pairs), B from shared memory; TRANS_B 1
// reads B N-major (16-bit types only).
#define FT_WGMMA_RS(N, TYPE, REGS, A, B, PRED, TRANS_B, ...)                                                  \
  asm volatile("{ .reg .pred p; setp.ne.b32 p, " PRED ", 0; "                                                \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " " REGS ", " A ", " B       \
               ", p, 1, 1, " #TRANS_B "; }"                                                                 \
               : __VA_ARGS__                                                                                \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1))
// The outputs come last, as __VA_ARGS__: expanded, they are a comma list.
#define FT_WGMMA_RS_TYPES(N, REGS, A, B, PRED, ...)                                             \
  if constexpr (kBf16 && kTransB) FT_WGMMA_RS(N, "bf16", REGS, A, B, PRED, 1, __VA_ARGS__); \
  else if constexpr (kBf16) FT_WGMMA_RS(N, "bf16", REGS, A, B, PRED, 0, __VA_ARGS__);       \
  else if constexpr (kTransB) FT_WGMMA_RS(N, "f16", REGS, A, B, PRED, 1, __VA_ARGS__);      \
  else FT_WGMMA_RS(N, "f16", REGS, A, B, PRED, 0, __VA_ARGS__)

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

template <bool kBf16, bool kTransB>
FT_DEVICE void wgmma_m64n64k16_rs(float (&d)[32], const ft_u32 (&a)[4], ft_u64 desc_b) {
  FT_WGMMA_RS_TYPES(64, FT_WGMMA_REGS32, "{%32, %33, %34, %35}", "%36", "%37", FT_WGMMA_D32);
}

template <bool kBf16, bool kTransB>
FT_DEVICE void wgmma_m64n128k16_rs(float (&d)[64], const ft_u32 (&a)[4], ft_u64 desc_b) {
  FT_WGMMA_RS_TYPES(128, FT_WGMMA_REGS64, "{%64, %65, %66, %67}", "%68", "%69", FT_WGMMA_D64);
}

// Shared-memory matrix descriptor with the 64-byte swizzle (layout type 2:
// 16-byte chunk c of a 64-byte row r sits at c ^ ((r >> 1) & 3), i.e. address
// bits [4,6) ^= bits [7,9); buffers 1024-byte aligned so the phase matches).
// The canonical layouts (in 16-byte units T, CUTLASS's notation):
//   K-major:  ((8,m),(T,2k)) : ((4T,SBO),(1,T)), 8-row groups SBO apart, LBO
//             unused; a k16 step inside the 64-byte row is a +32-byte start.
//   MN-major: ((T,4,m),(8,k)) : ((1,T,LBO),(4T,SBO)), 32-element column
//             blocks LBO apart, groups of 8 K rows SBO apart.
FT_DEVICE ft_u64 wgmma_desc(ft_u32 smem_byte_addr, ft_u32 lbo, ft_u32 sbo) {
  return static_cast<ft_u64>((smem_byte_addr & 0x3FFFF) >> 4) | (static_cast<ft_u64>((lbo & 0x3FFFF) >> 4) << 16) |
         (static_cast<ft_u64>((sbo & 0x3FFFF) >> 4) << 32) | (2ull << 62);
}
// A K-major [rows][32] tile of 16-bit values (64-byte rows).
FT_DEVICE ft_u64 wgmma_desc_k64(ft_u32 smem_byte_addr) { return wgmma_desc(smem_byte_addr, 16, 512); }

FT_DEVICE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
FT_DEVICE void wgmma_commit_wait() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}
// Generic-proxy shared stores (cp.async, st.shared) before async-proxy reads
// (wgmma): each writer fences, then the barrier publishes.
FT_DEVICE void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
// Pins accumulator registers around an mma_async: the compiler sees them
// read and written here, so no use moves across the wait.
template <int kN>
FT_DEVICE void wgmma_pin(float (&d)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

