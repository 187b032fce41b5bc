// Prefill GEMM: y[m, n] = x[m, K] * W[n, K]^T (+ bias[n]) on the matrix cores.
//
// Both operands are K-contiguous (x rows and W rows), so the A and B tiles are
// staged identically: [rows][kBK] in LDS, 16-byte chunks XOR-swizzled so that
// eight rows reading the same chunk hit eight different bank groups (ldmatrix
// on NVIDIA reads 8 rows x 16 B per phase; WMMA/MFMA fragment reads do the
// same row-wise). The matrix-core instruction is a policy type chosen by the
// host from TargetFacts::matrix_core (jit/catalog.cpp), one per kind:
//
//   MmaSync     m16n8k16 x2 per 16x16x16 step (sm_80+), ldmatrix.x4 fragments
//   WmmaGfx11   v_wmma 16x16x16, A/B replicated in both half-waves (RDNA3/3.5)
//   WmmaGfx12   v_wmma 16x16x16 gfx12 form, half-waves split K (RDNA4)
//   Mfma32      v_mfma 32x32x8 (CDNA2/3, wave64)
//   (Hopper)    wgmma.mma_async from shared memory: gemm_wgmma.h, its own kernel
//
// Pipeline: NVIDIA copies global->shared with cp.async over kStages buffers
// (one barrier per K step); AMD loads the next tile into registers while the
// current one is multiplied, then stores it to the other LDS buffer.
// Rows of x past m are clamped on load (valid memory, results dropped) and
// masked on store; K is a template constant and a multiple of kBK, n a
// multiple of 32 (checked by the launcher; columns past n are masked too).
//
// Grid: x over M tiles (fastest), y over N tiles, so the blocks in flight
// share one W tile and stream x from L2: W is read from DRAM once.
//
// Also here: gemm_f32 (f32 activations, plain FMA), gemm_dequant (GGUF
// weights expanded to the activation type for the GEMM above), and the
// few-row products against GGUF weights: gemm_q (the weights decoded into
// the matrix-core tile in LDS, every target) and, on NVIDIA, gemm_qr (each
// warp decoding its weight rows straight into mma.sync fragments).
#include "ft_device.h"
#include "ggml_blocks.h"

namespace ft {

template <typename T>
struct GemmArgs {
  const T* x;     // [m, K]
  const T* w;     // [n, K]
  const T* bias;  // [n] or null
  T* y;           // [m, n]
  int m;
  int n;
};

// Element offset of (row, chunk) in a [rows][kBK] tile of 16-bit values.
template <int kBK>
FT_DEVICE int tile_offset(int row, int chunk) {
  constexpr int kChunks = kBK / 8;
  static_assert(kChunks == 2 || kChunks == 4 || kChunks == 8, "kBK must be 16, 32 or 64");
  if constexpr (kChunks == 8) return row * kBK + ((chunk ^ (row & 7)) << 3);
  else if constexpr (kChunks == 4) return row * kBK + ((chunk ^ ((row >> 1) & 3)) << 3);
  else return row * kBK + ((chunk ^ ((row >> 2) & 1)) << 3);
}

template <typename T> struct IsBf16 { static constexpr bool value = false; };
template <> struct IsBf16<bf16> { static constexpr bool value = true; };

// ---- NVIDIA: mma.sync --------------------------------------------------------------
#if defined(FT_NVIDIA)
#include "ptx_lds.h"

struct MmaSync {
  static constexpr int kM = 16, kN = 16, kK = 16;
  struct FragA { ft_u32 r[4]; };
  struct FragB { ft_u32 r[4]; };  // two n8 tiles: r[0..1] and r[2..3]
  struct Acc {
    float c[8];  // c[0..3] n8 tile 0, c[4..7] n8 tile 1
    FT_DEVICE float operator[](int i) const { return c[i]; }
  };
  static constexpr int kAccCount = 8;

  // ldmatrix.x4: lanes 0-15 address rows 0-15 at k0, lanes 16-31 rows 0-15 at k0+8.
  template <int kBK>
  static FT_DEVICE FragA load_a(const ft_u16* s, int row0, int k0) {
    const int l = lane_id();
    FragA f;
    ldmatrix_x4(f.r, smem_addr(s + tile_offset<kBK>(row0 + (l & 15), (k0 >> 3) + (l >> 4))));
    return f;
  }
  // Matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15).
  template <int kBK>
  static FT_DEVICE FragB load_b(const ft_u16* s, int n0, int k0) {
    const int l = lane_id();
    FragB f;
    ldmatrix_x4(f.r, smem_addr(s + tile_offset<kBK>(n0 + (l & 7) + ((l >> 4) << 3), (k0 >> 3) + ((l >> 3) & 1))));
    return f;
  }
  template <typename T>
  static FT_DEVICE void mma(Acc& d, const FragA& a, const FragB& b) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float* c = d.c + 4 * h;
      if constexpr (IsBf16<T>::value)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[2 * h]), "r"(b.r[2 * h + 1]));
      else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[2 * h]), "r"(b.r[2 * h + 1]));
    }
  }
  // c0,c1: (row g, cols 2t, 2t+1); c2,c3: row g + 8; g = lane / 4, t = lane % 4.
  static FT_DEVICE int acc_row(int i) { return (lane_id() >> 2) + ((i & 2) << 2); }
  static FT_DEVICE int acc_col(int i) { return ((i >> 2) << 3) + ((lane_id() & 3) << 1) + (i & 1); }
  static constexpr bool kPairedCols = true;  // elements 2i and 2i+1 are adjacent columns
};
#endif  // FT_NVIDIA

// ---- AMD: WMMA and MFMA ----------------------------------------------------------------
#if defined(FT_AMD)
template <typename T> struct MmaElem { typedef _Float16 type; };
template <> struct MmaElem<bf16> { typedef short type; };

#if defined(FT_MATRIX_CORE_WMMA_GFX11)
// gfx11: lane l holds row (A) / column (B) l % 16 with all 16 k; both
// half-waves carry the same data. D: lane l, element i = (row 2i + l/16, col l%16).
template <typename T>
struct WmmaGfx11 {
  typedef typename MmaElem<T>::type E;
  typedef __attribute__((ext_vector_type(16))) E Frag;
  typedef __attribute__((ext_vector_type(8))) float Acc;
  typedef Frag FragA;
  typedef Frag FragB;
  static constexpr int kM = 16, kN = 16, kK = 16;
  static constexpr int kAccCount = 8;
  static constexpr bool kPairedCols = false;

  template <int kBK>
  static FT_DEVICE Frag load(const ft_u16* s, int row0, int k0) {
    const int row = row0 + (lane_id() & 15);
    typedef __attribute__((ext_vector_type(8))) E V8;
    V8 lo = *reinterpret_cast<const V8*>(s + tile_offset<kBK>(row, k0 >> 3));
    V8 hi = *reinterpret_cast<const V8*>(s + tile_offset<kBK>(row, (k0 >> 3) + 1));
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  }
  template <int kBK> static FT_DEVICE FragA load_a(const ft_u16* s, int r, int k) { return load<kBK>(s, r, k); }
  template <int kBK> static FT_DEVICE FragB load_b(const ft_u16* s, int r, int k) { return load<kBK>(s, r, k); }
  template <typename U>
  static FT_DEVICE void mma(Acc& d, const Frag& a, const Frag& b) {
    if constexpr (IsBf16<T>::value) d = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(a, b, d);
    else d = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, d);
  }
  static FT_DEVICE int acc_row(int i) { return 2 * i + (lane_id() >> 4); }
  static FT_DEVICE int acc_col(int) { return lane_id() & 15; }
};
template <typename T> using MatrixCoreMma = WmmaGfx11<T>;
#endif

#if defined(FT_MATRIX_CORE_WMMA_GFX12)
// gfx12: lane l holds row/column l % 16, k = 8 * (l / 16) + 0..7 (no
// replication). D: lane l, element i = (row 8 * (l / 16) + i, col l % 16).
template <typename T>
struct WmmaGfx12 {
  typedef typename MmaElem<T>::type E;
  typedef __attribute__((ext_vector_type(8))) E Frag;
  typedef __attribute__((ext_vector_type(8))) float Acc;
  typedef Frag FragA;
  typedef Frag FragB;
  static constexpr int kM = 16, kN = 16, kK = 16;
  static constexpr int kAccCount = 8;
  static constexpr bool kPairedCols = false;

  template <int kBK>
  static FT_DEVICE Frag load(const ft_u16* s, int row0, int k0) {
    const int l = lane_id();
    return *reinterpret_cast<const Frag*>(s + tile_offset<kBK>(row0 + (l & 15), (k0 >> 3) + (l >> 4)));
  }
  template <int kBK> static FT_DEVICE FragA load_a(const ft_u16* s, int r, int k) { return load<kBK>(s, r, k); }
  template <int kBK> static FT_DEVICE FragB load_b(const ft_u16* s, int r, int k) { return load<kBK>(s, r, k); }
  template <typename U>
  static FT_DEVICE void mma(Acc& d, const Frag& a, const Frag& b) {
    if constexpr (IsBf16<T>::value) d = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(a, b, d);
    else d = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a, b, d);
  }
  static FT_DEVICE int acc_row(int i) { return ((lane_id() >> 4) << 3) + i; }
  static FT_DEVICE int acc_col(int) { return lane_id() & 15; }
};
template <typename T> using MatrixCoreMma = WmmaGfx12<T>;
#endif

#if defined(FT_MATRIX_CORE_MFMA)
// CDNA 32x32x8: lane l holds row/column l % 32, k = 4 * (l / 32) + 0..3.
// D: lane l, element i = (row 8 * (i / 4) + 4 * (l / 32) + i % 4, col l % 32).
template <typename T>
struct Mfma32 {
  typedef typename MmaElem<T>::type E;
  typedef __attribute__((ext_vector_type(4))) E Frag;
  typedef __attribute__((ext_vector_type(16))) float Acc;
  typedef Frag FragA;
  typedef Frag FragB;
  static constexpr int kM = 32, kN = 32, kK = 8;
  static constexpr int kAccCount = 16;
  static constexpr bool kPairedCols = false;

  template <int kBK>
  static FT_DEVICE Frag load(const ft_u16* s, int row0, int k0) {
    const int l = lane_id();
    const int k = k0 + ((l >> 5) << 2);
    return *reinterpret_cast<const Frag*>(s + tile_offset<kBK>(row0 + (l & 31), k >> 3) + (k & 7));
  }
  template <int kBK> static FT_DEVICE FragA load_a(const ft_u16* s, int r, int k) { return load<kBK>(s, r, k); }
  template <int kBK> static FT_DEVICE FragB load_b(const ft_u16* s, int r, int k) { return load<kBK>(s, r, k); }
  template <typename U>
  static FT_DEVICE void mma(Acc& d, const Frag& a, const Frag& b) {
    if constexpr (IsBf16<T>::value) d = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, d, 0, 0, 0);
    else d = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, d, 0, 0, 0);
  }
  static FT_DEVICE int acc_row(int i) { return ((i >> 2) << 3) + ((lane_id() >> 5) << 2) + (i & 3); }
  static FT_DEVICE int acc_col(int) { return lane_id() & 31; }
};
template <typename T> using MatrixCoreMma = Mfma32<T>;
#endif
#endif  // FT_AMD

#if defined(FT_NVIDIA)
template <typename T> using MatrixCoreMma = MmaSync;
#endif

// ---- The tiled kernel ------------------------------------------------------------------
template <typename T, int kK, int kBM, int kBN, int kBK, int kWarpsM, int kWarpsN, int kStages>
struct GemmTileShape {
  static constexpr int kThreads = kWarpsM * kWarpsN * FT_WAVE_SIZE;
  static constexpr int kChunksA = kBM * kBK / 8;  // 16-byte chunks per A tile
  static constexpr int kChunksB = kBN * kBK / 8;
  static constexpr int kPerThreadA = kChunksA / kThreads;
  static constexpr int kPerThreadB = kChunksB / kThreads;
  static_assert(kChunksA % kThreads == 0 && kChunksB % kThreads == 0, "tile chunks must divide evenly");
  static_assert(kK % kBK == 0, "K must be a multiple of the K tile");
};

// The i-th 16-byte chunk that this thread copies of a tile of kBK-element
// rows (kThreads threads copying): its row and chunk in the tile, and its
// source in row-major `base` (row stride ld elements) from row row0 and
// column col0. Rows past `rows` are clamped: valid addresses, results
// masked on store.
template <int kBK, int kThreads, typename T>
FT_DEVICE const ft_u16* tile_chunk_src(const T* base, long long ld, int row0, int rows, int col0, int i, int* row,
                                       int* ch) {
  const int c = thread_x() + i * kThreads;
  *row = c / (kBK / 8);
  *ch = c % (kBK / 8);
  int grow = row0 + *row;
  grow = grow < rows ? grow : rows - 1;
  return reinterpret_cast<const ft_u16*>(base) + static_cast<long long>(grow) * ld + col0 + *ch * 8;
}

// Copies the A (x) and B (W) chunks of K step `kt` that this thread owns.
template <typename T, int kK, int kBK, int kChunks, int kPerThread, int kThreads>
FT_DEVICE const ft_u16* chunk_src(const T* base, int row0, int rows, int kt, int i, int* dst_offset) {
  int row, ch;
  const ft_u16* src = tile_chunk_src<kBK, kThreads>(base, kK, row0, rows, kt * kBK, i, &row, &ch);
  *dst_offset = tile_offset<kBK>(row, ch);
  return src;
}

template <typename T, int kK, int kBM, int kBN, int kBK, int kWarpsM, int kWarpsN, int kStages>
FT_DEVICE void gemm(const GemmArgs<T>& a) {
  using Mma = MatrixCoreMma<T>;
  using Shape = GemmTileShape<T, kK, kBM, kBN, kBK, kWarpsM, kWarpsN, kStages>;
  constexpr int kThreads = Shape::kThreads;
  constexpr int kWM = kBM / kWarpsM, kWN = kBN / kWarpsN;
  constexpr int kFM = kWM / Mma::kM, kFN = kWN / Mma::kN;
  constexpr int kSteps = kK / kBK;
  static_assert(kWM % Mma::kM == 0 && kWN % Mma::kN == 0 && kBK % Mma::kK == 0, "tile vs instruction shape");

  __shared__ __attribute__((aligned(16))) ft_u16 sa[kStages][kBM * kBK];
  __shared__ __attribute__((aligned(16))) ft_u16 sb[kStages][kBN * kBK];

  const int m0 = block_x() * kBM, n0 = block_y() * kBN;
  const int warp = wave_id();
  const int wm0 = (warp / kWarpsN) * kWM, wn0 = (warp % kWarpsN) * kWN;

  typename Mma::Acc acc[kFM][kFN];
#pragma unroll
  for (int i = 0; i < kFM; ++i)
#pragma unroll
    for (int j = 0; j < kFN; ++j) acc[i][j] = typename Mma::Acc{};

  auto multiply = [&](int stage) {
#pragma unroll
    for (int kk = 0; kk < kBK; kk += Mma::kK) {
      typename Mma::FragA fa[kFM];
      typename Mma::FragB fb[kFN];
#pragma unroll
      for (int i = 0; i < kFM; ++i) fa[i] = Mma::template load_a<kBK>(sa[stage], wm0 + i * Mma::kM, kk);
#pragma unroll
      for (int j = 0; j < kFN; ++j) fb[j] = Mma::template load_b<kBK>(sb[stage], wn0 + j * Mma::kN, kk);
#pragma unroll
      for (int i = 0; i < kFM; ++i)
#pragma unroll
        for (int j = 0; j < kFN; ++j) Mma::template mma<T>(acc[i][j], fa[i], fb[j]);
    }
  };

#if defined(FT_NVIDIA)
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
    cp_async_commit();  // an empty group past the end keeps the wait count uniform
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) issue(s);
  for (int kt = 0; kt < kSteps; ++kt) {
    cp_async_wait<kStages - 2>();
    sync_threads();  // tile kt visible to all; everyone is done with tile kt-1's buffer
    issue(kt + kStages - 1);
    multiply(kt % kStages);
  }
#else
  static_assert(kStages == 2, "the AMD pipeline is register-staged double buffering");
  typedef Vec<ft_u16, 16> Chunk;
  Chunk ra[Shape::kPerThreadA], rb[Shape::kPerThreadB];
  int oa[Shape::kPerThreadA], ob[Shape::kPerThreadB];
  auto load = [&](int kt) {
#pragma unroll
    for (int i = 0; i < Shape::kPerThreadA; ++i)
      ra[i] = load_vec<ft_u16, 16>(chunk_src<T, kK, kBK, Shape::kChunksA, Shape::kPerThreadA, kThreads>(a.x, m0, a.m, kt, i, &oa[i]));
#pragma unroll
    for (int i = 0; i < Shape::kPerThreadB; ++i)
      rb[i] = load_vec<ft_u16, 16>(chunk_src<T, kK, kBK, Shape::kChunksB, Shape::kPerThreadB, kThreads>(a.w, n0, a.n, kt, i, &ob[i]));
  };
  auto store = [&](int stage) {
#pragma unroll
    for (int i = 0; i < Shape::kPerThreadA; ++i) store_vec<ft_u16, 16>(sa[stage] + oa[i], ra[i]);
#pragma unroll
    for (int i = 0; i < Shape::kPerThreadB; ++i) store_vec<ft_u16, 16>(sb[stage] + ob[i], rb[i]);
  };
  load(0);
  store(0);
  sync_threads();
  for (int kt = 0; kt < kSteps; ++kt) {
    if (kt + 1 < kSteps) load(kt + 1);
    multiply(kt & 1);
    if (kt + 1 < kSteps) store((kt + 1) & 1);
    sync_threads();
  }
#endif

  // Epilogue: bias in f32, one rounding to T.
#pragma unroll
  for (int i = 0; i < kFM; ++i) {
#pragma unroll
    for (int j = 0; j < kFN; ++j) {
      const int row0 = m0 + wm0 + i * Mma::kM, col0 = n0 + wn0 + j * Mma::kN;
      if constexpr (Mma::kPairedCols) {
#pragma unroll
        for (int e = 0; e < Mma::kAccCount; e += 2) {
          const int row = row0 + Mma::acc_row(e), col = col0 + Mma::acc_col(e);
          if (row < a.m && col < a.n) {
            float v0 = acc[i][j][e], v1 = acc[i][j][e + 1];
            if (a.bias) {
              v0 += to_float(a.bias[col]);
              v1 += to_float(a.bias[col + 1]);
            }
            T pair[2] = {from_float<T>(v0), from_float<T>(v1)};
            *reinterpret_cast<ft_u32*>(a.y + static_cast<long long>(row) * a.n + col) =
                *reinterpret_cast<const ft_u32*>(pair);
          }
        }
      } else {
#pragma unroll
        for (int e = 0; e < Mma::kAccCount; ++e) {
          const int row = row0 + Mma::acc_row(e), col = col0 + Mma::acc_col(e);
          if (row < a.m && col < a.n) {
            float v = acc[i][j][e];
            if (a.bias) v += to_float(a.bias[col]);
            a.y[static_cast<long long>(row) * a.n + col] = from_float<T>(v);
          }
        }
      }
    }
  }
}

#if defined(FT_NVIDIA) && defined(FT_MATRIX_CORE_WGMMA)
#include "gemm_wgmma.h"
#endif

// ---- f32: plain tiled FMA (no matrix core) --------------------------------------------
// 64x64 tile, 256 threads, 4x4 outputs per thread, K step 16. For f32
// activations only; the 16-bit paths above are the fast ones.
template <int kK>
FT_DEVICE void gemm_f32(const GemmArgs<float>& a) {
  constexpr int kTile = 64, kStep = 16;
  static_assert(kK % kStep == 0, "K must be a multiple of 16");
  __shared__ float sx[kStep][kTile + 4];
  __shared__ float sw[kStep][kTile + 4];
  const int t = thread_x();
  const int m0 = block_x() * kTile, n0 = block_y() * kTile;
  const int tr = (t / 16) * 4, tc = (t % 16) * 4;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < kK; k0 += kStep) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int idx = t + i * 256;  // 1024 = 64 rows x 16 k
      const int r = idx / kStep, k = idx % kStep;
      int xr = m0 + r, wr = n0 + r;
      xr = xr < a.m ? xr : a.m - 1;
      wr = wr < a.n ? wr : a.n - 1;
      sx[k][r] = a.x[static_cast<long long>(xr) * kK + k0 + k];
      sw[k][r] = a.w[static_cast<long long>(wr) * kK + k0 + k];
    }
    sync_threads();
#pragma unroll
    for (int k = 0; k < kStep; ++k) {
      float xv[4], wv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        xv[i] = sx[k][tr + i];
        wv[i] = sw[k][tc + i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += xv[i] * wv[j];
    }
    sync_threads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int row = m0 + tr + i, col = n0 + tc + j;
      if (row < a.m && col < a.n) a.y[static_cast<long long>(row) * a.n + col] = acc[i][j] + (a.bias ? a.bias[col] : 0.0f);
    }
}

// ---- Weight conversion to the activation type -----------------------------------------
// The first step for weights that are not already of type T (quantized
// GGUF blocks, or the other float type): expand W into a [n, K] scratch of T,
// then run the dense GEMM. One thread per 32-element group; the byte layouts
// are those of kernel_src/ggml_blocks.h. Memory-bound and done once per
// call, so plain byte loads (blocks are 18/34/144/176/210 bytes: unaligned).
template <typename T>
struct GemmDequantArgs {
  const ft_u8* w;     // the tensor's bytes (GGUF blocks, or the device layout's planes)
  T* out;             // [groups * 32]
  long long groups;   // n * K / 32
  long long blocks;   // blocks in the tensor at w (the planes' extent)
};

template <typename T, int kType>
FT_DEVICE void gemm_dequant(const GemmDequantArgs<T>& a) {
  using G = GgmlGroup<kType>;
  const long long g = static_cast<long long>(block_x()) * 256 + thread_x();
  if (g >= a.groups) return;
  float y[32];
  G::decode(a.w, a.blocks, g / G::kGroups, static_cast<int>(g % G::kGroups), y);
  // 16-byte stores (the group's 32 outputs are 64-128 bytes, 16-byte aligned
  // in scratch): 4-8 store instructions instead of 32 narrow ones, each
  // touching one sector per lane instead of writing 2-4 bytes of it.
  using V = Vec<T, 16>;
  T* out = a.out + g * 32;
#pragma unroll
  for (int c = 0; c < 32 / V::kCount; ++c) {
    V v;
#pragma unroll
    for (int e = 0; e < V::kCount; ++e) v.v[e] = from_float<T>(y[c * V::kCount + e]);
    store_vec<T, 16>(out + c * V::kCount, v);
  }
}

// ---- Few rows against quantized W: dequantized into the tile ------------------------
// y[m, n] = x[m, K] * W[n, K]^T for m up to a few dozen (decode batches above
// the GEMV's 8 rows, short prefill chunks) with W in GGUF blocks: W is read
// once per 32 rows of x and expanded in shared memory only, where the
// expanding pass above writes and rereads it whole (at m = 32 that pass and
// the dense GEMM move 9 bytes per weight against Q4_K's 0.56).
//
// Each wave owns 32 rows of W (kGemmQCols); the block's waves share a
// 32-row x tile. Per K step of 64: the block copies the x tile (16-byte
// chunks) into LDS, each wave unpacks its W groups (fetched as raw registers
// the step before, 16-byte loads) into its own LDS tile, one barrier, then
// the waves multiply with the target's matrix instruction (the tiled GEMM's
// fragments). Tiles are double-buffered, so one barrier a step suffices and
// step s + 1's loads are in flight while step s is unpacked and multiplied.
// Blocks: x over 32-row tiles of x, y over kGemmQWaves * 32 columns, z over
// equal ranges of K (splits). With one split the block writes y (+ bias);
// with more, f32 partial sums, which gemm_q_reduce adds in a fixed order (no
// atomics: the same sums every run).
constexpr int kGemmQRows = 32;   // rows of x per block
constexpr int kGemmQCols = 32;   // rows of W (columns of y) per wave
constexpr int kGemmQStep = 64;   // K per step
constexpr int kGemmQWaves = 4;   // waves per block

template <typename T>
struct GemmQArgs {
  const T* x;        // [m, k]
  const ft_u8* w;    // [n, k] as GGUF blocks (Q8_0, Q6_K: the device planes), 16-byte aligned
  const T* bias;     // [n] or null (one split only)
  T* y;              // [m, ldy] (one split)
  float* partial;    // [splits, m, n] when K is split (then y and bias unused), else null
  long long blocks;  // blocks in the tensor at w
  int m, n, k, ldy;
  int steps;         // K steps of kGemmQStep per split
};

template <typename T, int kType>
FT_DEVICE void gemm_q(const GemmQArgs<T>& a) {
  using Mma = MatrixCoreMma<T>;
  using G = GgmlGroup<kType>;
  constexpr int kBK = kGemmQStep;
  constexpr int kThreads = kGemmQWaves * FT_WAVE_SIZE;
  constexpr int kFM = kGemmQRows / Mma::kM, kFN = kGemmQCols / Mma::kN;
  constexpr int kChunksA = kGemmQRows * kBK / 8 / kThreads;       // 16-byte x chunks per thread per step
  constexpr int kGroupsB = kGemmQCols * kBK / 32 / FT_WAVE_SIZE;  // 32-element W groups per lane per step
  constexpr int kGroupsRow = kBK / 32;
  constexpr int kBlockElems = 32 * G::kGroups;
  static_assert(kChunksA >= 1 && kGroupsB >= 1, "tile vs block size");
  static_assert(kFM >= 1 && kFN >= 1, "tile vs instruction shape");

  __shared__ __attribute__((aligned(16))) ft_u16 sa[2][kGemmQRows * kBK];
  __shared__ __attribute__((aligned(16))) ft_u16 sb[2][kGemmQWaves][kGemmQCols * kBK];
  const int wave = wave_id(), lane = lane_id();
  const int m0 = block_x() * kGemmQRows;
  const int n0 = (block_y() * kGemmQWaves + wave) * kGemmQCols;
  // A wave past n (n is a multiple of 32) still copies x and meets the
  // barriers; it reads W row 0 instead of its own and stores nothing.
  const bool active = n0 < a.n;
  const int wrow0 = active ? n0 : 0;
  const int kt0 = block_z() * a.steps;
  const long long row_blocks = a.k / kBlockElems;

  typename Mma::Acc acc[kFM][kFN];
#pragma unroll
  for (int i = 0; i < kFM; ++i)
#pragma unroll
    for (int j = 0; j < kFN; ++j) acc[i][j] = typename Mma::Acc{};

  // Registers carrying one step's loads to the next iteration.
  typename G::Raw raw[kGroupsB];
  Vec<ft_u16, 16> ra[kChunksA];
  for (int s = -1; s < a.steps; ++s) {
    const int buf = s & 1;
    if (s >= 0) {
      const int k0 = (kt0 + s) * kBK;
#pragma unroll
      for (int i = 0; i < kChunksA; ++i) {
        const int c = thread_x() + i * kThreads;
        store_vec<ft_u16, 16>(sa[buf] + tile_offset<kBK>(c / (kBK / 8), c % (kBK / 8)), ra[i]);
      }
      // W: a lane's groups are consecutive (a Q4_K lane's two share their
      // bytes), unpacked, rounded to T in pairs, stored 16 bytes at a time.
#pragma unroll
      for (int g = 0; g < kGroupsB; ++g) {
        const int gi = lane * kGroupsB + g, row = gi / kGroupsRow, e = k0 + (gi % kGroupsRow) * 32;
        float yv[32];
        G::unpack(raw[g], (e % kBlockElems) / 32, yv);
        const int ch0 = (gi % kGroupsRow) * 4;
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          Vec<ft_u32, 16> v;
#pragma unroll
          for (int j = 0; j < 4; ++j) v.v[j] = pack_pair<T>(yv[8 * c + 2 * j], yv[8 * c + 2 * j + 1]);
          store_vec<ft_u32, 16>(reinterpret_cast<ft_u32*>(sb[buf][wave] + tile_offset<kBK>(row, ch0 + c)), v);
        }
      }
    }
    if (s + 1 < a.steps) {
      const int k0 = (kt0 + s + 1) * kBK;
#pragma unroll
      for (int g = 0; g < kGroupsB; ++g) {
        const int gi = lane * kGroupsB + g, row = gi / kGroupsRow, e = k0 + (gi % kGroupsRow) * 32;
        raw[g] = G::template fetch<true>(a.w, a.blocks, (wrow0 + row) * row_blocks + e / kBlockElems,
                                         (e % kBlockElems) / 32);
      }
      // x: rows past m are clamped (valid memory, results dropped).
#pragma unroll
      for (int i = 0; i < kChunksA; ++i) {
        int row, ch;
        ra[i] = load_vec<ft_u16, 16>(tile_chunk_src<kBK, kThreads>(a.x, a.k, m0, a.m, k0, i, &row, &ch));
      }
    }
    if (s < 0) continue;
    // Step s's tiles are complete; everyone is done with step s - 1's, whose
    // buffers step s + 1 writes.
    sync_threads();
#pragma unroll
    for (int kk = 0; kk < kBK; kk += Mma::kK) {
      typename Mma::FragA fa[kFM];
      typename Mma::FragB fb[kFN];
#pragma unroll
      for (int i = 0; i < kFM; ++i) fa[i] = Mma::template load_a<kBK>(sa[buf], i * Mma::kM, kk);
#pragma unroll
      for (int j = 0; j < kFN; ++j) fb[j] = Mma::template load_b<kBK>(sb[buf][wave], j * Mma::kN, kk);
#pragma unroll
      for (int i = 0; i < kFM; ++i)
#pragma unroll
        for (int j = 0; j < kFN; ++j) Mma::template mma<T>(acc[i][j], fa[i], fb[j]);
    }
  }

  if (!active) return;
#pragma unroll
  for (int i = 0; i < kFM; ++i)
#pragma unroll
    for (int j = 0; j < kFN; ++j)
#pragma unroll
      for (int e = 0; e < Mma::kAccCount; ++e) {
        const int row = m0 + i * Mma::kM + Mma::acc_row(e), col = n0 + j * Mma::kN + Mma::acc_col(e);
        if (row >= a.m) continue;
        const float v = acc[i][j][e];
        if (a.partial)
          a.partial[(static_cast<long long>(block_z()) * a.m + row) * a.n + col] = v;
        else
          a.y[static_cast<long long>(row) * a.ldy + col] = from_float<T>(a.bias ? v + to_float(a.bias[col]) : v);
      }
}

// y[row, col] (row stride ldy) = the sum over splits of partial[split, row,
// col] in split order, + bias[col]: gemm_q's second step when K was split.
template <typename T>
struct GemmQReduceArgs {
  const float* partial;  // [splits, m, n]
  const T* bias;         // [n] or null
  T* y;                  // [m, ldy]
  int splits, m, n, ldy;
};

template <typename T>
FT_DEVICE void gemm_q_reduce(const GemmQReduceArgs<T>& a) {
  const long long i = static_cast<long long>(block_x()) * 256 + thread_x();
  const long long count = static_cast<long long>(a.m) * a.n;
  if (i >= count) return;
  float v = 0.0f;
  for (int s = 0; s < a.splits; ++s) v += a.partial[s * count + i];
  const int row = static_cast<int>(i / a.n), col = static_cast<int>(i % a.n);
  if (a.bias) v += to_float(a.bias[col]);
  a.y[static_cast<long long>(row) * a.ldy + col] = from_float<T>(v);
}


// ---- Few rows against quantized W on NVIDIA: W straight into fragments ------------
// gemm_qr: the product of gemm_q (same arguments, same results up to the
// order of the sums) with W never in LDS. Each warp owns 16 rows of W, the
// A operand of mma.sync m16n8k16, and decodes them from GGUF blocks straight
// into its A fragments; x is the B operand (kXTiles tiles of 8 rows). A lane
// holds rows g and g + 8 of its 16 (g = lane / 4) and, of every 32-element
// sub-block, elements 8t..8t+7 (t = lane % 4): the sum over k is the same in
// any order, so sub-block element 8t + 4c + {0,1,2,3} is k {2t, 2t+1, 8+2t,
// 9+2t} of the sub-block's chunk c of 16, for W and x alike. So a lane's
// share of a W row is 8 consecutive elements per sub-block (one 8-byte run
// of a K-quant's nibbles covers two sub-blocks) and its x is one 16-byte
// load per x tile. A K step is 256 elements; the next step's W is in flight
// while this one is used, and a step is long (8 sub-blocks of work per
// warp), so loading one step ahead (two sets of raw words: this step's and
// the next's) covers the memory's latency. x goes through LDS, copied once
// per block by cp.async a step ahead: read by each warp from L2 instead, x
// was most of the traffic (at 32 rows, 16 KB a step per warp against 2.3 KB
// of Q4_K) and the 32-row tile ran at L2's pace (Q4_K down 59.4 us against
// 33.6 with LDS, H100). Grid: x over x tiles of 8 * kXTiles rows, y over 64
// W rows (4 warps), z over K splits (partial sums as gemm_q's, added by the
// same reduce).
#if defined(FT_NVIDIA)
constexpr int kGemmQrWaves = 4;  // warps per block, 16 rows of W each
constexpr int kGemmQrStep = 256;  // K per step

// QrRows<type>: fetch(w, blocks, block, t) loads what lane t needs of one W
// row for one step, the step starting at the tensor's block `block`
// (qr_block); scales(raw) converts the step's block scales once, and
// unpack<T>(raw, scales, sub, w) gives the lane's elements 8t..8t+7 of the
// step's sub-block `sub` (a constant after unrolling) as four T pairs.
template <int kType> struct QrRows;

// W's A-fragment words: w[j] holds elements 2j, 2j + 1 of the lane's 8 as a
// T pair, element 4i + b being d * (byte b of v[i], less `offset`) - m.
// Bytes of at most kMaxByte become T pairs by one byte permute each: a byte
// n under the magic byte M (bf16 0x43nn = 128 + n for n < 128; f16 0x64nn =
// 1024 + n for n < 1024) is a float with n in its mantissa, so one packed
// fma takes the magic and the offset off exactly (small integers q). On bf16
// without a min, the scale d goes in as two pairs, hi + lo (hi = d rounded to
// bf16, lo = the rest rounded: d to about 16 bits), and q * d_lo then q * d_hi
// + that round once, as the f32 path does. With a min (Q4_K, Q5_K), the pair
// of integers is widened to f32 and q * d - m rounds once there: packed,
// (q * d_hi - m_hi) + (q * d_lo - m_lo) rounded twice (op_check Q4_K 2.9-3.5e-3
// against the floor's 1.6e-3) and was no faster (H100, 32-row Q4_K 28.1 and
// 27.5 us against 27.7 and 27.2; decode b32 6,049 against 6,138 tok/s).
// f16 holds d and m within 2^-12, below its own rounding of w: one pair
// each, one rounding. Q8_0's bytes (to 255) do not fit bf16's magic: they
// take the f32 path, as do all bytes on any other T.
template <typename T> struct QrPairs {
  static constexpr bool kPacked = false;
};
template <> struct QrPairs<bf16> {
  static constexpr bool kPacked = true;
  static constexpr ft_u32 kMagicBytes = 0x43434343u;
  static constexpr float kMagic = 128.0f;
  static constexpr int kMaxByte = 127;
  static constexpr bool kSplit = true;  // d as hi + lo; with a min, f32
  static FT_DEVICE ft_u32 fma2(ft_u32 a, ft_u32 b, ft_u32 c) {
    ft_u32 r;
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));  // FT_NVIDIA only
    return r;
  }
};
template <> struct QrPairs<f16> {
  static constexpr bool kPacked = true;
  static constexpr ft_u32 kMagicBytes = 0x64646464u;
  static constexpr float kMagic = 1024.0f;
  static constexpr int kMaxByte = 255;  // the byte's 8 bits of the 10-bit mantissa
  static constexpr bool kSplit = false;  // d and m rounded to f16: within 2^-12
  static FT_DEVICE ft_u32 fma2(ft_u32 a, ft_u32 b, ft_u32 c) {
    ft_u32 r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));  // FT_NVIDIA only
    return r;
  }
};
FT_DEVICE ft_u32 byte_perm(ft_u32 a, ft_u32 b, ft_u32 selector) {
  ft_u32 r;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(selector));  // FT_NVIDIA only
  return r;
}
// s as T pairs hi = (s, s) rounded and lo = (s - hi, s - hi) rounded.
template <typename T> FT_DEVICE void qr_split_pair(float s, ft_u32* hi, ft_u32* lo) {
  *hi = pack_pair<T>(s, s);
  const float rest = s - to_float(T{static_cast<ft_u16>(*hi & 0xFFFFu)});
  *lo = pack_pair<T>(rest, rest);
}
template <typename T, int kMaxByte, bool kMin>
FT_DEVICE void qr_pack_bytes(const ft_u32 (&v)[2], float d, float m, float offset, ft_u32 (&w)[4]) {
  using P = QrPairs<T>;
  if constexpr (P::kPacked && kMaxByte <= P::kMaxByte) {
    const ft_u32 one = pack_pair<T>(1.0f, 1.0f), less = pack_pair<T>(-(P::kMagic + offset), -(P::kMagic + offset));
    ft_u32 d_hi = 0u, d_lo = 0u, m_hi = 0u;  // 0u: +0.0 in both halves
    if constexpr (P::kSplit) {
      if constexpr (!kMin) qr_split_pair<T>(d, &d_hi, &d_lo);
    } else {
      d_hi = pack_pair<T>(d, d);
      m_hi = pack_pair<T>(-m, -m);
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        // Bytes 2h, 2h + 1 of v[i] under the magic byte: 0x4140 or 0x4342.
        const ft_u32 q = P::fma2(byte_perm(v[i], P::kMagicBytes, h ? 0x4342u : 0x4140u), one, less);
        if constexpr (!P::kSplit) {
          w[2 * i + h] = P::fma2(q, d_hi, m_hi);
        } else {
          if constexpr (kMin) {
            // bf16 q widened to f32 (the high half as it is, the low one
            // shifted up): q * d - m in f32, rounded once, as the f32 path.
            w[2 * i + h] = pack_pair<T>(d * bits_float(q << 16) - m, d * bits_float(q & 0xFFFF0000u) - m);
          } else {
            w[2 * i + h] = P::fma2(q, d_hi, P::fma2(q, d_lo, 0u));
          }
        }
      }
  } else {
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const ft_u32 b0 = (v[i] >> (16 * h)) & 0xFFu, b1 = (v[i] >> (16 * h + 8)) & 0xFFu;
        w[2 * i + h] = pack_pair<T>(d * small_uint_float(b0, offset) - m, d * small_uint_float(b1, offset) - m);
      }
  }
}
// Q4_K and Q5_K: bytes 8t..8t+7 of each of the four 32-byte runs of nibbles
// at byte `qs` of block b (run j holds sub-blocks 2j and 2j + 1), and
// sub-block `sub`'s scale and min from the block's first 16 bytes.
FT_DEVICE void qr_k_runs(const ft_u8* b, int qs, int t, ft_u32 (&q)[8]) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const Vec<ft_u32, 8> v = load_vec<ft_u32, 8>(reinterpret_cast<const ft_u32*>(b + qs + 32 * j + 8 * t));
    q[2 * j] = v.v[0];
    q[2 * j + 1] = v.v[1];
  }
}
FT_DEVICE ByteRun<16> qr_k_head(const Vec<ft_u32, 16>& head) {
  ByteRun<16> h;
#pragma unroll
  for (int i = 0; i < 4; ++i) h.w[i] = head.v[i];
  return h;
}
// A K-quant block's d and dmin as floats, once a step.
struct QrKScales {
  float d, dmin;
};
FT_DEVICE QrKScales qr_k_scales(const Vec<ft_u32, 16>& head) {
  const ByteRun<16> h = qr_k_head(head);
  return {k_d(h), k_dmin(h)};
}
FT_DEVICE void qr_k_scale_min(const Vec<ft_u32, 16>& head, const QrKScales& s, int sub, float* d, float* m) {
  float sc, mn;
  k_scale_min(qr_k_head(head), sub, &sc, &mn);
  *d = s.d * sc;
  *m = s.dmin * mn;
}
// A K-quant's 4-bit part of sub-block `sub` in the lane's two words.
FT_DEVICE ft_u32 qr_k_nibbles(const ft_u32 (&q)[8], int sub, int i) {
  return (q[2 * (sub >> 1) + i] >> (4 * (sub & 1))) & 0x0F0F0F0Fu;
}

template <> struct QrRows<12> {  // Q4_K: head (d, dmin, scales), then the runs of nibbles
  struct Raw {
    Vec<ft_u32, 16> head;
    ft_u32 q[8];
  };
  static FT_DEVICE Raw fetch(const ft_u8* w, long long, long long block, int t) {
    const ft_u8* b = w + block * 144;
    Raw r;
    r.head = load_vec<ft_u32, 16>(reinterpret_cast<const ft_u32*>(b));
    qr_k_runs(b, 16, t, r.q);
    return r;
  }
  using Scales = QrKScales;
  static FT_DEVICE Scales scales(const Raw& r) { return qr_k_scales(r.head); }
  template <typename T>
  static FT_DEVICE void unpack(const Raw& r, const Scales& s, int sub, ft_u32 (&w)[4]) {
    float d, m;
    qr_k_scale_min(r.head, s, sub, &d, &m);
    const ft_u32 v[2] = {qr_k_nibbles(r.q, sub, 0), qr_k_nibbles(r.q, sub, 1)};
    qr_pack_bytes<T, 15, true>(v, d, m, 0.0f, w);
  }
};
template <> struct QrRows<13> {  // Q5_K: as Q4_K, the fifth bits from qh bytes 8t..8t+7 (bit `sub`)
  struct Raw {
    Vec<ft_u32, 16> head;
    ft_u32 q[8], qh[2];
  };
  static FT_DEVICE Raw fetch(const ft_u8* w, long long, long long block, int t) {
    const ft_u8* b = w + block * 176;
    Raw r;
    r.head = load_vec<ft_u32, 16>(reinterpret_cast<const ft_u32*>(b));
    const Vec<ft_u32, 8> hv = load_vec<ft_u32, 8>(reinterpret_cast<const ft_u32*>(b + 16 + 8 * t));
    r.qh[0] = hv.v[0];
    r.qh[1] = hv.v[1];
    qr_k_runs(b, 48, t, r.q);
    return r;
  }
  using Scales = QrKScales;
  static FT_DEVICE Scales scales(const Raw& r) { return qr_k_scales(r.head); }
  template <typename T>
  static FT_DEVICE void unpack(const Raw& r, const Scales& s, int sub, ft_u32 (&w)[4]) {
    float d, m;
    qr_k_scale_min(r.head, s, sub, &d, &m);
    ft_u32 v[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) v[i] = qr_k_nibbles(r.q, sub, i) | (((r.qh[i] >> sub) & 0x01010101u) << 4);
    qr_pack_bytes<T, 31, true>(v, d, m, 0.0f, w);
  }
};
// Q6_K, device layout (ql [B][8][16], qh [B][8][8], scales [B][16], d [B]):
// sub-block 4h + i, elements 8t.. are part p = 4h + t (GgmlGroup<14>): the
// part's 16 ql bytes (run i & 1, high nibbles for i >= 2), its 8 qh bytes
// (bits 2i, 2i + 1) and one scale, scales[4 (2h + t / 2) + i].
template <> struct QrRows<14> {
  struct Raw {
    Vec<ft_u32, 16> ql[2];
    Vec<ft_u32, 8> qh[2];
    ft_u32 sc[2];  // 4 int8 scales (i = 0..3) per half
    ft_u32 d;
  };
  static FT_DEVICE Raw fetch(const ft_u8* w, long long blocks, long long block, int t) {
    Raw r;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int p = 4 * h + t;
      r.ql[h] = load_vec<ft_u32, 16>(reinterpret_cast<const ft_u32*>(w + 128 * block + 16 * p));
      r.qh[h] = load_vec<ft_u32, 8>(reinterpret_cast<const ft_u32*>(w + 128 * blocks + 64 * block + 8 * p));
      r.sc[h] = *reinterpret_cast<const ft_u32*>(w + 192 * blocks + 16 * block + 4 * (2 * h + (t >> 1)));
    }
    r.d = *reinterpret_cast<const ft_u16*>(w + 208 * blocks + 2 * block);
    return r;
  }
  struct Scales {
    float d;
  };
  static FT_DEVICE Scales scales(const Raw& r) { return {to_float(f16{static_cast<ft_u16>(r.d)})}; }
  template <typename T>
  static FT_DEVICE void unpack(const Raw& r, const Scales& s, int sub, ft_u32 (&w)[4]) {
    const int h = sub >> 2, i = sub & 3;
    const float ds = s.d * static_cast<float>(static_cast<signed char>((r.sc[h] >> (8 * i)) & 0xFFu));
    ft_u32 v[2];
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const ft_u32 lo = (r.ql[h].v[2 * (i & 1) + j] >> (4 * (i >> 1))) & 0x0F0F0F0Fu;
      v[j] = lo | (((r.qh[h].v[j] >> (2 * i)) & 0x03030303u) << 4);
    }
    qr_pack_bytes<T, 63, false>(v, ds, 0.0f, 32.0f, w);
  }
};
template <> struct QrRows<8> {  // Q8_0, device layout (qs [B][32], d [B]): 8 blocks per step
  struct Raw {
    ft_u32 q[8][2];
    ft_u16 d[8];
  };
  static FT_DEVICE Raw fetch(const ft_u8* w, long long blocks, long long first, int t) {
    Raw r;
#pragma unroll
    for (int s = 0; s < 8; ++s) {
      const Vec<ft_u32, 8> v = load_vec<ft_u32, 8>(reinterpret_cast<const ft_u32*>(w + 32 * (first + s) + 8 * t));
      r.q[s][0] = v.v[0];
      r.q[s][1] = v.v[1];
      r.d[s] = *reinterpret_cast<const ft_u16*>(w + 32 * blocks + 2 * (first + s));
    }
    return r;
  }
  struct Scales {};  // one d per sub-block, taken there
  static FT_DEVICE Scales scales(const Raw&) { return {}; }
  template <typename T>
  static FT_DEVICE void unpack(const Raw& r, const Scales&, int sub, ft_u32 (&w)[4]) {
    const ft_u32 biased[2] = {r.q[sub][0] ^ 0x80808080u, r.q[sub][1] ^ 0x80808080u};  // each int8 + 128
    qr_pack_bytes<T, 255, false>(biased, to_float(f16{r.d[sub]}), 0.0f, 128.0f, w);
  }
};
// The first block of a step: K-quants hold 256 elements a block, Q8_0 32.
template <int kType>
FT_DEVICE long long qr_block(int row, int k, int step) {
  constexpr int kElems = kType == 8 ? 32 : 256;
  return static_cast<long long>(row) * (k / kElems) + static_cast<long long>(step) * (kGemmQrStep / kElems);
}

// x's tile of one step in LDS: rows of kGemmQrStep elements (512 bytes, 32
// chunks of 16), a chunk's index XORed with 4 in odd rows, so the 8 lanes
// of one phase of a 16-byte load (rows g, g + 1, t = 0..3) hit distinct
// banks. Three buffers: step s + 1's copy starts before step s is used, and
// the buffer it overwrites was last read in step s - 2, before the barrier
// of step s - 1: one barrier a step. At 32 rows that is 48 KiB, the most a
// block's static LDS may be.
constexpr int kGemmQrXBufs = 3;
FT_DEVICE int qr_x_offset(int row, int chunk) { return row * kGemmQrStep + 8 * (chunk ^ ((row & 1) << 2)); }

// Copies x rows m0.. (8 * kXTiles of them, rows past m clamped: valid memory,
// results dropped), K step `step`, into `dst` with cp.async; one commit group.
template <typename T, int kXTiles>
FT_DEVICE void gemm_qr_stage_x(const GemmQArgs<T>& a, ft_u16* dst, int m0, int step) {
  constexpr int kThreads = kGemmQrWaves * FT_WAVE_SIZE;
  constexpr int kChunks = 8 * kXTiles * (kGemmQrStep / 8) / kThreads;
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    int row, ch;
    const ft_u16* src = tile_chunk_src<kGemmQrStep, kThreads>(a.x, a.k, m0, a.m, step * kGemmQrStep, i, &row, &ch);
    cp_async16(dst + qr_x_offset(row, ch), src);
  }
  cp_async_commit();
}

template <typename T, int kType, int kXTiles>
FT_DEVICE void gemm_qr(const GemmQArgs<T>& a) {
  static_assert(kXTiles % 2 == 0, "x tiles go to mma.sync in pairs");
  using R = QrRows<kType>;
  __shared__ __attribute__((aligned(16))) ft_u16 sx[kGemmQrXBufs][8 * kXTiles * kGemmQrStep];
  const int lane = lane_id(), g = lane >> 2, t = lane & 3;
  const int n0 = (block_y() * kGemmQrWaves + wave_id()) * 16;
  // n is a multiple of 16; a warp past it copies x and waits at the
  // barriers with the others, and neither loads W nor stores.
  const bool active = n0 < a.n;
  const int m0 = block_x() * 8 * kXTiles;
  const int step0 = block_z() * a.steps;
  MmaSync::Acc acc[kXTiles / 2];
#pragma unroll
  for (int j = 0; j < kXTiles / 2; ++j) acc[j] = MmaSync::Acc{};

  typename R::Raw cur[2], nxt[2];
  if (active) {
#pragma unroll
    for (int h = 0; h < 2; ++h) cur[h] = R::fetch(a.w, a.blocks, qr_block<kType>(n0 + g + 8 * h, a.k, step0), t);
  }
  gemm_qr_stage_x<T, kXTiles>(a, sx[0], m0, step0);
  int buf = 0;
  for (int s = 0; s < a.steps; ++s) {
    const int next_buf = buf + 1 == kGemmQrXBufs ? 0 : buf + 1;
    if (s + 1 < a.steps) {
      if (active) {
#pragma unroll
        for (int h = 0; h < 2; ++h)
          nxt[h] = R::fetch(a.w, a.blocks, qr_block<kType>(n0 + g + 8 * h, a.k, step0 + s + 1), t);
      }
      gemm_qr_stage_x<T, kXTiles>(a, sx[next_buf], m0, step0 + s + 1);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    sync_threads();  // step s's x is in sx[buf] for every warp
    if (active) {
      // This lane's x rows (B columns) 8j + g, elements 8t.. of each
      // sub-block: chunk 4 sub + t, XOR 4 in odd rows (qr_x_offset), so
      // even sub-blocks start at xs[0] + 32 sub and odd ones at xs[1] + 32 sub.
      const ft_u16* xs[2] = {sx[buf] + qr_x_offset(g, t), sx[buf] + qr_x_offset(g, 4 + t) - 32};
      const typename R::Scales sc[2] = {R::scales(cur[0]), R::scales(cur[1])};
#pragma unroll
      for (int sub = 0; sub < kGemmQrStep / 32; ++sub) {
        Vec<ft_u32, 16> xv[kXTiles];
#pragma unroll
        for (int j = 0; j < kXTiles; ++j)
          xv[j] = load_vec<ft_u32, 16>(reinterpret_cast<const ft_u32*>(xs[sub & 1] + 8 * j * kGemmQrStep + 32 * sub));
        ft_u32 w0[4], w1[4];  // rows g and g + 8, element pairs 0-1, 2-3, 4-5, 6-7
        R::template unpack<T>(cur[0], sc[0], sub, w0);
        R::template unpack<T>(cur[1], sc[1], sub, w1);
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          MmaSync::FragA fa;
          fa.r[0] = w0[2 * c];
          fa.r[1] = w1[2 * c];
          fa.r[2] = w0[2 * c + 1];
          fa.r[3] = w1[2 * c + 1];
#pragma unroll
          for (int j = 0; j < kXTiles / 2; ++j) {
            MmaSync::FragB fb;
            fb.r[0] = xv[2 * j].v[2 * c];
            fb.r[1] = xv[2 * j].v[2 * c + 1];
            fb.r[2] = xv[2 * j + 1].v[2 * c];
            fb.r[3] = xv[2 * j + 1].v[2 * c + 1];
            MmaSync::mma<T>(acc[j], fa, fb);
          }
        }
      }
      if (s + 1 < a.steps) {
#pragma unroll
        for (int h = 0; h < 2; ++h) cur[h] = nxt[h];
      }
    }
    buf = next_buf;
  }
  if (!active) return;

  // acc[j]: rows (of W) n0 + acc_row, columns (x rows) m0 + 16 j + acc_col.
#pragma unroll
  for (int j = 0; j < kXTiles / 2; ++j)
#pragma unroll
    for (int e = 0; e < MmaSync::kAccCount; ++e) {
      const int col = n0 + MmaSync::acc_row(e), row = m0 + 16 * j + MmaSync::acc_col(e);
      if (row >= a.m) continue;
      const float v = acc[j][e];
      if (a.partial)
        a.partial[(static_cast<long long>(block_z()) * a.m + row) * a.n + col] = v;
      else
        a.y[static_cast<long long>(row) * a.ldy + col] = from_float<T>(a.bias ? v + to_float(a.bias[col]) : v);
    }
}
#endif  // FT_NVIDIA

}  // namespace ft
