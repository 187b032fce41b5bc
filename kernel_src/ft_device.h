// ft_device.h: the portable device prelude. Kernel sources include this and no
// HIP or CUDA header, so the same .hip file compiles under hipRTC,
// `clang++ -x hip -nogpuinc -nogpulib` and NVRTC. The JIT defines exactly one
// of FT_AMD / FT_NVIDIA and FT_WAVE_SIZE from the target table.
//
// AMD code uses clang builtins only. NVIDIA PTX text appears only inside
// FT_NVIDIA branches: an AMD compile that saw PTX would fail much later with a
// misleading register-allocation error.
//
// FT_HOST (tests only, never the JIT): the kernels' portable code compiled as
// host C++ and run by tests/kernel_host's emulator, lanes as cooperative
// fibers, so a kernel's indexing and lane exchanges are checked against the
// CPU references without a GPU. Only kernels free of inline PTX and vendor
// builtins outside this prelude build that way.
#pragma once

#if defined(FT_AMD) + defined(FT_NVIDIA) + defined(FT_HOST) != 1
#error "exactly one of FT_AMD and FT_NVIDIA must be defined (the JIT sets it from the target table; FT_HOST is for tests)"
#endif
#ifndef FT_WAVE_SIZE
#error "FT_WAVE_SIZE must be defined (the JIT sets it from the target table)"
#endif

typedef unsigned char ft_u8;
typedef unsigned short ft_u16;
typedef unsigned int ft_u32;
typedef unsigned long long ft_u64;
typedef signed char ft_i8;

// ---- Function and variable qualifiers ---------------------------------------
#if defined(FT_AMD)
// hipRTC predefines these; plain clang with -nogpuinc does not.
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __shared__
#define __shared__ __attribute__((shared))
#endif
#define FT_LAUNCH_BOUNDS(threads) __attribute__((amdgpu_flat_work_group_size(1, threads)))
// AMD: the block size only (a minimum occupancy there is waves per SIMD, a
// different bound that no spec asks for yet).
#define FT_LAUNCH_BOUNDS_MIN(threads, blocks) FT_LAUNCH_BOUNDS(threads)
#else
#define FT_LAUNCH_BOUNDS(threads) __launch_bounds__(threads)
// `blocks` blocks of `threads` resident per SM: ptxas keeps registers within that.
#define FT_LAUNCH_BOUNDS_MIN(threads, blocks) __launch_bounds__(threads, blocks)
#endif

#if defined(FT_HOST)
#define __global__
#define __device__
#define __shared__ static  // blocks run one after another: a static is the block's
#undef FT_LAUNCH_BOUNDS
#undef FT_LAUNCH_BOUNDS_MIN
#define FT_LAUNCH_BOUNDS(threads)
#define FT_LAUNCH_BOUNDS_MIN(threads, blocks)
#include <cmath>
// The emulator's side (tests/kernel_host/simt.cpp).
namespace ft::host {
int thread_x();
int block(int axis);
int grid_x();
void barrier();                                   // every live lane of the block
float shfl_xor(float v, int mask, int width);    // within aligned groups of `width` lanes
int atomic_add(int* p, int v);
}  // namespace ft::host
inline void __sincosf(float x, float* s, float* c) {
  *s = sinf(x);
  *c = cosf(x);
}
#define __forceinline__ inline
#endif

#define FT_DEVICE __device__ __forceinline__
#ifndef __forceinline__
#define __forceinline__ inline __attribute__((always_inline))
#endif

namespace ft {

// ---- Thread and block ids ----------------------------------------------------
#if defined(FT_AMD)
FT_DEVICE int thread_x() { return __builtin_amdgcn_workitem_id_x(); }
FT_DEVICE int block_x() { return __builtin_amdgcn_workgroup_id_x(); }
FT_DEVICE int block_y() { return __builtin_amdgcn_workgroup_id_y(); }
FT_DEVICE int block_z() { return __builtin_amdgcn_workgroup_id_z(); }
// Blocks in x: the dispatch's grid size is in work-items (whole blocks here).
FT_DEVICE int grid_x() { return __builtin_amdgcn_grid_size_x() / __builtin_amdgcn_workgroup_size_x(); }
FT_DEVICE void sync_threads() {
  // The fences make LDS writes before the barrier visible after it.
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
#elif defined(FT_HOST)
FT_DEVICE int thread_x() { return host::thread_x(); }
FT_DEVICE int block_x() { return host::block(0); }
FT_DEVICE int block_y() { return host::block(1); }
FT_DEVICE int block_z() { return host::block(2); }
FT_DEVICE int grid_x() { return host::grid_x(); }
FT_DEVICE void sync_threads() { host::barrier(); }
#else
FT_DEVICE int thread_x() { return threadIdx.x; }
FT_DEVICE int block_x() { return blockIdx.x; }
FT_DEVICE int block_y() { return blockIdx.y; }
FT_DEVICE int block_z() { return blockIdx.z; }
FT_DEVICE int grid_x() { return gridDim.x; }
FT_DEVICE void sync_threads() { __syncthreads(); }
#endif

// Programmatic dependent launch (sm_90 and later): a kernel launched with the
// programmatic stream serialization attribute may be scheduled while the one
// before it is still running. Every kernel entry (jit/kernel_spec.cpp's
// wrapper) first waits here until the previous grid has finished and its
// writes are visible, then lets the next grid begin launching: launch and
// block scheduling overlap the previous kernel's tail, and memory order is
// exactly that of plain stream order. Without the attribute both are no-ops.
// A kernel whose spec waits itself calls the two halves where it chooses:
// the wait before its first read of anything an earlier kernel writes, and
// the launch of its dependents anywhere (they still wait for this grid to
// finish before reading what it writes; launching them earlier only lets
// their own pre-wait loads start sooner).
FT_DEVICE void grid_dependency_wait() {
#if defined(FT_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");  // FT_NVIDIA only
#endif
}
FT_DEVICE void grid_dependents_launch() {
#if defined(FT_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");  // FT_NVIDIA only
#endif
}
FT_DEVICE void grid_dependency_begin() {
  grid_dependency_wait();
  grid_dependents_launch();
}

// Asks for the 128-byte line at p to be brought into L2: a hint, with no
// register and nothing returned. NVIDIA only; elsewhere nothing.
FT_DEVICE void prefetch_l2(const void* p) {
#if defined(FT_NVIDIA)
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));  // FT_NVIDIA only
#else
  (void)p;
#endif
}

FT_DEVICE int lane_id() { return thread_x() & (FT_WAVE_SIZE - 1); }
FT_DEVICE int wave_id() { return thread_x() / FT_WAVE_SIZE; }

// ---- Bit casts -----------------------------------------------------------------
#if defined(FT_AMD) || defined(FT_HOST)
FT_DEVICE ft_u32 float_bits(float f) { return __builtin_bit_cast(ft_u32, f); }
FT_DEVICE float bits_float(ft_u32 u) { return __builtin_bit_cast(float, u); }
#else
FT_DEVICE ft_u32 float_bits(float f) { return __float_as_uint(f); }
FT_DEVICE float bits_float(ft_u32 u) { return __uint_as_float(u); }
#endif

// ---- Storage types: bf16 and f16 as 16-bit payloads ---------------------------
// Kernels compute in f32 and store 16-bit values; conversion happens at the
// load and store edges only.
struct bf16 { ft_u16 bits; };
struct f16 { ft_u16 bits; };

FT_DEVICE float to_float(float v) { return v; }
FT_DEVICE float to_float(bf16 v) { return bits_float(static_cast<ft_u32>(v.bits) << 16); }
FT_DEVICE float to_float(f16 v) {
#if defined(FT_AMD) || defined(FT_HOST)
  return static_cast<float>(__builtin_bit_cast(_Float16, v.bits));
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));  // FT_NVIDIA only
  return f;
#endif
}

template <typename T> FT_DEVICE T from_float(float v);
template <> FT_DEVICE float from_float<float>(float v) { return v; }
template <> FT_DEVICE bf16 from_float<bf16>(float v) {
  // Round to nearest even; NaN stays a quiet NaN.
  // A select, not a branch: kernels convert whole tiles of values.
  const ft_u32 u = float_bits(v);
  const ft_u32 rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const ft_u32 quiet = (u >> 16) | 0x40u;
  return bf16{static_cast<ft_u16>((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded)};
}
template <> FT_DEVICE f16 from_float<f16>(float v) {
#if defined(FT_AMD) || defined(FT_HOST)
  return f16{__builtin_bit_cast(ft_u16, static_cast<_Float16>(v))};
#else
  ft_u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));  // FT_NVIDIA only
  return f16{h};
#endif
}

// Two floats rounded to T in one 32-bit word, lo in the low half: one
// instruction on NVIDIA (sm_80 and later; a NaN becomes the canonical one),
// two conversions elsewhere.
template <typename T> FT_DEVICE ft_u32 pack_pair(float lo, float hi);
template <> FT_DEVICE ft_u32 pack_pair<bf16>(float lo, float hi) {
#if defined(FT_NVIDIA)
  ft_u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));  // FT_NVIDIA only
  return r;
#else
  return static_cast<ft_u32>(from_float<bf16>(lo).bits) | (static_cast<ft_u32>(from_float<bf16>(hi).bits) << 16);
#endif
}
template <> FT_DEVICE ft_u32 pack_pair<f16>(float lo, float hi) {
#if defined(FT_NVIDIA)
  ft_u32 r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));  // FT_NVIDIA only
  return r;
#else
  return static_cast<ft_u32>(from_float<f16>(lo).bits) | (static_cast<ft_u32>(from_float<f16>(hi).bits) << 16);
#endif
}

// ---- Fast math --------------------------------------------------------------
FT_DEVICE float fast_exp2(float x) {
#if defined(FT_AMD)
#if __has_builtin(__builtin_amdgcn_exp2f)
  return __builtin_amdgcn_exp2f(x);  // v_exp_f32
#else
  return __builtin_exp2f(x);
#endif
#elif defined(FT_HOST)
  return exp2f(x);
#else
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));  // FT_NVIDIA only
  return y;
#endif
}

FT_DEVICE float fast_rcp(float x) {
#if defined(FT_AMD)
  return __builtin_amdgcn_rcpf(x);  // v_rcp_f32
#elif defined(FT_HOST)
  return 1.0f / x;
#else
  return __frcp_rn(x);
#endif
}

FT_DEVICE float fast_rsqrt(float x) {
#if defined(FT_AMD)
  return __builtin_amdgcn_rsqf(x);  // v_rsq_f32
#elif defined(FT_HOST)
  return 1.0f / sqrtf(x);
#else
  return rsqrtf(x);
#endif
}

FT_DEVICE float fast_exp(float x) { return fast_exp2(x * 1.4426950408889634f); }

FT_DEVICE float fast_tanh(float x) {
#if defined(FT_NVIDIA)
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));  // FT_NVIDIA only
  return y;
#else
  // tanh(x) = 1 - 2 / (exp(2x) + 1); saturates cleanly at +-1 for large |x|.
  return 1.0f - 2.0f * fast_rcp(fast_exp2(x * 2.8853900817779268f) + 1.0f);
#endif
}

// ---- Wave shuffles and reductions --------------------------------------------
FT_DEVICE float shfl_xor(float v, int mask) {
#if defined(FT_AMD)
  // ds_bpermute addresses lanes in bytes.
  int src = (lane_id() ^ mask) << 2;
  return bits_float(static_cast<ft_u32>(__builtin_amdgcn_ds_bpermute(src, static_cast<int>(float_bits(v)))));
#elif defined(FT_HOST)
  return host::shfl_xor(v, mask, FT_WAVE_SIZE);
#else
  return __shfl_xor_sync(0xffffffffu, v, mask);
#endif
}

// shfl_xor within aligned groups of kWidth lanes (a power of two, at most the
// wave; mask < kWidth): only the caller's group takes part, so the groups of
// one wave may take different branches (on NVIDIA the sync mask names just
// the group's lanes; AMD's lanes run in step and read only their group's).
template <int kWidth>
FT_DEVICE float shfl_xor_in(float v, int mask) {
  static_assert(kWidth >= 1 && kWidth <= FT_WAVE_SIZE && (kWidth & (kWidth - 1)) == 0, "bad shuffle group");
#if defined(FT_AMD)
  return shfl_xor(v, mask);
#elif defined(FT_HOST)
  return host::shfl_xor(v, mask, kWidth);
#else
  const unsigned group = kWidth == 32 ? 0xffffffffu : ((1u << kWidth) - 1u) << (lane_id() & (32 - kWidth));
  return __shfl_xor_sync(group, v, mask, kWidth);
#endif
}

FT_DEVICE float wave_sum(float v) {
#pragma unroll
  for (int mask = FT_WAVE_SIZE / 2; mask > 0; mask >>= 1) v += shfl_xor(v, mask);
  return v;
}

// Sum over the block; every thread gets the result. `scratch` holds one float
// per wave.
template <int kThreads>
FT_DEVICE float block_sum(float v, float* scratch) {
  constexpr int kWaves = (kThreads + FT_WAVE_SIZE - 1) / FT_WAVE_SIZE;
  v = wave_sum(v);
  if constexpr (kWaves == 1) return v;
  if (lane_id() == 0) scratch[wave_id()] = v;
  sync_threads();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < kWaves; ++w) total += scratch[w];
  return total;
}

// ---- Handing work from blocks to the last of them ------------------------------
// A block that arrives at a counter after writing its results to global memory,
// where the last of `expected` arrivals reads all of them (and so no second
// kernel has to). Device-scope release before the count, acquire after it.
#if defined(FT_AMD)
FT_DEVICE void fence_release_device() { __builtin_amdgcn_fence(__ATOMIC_RELEASE, "agent"); }
FT_DEVICE void fence_acquire_device() { __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "agent"); }
FT_DEVICE int atomic_add_device(int* p, int v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
#elif defined(FT_HOST)  // the lanes are fibers of one thread: every step is atomic
FT_DEVICE void fence_release_device() {}
FT_DEVICE void fence_acquire_device() {}
FT_DEVICE int atomic_add_device(int* p, int v) { return host::atomic_add(p, v); }
#else
FT_DEVICE void fence_release_device() { __threadfence(); }
FT_DEVICE void fence_acquire_device() { __threadfence(); }
FT_DEVICE int atomic_add_device(int* p, int v) { return atomicAdd(p, v); }
#endif

// Every thread of the block calls it after its global writes; true in every
// thread of the block that arrived last, which then sees the others' writes.
// That block also sets the counter back to 0, so a counter zeroed once serves
// every later launch (and replay of a captured graph).
FT_DEVICE bool last_block_to_arrive(int* counter, int expected, int* s_flag) {
  fence_release_device();
  sync_threads();
  if (thread_x() == 0) {
    const bool last = atomic_add_device(counter, 1) == expected - 1;
    if (last) *counter = 0;
    *s_flag = last ? 1 : 0;
  }
  sync_threads();
  const bool last = *s_flag != 0;
  if (last) fence_acquire_device();
  return last;
}

// ---- Vector loads ----------------------------------------------------------------
// kBytes-wide aligned chunk of T, loaded and stored as one instruction.
template <typename T, int kBytes>
struct alignas(kBytes) Vec {
  static constexpr int kCount = kBytes / static_cast<int>(sizeof(T));
  T v[kCount];
};

template <typename T, int kBytes>
FT_DEVICE Vec<T, kBytes> load_vec(const T* p) {
  return *reinterpret_cast<const Vec<T, kBytes>*>(p);
}

template <typename T, int kBytes>
FT_DEVICE void store_vec(T* p, const Vec<T, kBytes>& v) {
  *reinterpret_cast<Vec<T, kBytes>*>(p) = v;
}

}  // namespace ft
