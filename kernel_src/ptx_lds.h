// NVIDIA-only: the PTX both the GEMMs (gemm.hip, gemm_wgmma.h) and the prefill
// attention (attention_mma.h, attention_wgmma.h) use to move data into LDS and
// out of it into mma fragments: shared-window addresses, cp.async copies and
// their groups, ldmatrix. Included inside namespace ft and inside an FT_NVIDIA
// block only: none of it may reach an AMD compile.
#pragma once

#if !defined(FT_NVIDIA)
#error "ptx_lds.h is NVIDIA-only"
#endif

// The 32-bit shared-window address of an LDS pointer.
FT_DEVICE ft_u32 smem_addr(const void* p) {
  unsigned long long a;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return static_cast<ft_u32>(a);
}

// 16 bytes global -> LDS, bypassing L1.
FT_DEVICE void cp_async16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src));
}
// The same, zero-filled when !valid (src is then not read).
FT_DEVICE void cp_async16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(valid ? 16 : 0));
}
FT_DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most kPending of the newest commit groups are in flight.
template <int kPending>
FT_DEVICE void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Four 8x8 b16 matrices; `addr` is a shared-window address (smem_addr).
FT_DEVICE void ldmatrix_x4(ft_u32 r[4], ft_u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
FT_DEVICE void ldmatrix_x4_trans(ft_u32 r[4], ft_u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
