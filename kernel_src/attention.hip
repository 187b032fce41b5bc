// Attention over the paged KV cache (contract: runtime/ops/attention.h;
// layout: runtime/ops/kv_cache_layout.h). Three kernels:
//
// attention_decode: one query token per sequence. A block owns one KV head of
//   one sequence and one partition of its context (split-K), and serves all
//   kGroup query heads of that KV head, so each K/V row is read from memory
//   once per group instead of once per query head. Two passes over the
//   partition: scores q.k for every (key, head) into LDS, then softmax
//   weights times V. The partial result (unnormalized output, running max and
//   sum) goes to the workspace, and the last of a (sequence, KV head)'s
//   partitions to finish merges them into `out` (no second kernel); or it
//   goes straight to `out` when one partition holds the whole context. A short
//   batch splits its contexts finer than the LDS partition needs, so its few
//   (sequence, KV head) pairs still fill the GPU. Napkin math at 32 x (32 q /
//   8 kv heads) x 4096 x 128 bf16: K+V = 537 MB, 128 us at 4.2 TB/s; the
//   FMAs (4 per K or V element for group 4) are about a third of the issue
//   slots in that time. (A one-pass online-softmax variant with 16 lanes per
//   key measured 16% slower at batch 32 on the H200: more shuffles per key
//   and more registers.)
// attention_prefill_fma / attention_prefill_mma: flash-style online softmax,
//   causal, any q_len per sequence (extend after cached tokens). Rows of a
//   tile are (new token, head of the group) pairs of one KV head, so K/V tiles
//   are shared by the whole group and a short extend still fills the tile.
//   The mma variant uses mma.sync m16n8k16 (NVIDIA), the wgmma variant
//   wgmma.mma_async (Hopper, head_dim 128; attention_wgmma.h); the fma variant
//   is the portable f32 path (AMD today, and f32 everywhere).
#include "quant_x.h"

namespace ft {

FT_DEVICE float attn_max(float a, float b) { return a > b ? a : b; }
FT_DEVICE float attn_neg_inf() { return bits_float(0xff800000u); }
// A finite "minus infinity" for running maxima: exp2(kMinus - x) is 0 and
// kMinus - kMinus is 0, never NaN.
constexpr float kAttnMinus = -1e30f;

template <int kWidth>
FT_DEVICE float attn_group_max(float v) {
#pragma unroll
  for (int mask = kWidth / 2; mask > 0; mask >>= 1) v = attn_max(v, shfl_xor(v, mask));
  return v;
}
template <int kWidth>
FT_DEVICE float attn_group_sum(float v) {
#pragma unroll
  for (int mask = kWidth / 2; mask > 0; mask >>= 1) v += shfl_xor(v, mask);
  return v;
}

__device__ constexpr int attn_min(int a, int b) { return a < b ? a : b; }
__device__ constexpr int attn_cmax(int a, int b) { return a > b ? a : b; }

// ---- decode -------------------------------------------------------------------

template <typename T>
struct DecodeArgs {
  const T* q;                // [n_seqs, n_heads, head_dim]
  const T* k_cache;          // [slots, n_kv_heads, head_dim]
  const T* v_cache;
  const int* block_tables;   // [n_seqs, max_blocks]
  const int* context_lens;   // [n_seqs]
  float* part_out;           // [n_seqs, n_heads, max_parts, head_dim], unnormalized
  float* part_ml;            // [n_seqs, n_heads, max_parts, 2]: running max (log2 units), sum
  T* out;                    // [n_seqs, n_heads * head_dim]
  float scale_log2;          // softmax scale * log2(e)
  int n_heads;
  int n_kv_heads;
  int max_blocks;
  int max_parts;             // grid x: the most partitions a context splits into (decode_span)
  int direct;                // 1: a single partition covers every context; write `out`
  int n_seqs;
  int min_span;              // fewest context tokens per partition (decode_span)
  ft_u8* q8;                 // or null: `out` also quantized for the o projection (quant_x.h's
                             // buffer of n_seqs rows of n_heads * head_dim), by whichever kernel writes out
  int* counters;             // [n_seqs * n_kv_heads], zero between launches: arrivals of partitions
};

// Stores 4 consecutive elements d.. of head `head` (global over the batch:
// sequence * n_heads + h) of the attention output, and when q8 is set their
// quantized form. Every lane of the wave calls it (the quantization meets by
// shuffles); inactive lanes store nothing, and a 32-element block's 8 lanes
// are all active or all not.
template <typename T, int kHeadDim>
FT_DEVICE void attn_store_out4(T* out, ft_u8* q8, int n_seqs, int n_heads, long long head, int d, const float (&o)[4],
                               bool active) {
  Vec<T, 4 * sizeof(T)> ov;
  float v[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    ov.v[j] = from_float<T>(o[j]);
    v[j] = to_float(ov.v[j]);  // quantized as rounded to T, as quantize_x_q8 would read it
  }
  if (active) store_vec<T, 4 * sizeof(T)>(out + head * kHeadDim + d, ov);
  if (q8) {
    const int hd = static_cast<int>(head);  // n_seqs * n_heads fits an int: a 32-bit division
    const int seq = hd / n_heads, h = hd % n_heads;
    quantize_q8_part<4>(v, active, q8, n_seqs, n_heads * kHeadDim, seq, h * kHeadDim + d);
  }
}

// Context tokens per partition when a context of ctx tokens is split over at
// most `parts` blocks: at least min_span, and whole KV blocks, so a partition
// starts on an entry of the block table. The host picks parts (once, so a
// captured graph keeps its grid) to fill the GPU when the batch alone would
// not, and never below ceil(max_context / kPartition), so a span fits the
// kernel's LDS (runtime/ops/attention.cpp's attention_decode_parts).
FT_DEVICE int decode_span(int ctx, int parts, int min_span, int block_size) {
  int span = (ctx + parts - 1) / parts;
  span = span < min_span ? min_span : span;
  return (span + block_size - 1) / block_size * block_size;
}

// The merge of one (sequence, KV head)'s n_parts partials into `out`, by the
// block that finished last. Up to kSerialParts partials (a chat's contexts:
// at most 512 tokens in 64-token spans; batch 32 at 4,096 tokens), each
// thread loads its 4 output elements of every partial at once and merges
// them: one round trip to L2. H100, attention_bench, the same run, against
// this branch loading them partition after partition (two round trips
// each): b1 at 128 tokens 6.07-6.16 -> 5.83-5.90 us, b32 at 4,096 263 ->
// 198 us (68% -> 90% of copy), b8 at 16,384 266 -> 202 us (that loop had
// measured 197 and 202 us as a function of its own, before the parallel
// branch came beside it: bench/RESULTS.md). More partials, and the merge
// puts every load it can in flight: a wave per head finds the heads' maxima
// and weighted sums (lanes over the partitions), then each thread sums
// kMergeLoads partitions at a time for 4 elements and one slice of the
// partitions, and the slices meet in LDS. H100, attention_bench: b1 at 4,096
// tokens (32 partials, 16 round trips to L2 in a row when serial) 12.0 ->
// 11.0 us; every merge this way, b1 at 128 tokens (2 partials) went 6.15 ->
// 6.70 us and 12-layer Q4_K_M decode b1 1,098 -> 1,087 tok/s (its barriers
// and reductions cost more than 2 serial round trips). smem holds kSmemFloats
// floats.
template <typename T, int kHeadDim, int kGroup, int kThreads, int kSmemFloats>
FT_DEVICE void decode_merge(const DecodeArgs<T>& a, long long head0, int n_parts, float (&smem)[kSmemFloats],
                            float (&s_max)[kGroup], float (&s_sum)[kGroup]) {
  constexpr int kWaves = kThreads / FT_WAVE_SIZE;
  constexpr int kOut4 = kGroup * kHeadDim / 4;
  constexpr int kSlices = attn_cmax(1, attn_min(kThreads / kOut4, kSmemFloats / (4 * kOut4)));
  constexpr int kMergeLoads = 8;
  const int tid = thread_x(), lane = lane_id(), wave = wave_id();
  constexpr int kSerialParts = 8;
  if (n_parts <= kSerialParts) {  // uniform over the block
    // Every partial's loads at once (clamped past n_parts, weighted 0): one
    // round trip instead of two per partition.
    for (int i0 = 0; i0 < kOut4; i0 += kThreads) {  // uniform trip count: the q8 store shuffles
      const bool active = i0 + tid < kOut4;
      const int i = active ? 4 * (i0 + tid) : 0;
      const int g = i / kHeadDim, d = i % kHeadDim;
      const float* ml = a.part_ml + 2 * (head0 + g) * a.max_parts;
      const float* po = a.part_out + (head0 + g) * a.max_parts * kHeadDim + d;
      float mp[kSerialParts], lp[kSerialParts];
      Vec<float, 16> v[kSerialParts];
#pragma unroll
      for (int u = 0; u < kSerialParts; ++u) {
        const int p = attn_min(u, n_parts - 1);
        mp[u] = ml[2 * p];
        lp[u] = ml[2 * p + 1];
        v[u] = load_vec<float, 16>(po + static_cast<long long>(p) * kHeadDim);
      }
      float m = kAttnMinus;
#pragma unroll
      for (int u = 0; u < kSerialParts; ++u) m = u < n_parts ? attn_max(m, mp[u]) : m;
      float l = 0.0f, o[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
      for (int u = 0; u < kSerialParts; ++u) {
        const float w = u < n_parts ? fast_exp2(mp[u] - m) : 0.0f;
        l += w * lp[u];
#pragma unroll
        for (int e = 0; e < 4; ++e) o[e] += w * v[u].v[e];
      }
#pragma unroll
      for (int e = 0; e < 4; ++e) o[e] = l > 0.0f ? o[e] / l : 0.0f;
      attn_store_out4<T, kHeadDim>(a.out, a.q8, a.n_seqs, a.n_heads, head0 + g, d, o, active);
    }
    return;
  }
  for (int g = wave; g < kGroup; g += kWaves) {
    const float* ml = a.part_ml + 2 * (head0 + g) * a.max_parts;
    float m = kAttnMinus;
    for (int p = lane; p < n_parts; p += FT_WAVE_SIZE) m = attn_max(m, ml[2 * p]);
    m = attn_group_max<FT_WAVE_SIZE>(m);
    float l = 0.0f;
    for (int p = lane; p < n_parts; p += FT_WAVE_SIZE) l += fast_exp2(ml[2 * p] - m) * ml[2 * p + 1];
    l = attn_group_sum<FT_WAVE_SIZE>(l);
    if (lane == 0) {
      s_max[g] = m;
      s_sum[g] = l;
    }
  }
  sync_threads();
  for (int i0 = 0; i0 < kOut4 * kSlices; i0 += kThreads) {
    const int t = i0 + tid;
    if (t >= kOut4 * kSlices) break;
    const int slice = t / kOut4, i = 4 * (t % kOut4), g = i / kHeadDim, d = i % kHeadDim;
    const float* ml = a.part_ml + 2 * (head0 + g) * a.max_parts;
    const float* po = a.part_out + (head0 + g) * a.max_parts * kHeadDim + d;
    const float m = s_max[g];
    float o[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int p0 = slice; p0 < n_parts; p0 += kSlices * kMergeLoads) {
      float mp[kMergeLoads];
      Vec<float, 16> v[kMergeLoads];
#pragma unroll
      for (int u = 0; u < kMergeLoads; ++u) {
        const int p = attn_min(p0 + u * kSlices, n_parts - 1);  // past the end: loaded, weighted 0
        mp[u] = ml[2 * p];
        v[u] = load_vec<float, 16>(po + static_cast<long long>(p) * kHeadDim);
      }
#pragma unroll
      for (int u = 0; u < kMergeLoads; ++u) {
        const float w = p0 + u * kSlices < n_parts ? fast_exp2(mp[u] - m) : 0.0f;
#pragma unroll
        for (int e = 0; e < 4; ++e) o[e] += w * v[u].v[e];
      }
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) smem[slice * 4 * kOut4 + i + e] = o[e];
  }
  sync_threads();
  for (int i0 = 0; i0 < kOut4; i0 += kThreads) {  // uniform trip count: the q8 store shuffles
    const bool active = i0 + tid < kOut4;
    const int i = active ? 4 * (i0 + tid) : 0;
    const int g = i / kHeadDim, d = i % kHeadDim;
    const float l = s_sum[g];
    float o[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float sum = 0.0f;
#pragma unroll
      for (int sl = 0; sl < kSlices; ++sl) sum += smem[sl * 4 * kOut4 + i + e];
      o[e] = l > 0.0f ? sum / l : 0.0f;
    }
    attn_store_out4<T, kHeadDim>(a.out, a.q8, a.n_seqs, a.n_heads, head0 + g, d, o, active);
  }
}

// Grid: x = partition, y = sequence * n_kv_heads + kv head.
template <typename T, int kHeadDim, int kGroup, int kBlockSize, int kThreads, int kPartition>
FT_DEVICE void attention_decode(const DecodeArgs<T>& a) {
  constexpr int kVecBytes = 16;
  constexpr int kVecElems = kVecBytes / static_cast<int>(sizeof(T));
  constexpr int kChunks = kHeadDim / kVecElems;  // 16-byte chunks per K/V row
  constexpr int kWaves = kThreads / FT_WAVE_SIZE;
  // Scores: each lane keeps kQkElems of q per head in registers (about 64
  // floats in all), so lanes per key shrink as the group grows.
  constexpr int kQkElems = attn_min(kHeadDim, attn_cmax(kVecElems, (64 / kGroup) >= 32 ? 32 : (64 / kGroup) >= 16 ? 16 : 8));
  constexpr int kQkVecs = kQkElems / kVecElems;
  constexpr int kQkLanes = kHeadDim / kQkElems;
  constexpr int kQkKeysPerIter = kWaves * (FT_WAVE_SIZE / kQkLanes);
  // Weighted V: one 16-byte chunk per lane, kVLanes lanes per key.
  constexpr int kVLanes = kChunks;
  constexpr int kVKeysPerWave = FT_WAVE_SIZE / kVLanes;
  constexpr int kVKeysPerIter = kWaves * kVKeysPerWave;
  // Loads in flight per lane: 128 bytes of K, 64-128 of V, with 4 waves. A
  // block of more waves keeps the keys of one iteration (64 on wave32 for
  // every group) and spreads them over its lanes, so a short partition
  // takes fewer dependent instructions per wave rather than idling lanes.
  // On 4 waves, group 3 takes 96 bytes of K and group 5 at head_dim 64 112:
  // at 128, ptxas held them to 96 registers with spills (sm_90 and sm_80;
  // their 48 and 40 floats of q are the most of any group).
  constexpr int kMoreWaves = attn_cmax(kWaves, 4) / 4;
  constexpr int kQkUnroll = kMoreWaves == 1 && kGroup == 3                     ? 3
                            : kMoreWaves == 1 && kGroup == 5 && kHeadDim == 64 ? 7
                                                                               : attn_cmax(1, 8 / kQkVecs / kMoreWaves);
  constexpr int kVUnroll = attn_cmax(1, (kVecElems * kGroup > 32 ? 4 : 8) / kMoreWaves);
  static_assert(kQkElems % kVecElems == 0 && kQkLanes <= FT_WAVE_SIZE, "score lanes must fit a wave");
  static_assert(kVLanes <= FT_WAVE_SIZE, "a V row must fit one wave's 16-byte lanes");
  static_assert(kPartition % kBlockSize == 0 && kThreads % FT_WAVE_SIZE == 0, "bad decode tile");
  constexpr int kScoreFloats = kPartition * kGroup;
  constexpr int kReduceFloats = kWaves * kGroup * kHeadDim;
  __shared__ __attribute__((aligned(16))) float smem[kScoreFloats > kReduceFloats ? kScoreFloats : kReduceFloats];
  __shared__ int s_blocks[kPartition / kBlockSize];
  __shared__ float s_max[kGroup], s_sum[kGroup];

  const int tid = thread_x(), lane = lane_id(), wave = wave_id();
  const int part = block_x();
  const int seq = block_y() / a.n_kv_heads, kvh = block_y() % a.n_kv_heads;
  // This kernel waits itself (jit/catalog.cpp's spec). A small launch, whose
  // V rows fit a few MiB of L2 (decode of a short batch at short contexts),
  // lets its dependents (the o projection, which requests its weights before
  // it waits) launch at once, reads the context length and the block table
  // (staged by the host before the step; no kernel writes them) before the
  // wait, and requests its V rows into L2 before q and K. Together, H100,
  // 36-layer Q4_K_M decode b1: +0.3-2.7% over seven alternated pairs in three
  // runs; the table read before the wait with dependents launched after it,
  // as other kernels do, measured 3.5% slower.
  // A larger launch waits first: V prefetched there was evicted before pass 2
  // read it (batch 32 at 4096 tokens went from 91% to 70% of copy).
  constexpr int kSmallBlocks = (4 << 20) / (kPartition * kHeadDim * static_cast<int>(sizeof(T)));
  const bool small = a.n_seqs * a.n_kv_heads * a.max_parts <= kSmallBlocks;
  if (small)
    grid_dependents_launch();
  else
    grid_dependency_begin();  // the waits below then return at once
  const int ctx = a.context_lens[seq];
  const int span = decode_span(ctx, a.max_parts, a.min_span, kBlockSize);
  const int start = part * span;
  const long long head0 = static_cast<long long>(seq) * a.n_heads + kvh * kGroup;
  // The block's kGroup x kHeadDim outputs, 4 per thread per pass (kOut4 is
  // a multiple of 16: head_dim is).
  constexpr int kOut4 = kGroup * kHeadDim / 4;
  if (start >= ctx) {
    if (part == 0) {  // empty context: the attention output is 0
      grid_dependency_wait();
      const float zero[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (int i0 = 0; i0 < kOut4; i0 += kThreads) {
        const bool active = i0 + tid < kOut4;
        const int i = active ? 4 * (i0 + tid) : 0;
        attn_store_out4<T, kHeadDim>(a.out, a.q8, a.n_seqs, a.n_heads, head0 + i / kHeadDim, i % kHeadDim, zero,
                                     active);
      }
    }
    return;
  }
  const int n_keys = attn_min(attn_min(span, kPartition), ctx - start);
  for (int i = tid; i < (n_keys + kBlockSize - 1) / kBlockSize; i += kThreads)
    s_blocks[i] = a.block_tables[static_cast<long long>(seq) * a.max_blocks + start / kBlockSize + i];
  grid_dependency_wait();
  sync_threads();

  auto row_of = [&](const T* cache, int k) {
    const long long slot = static_cast<long long>(s_blocks[k / kBlockSize]) * kBlockSize + k % kBlockSize;
    return cache + (slot * a.n_kv_heads + kvh) * kHeadDim;
  };

#if defined(FT_NVIDIA)
  // A small launch's V rows are requested into L2 first, before q and the K
  // rows, so pass 2 meets L2 rather than memory, with no registers held
  // across pass 1 (holding the first V loads in registers instead took
  // sm_90 from 123 to 194 and measured no faster).
  if (small) {
    constexpr int kLines = kHeadDim * static_cast<int>(sizeof(T)) / 128;  // 128-byte lines per row (head_dim >= 64)
    const int line = (tid % kLines) * (128 / static_cast<int>(sizeof(T)));
    for (int k = tid / kLines; k < n_keys; k += kThreads / kLines) prefetch_l2(row_of(a.v_cache, k) + line);
  }
#endif

  // q, pre-scaled so scores come out in log2 units.
  const int qk_sub = lane % kQkLanes;
  float q[kGroup][kQkElems];
#pragma unroll
  for (int g = 0; g < kGroup; ++g) {
#pragma unroll
    for (int v = 0; v < kQkVecs; ++v) {
      const auto qv = load_vec<T, kVecBytes>(a.q + (head0 + g) * kHeadDim + (v * kQkLanes + qk_sub) * kVecElems);
#pragma unroll
      for (int e = 0; e < kVecElems; ++e) q[g][v * kVecElems + e] = to_float(qv.v[e]) * a.scale_log2;
    }
  }

  // Pass 1: scores[k][g] into LDS. Each lane issues the loads of kUnroll
  // keys before using any, so enough bytes are in flight per SM even when a
  // small batch leaves one block per SM.
  float* scores = smem;
  using V = Vec<T, kVecBytes>;
  for (int k0 = 0; k0 < n_keys; k0 += kQkKeysPerIter * kQkUnroll) {
    V kv[kQkUnroll][kQkVecs];
#pragma unroll
    for (int u = 0; u < kQkUnroll; ++u) {
      const int k = k0 + u * kQkKeysPerIter + wave * (FT_WAVE_SIZE / kQkLanes) + lane / kQkLanes;
      if (k < n_keys) {
        const T* krow = row_of(a.k_cache, k);
#pragma unroll
        for (int v = 0; v < kQkVecs; ++v) kv[u][v] = load_vec<T, kVecBytes>(krow + (v * kQkLanes + qk_sub) * kVecElems);
      }
    }
#pragma unroll
    for (int u = 0; u < kQkUnroll; ++u) {
      const int k = k0 + u * kQkKeysPerIter + wave * (FT_WAVE_SIZE / kQkLanes) + lane / kQkLanes;
      float s[kGroup];
#pragma unroll
      for (int g = 0; g < kGroup; ++g) s[g] = 0.0f;
      if (k < n_keys) {
#pragma unroll
        for (int v = 0; v < kQkVecs; ++v)
#pragma unroll
          for (int e = 0; e < kVecElems; ++e) {
            const float kf = to_float(kv[u][v].v[e]);
#pragma unroll
            for (int g = 0; g < kGroup; ++g) s[g] += q[g][v * kVecElems + e] * kf;
          }
      }
#pragma unroll
      for (int g = 0; g < kGroup; ++g) s[g] = attn_group_sum<kQkLanes>(s[g]);
      if (k < n_keys) {
#pragma unroll
        for (int g = 0; g < kGroup; ++g)
          if (g % kQkLanes == qk_sub) scores[k * kGroup + g] = s[g];
      }
    }
  }
  sync_threads();

  // Softmax over the partition, one wave per head.
  for (int g = wave; g < kGroup; g += kWaves) {
    float m = kAttnMinus;
    for (int k = lane; k < n_keys; k += FT_WAVE_SIZE) m = attn_max(m, scores[k * kGroup + g]);
    m = attn_group_max<FT_WAVE_SIZE>(m);
    float l = 0.0f;
    for (int k = lane; k < n_keys; k += FT_WAVE_SIZE) {
      const float p = fast_exp2(scores[k * kGroup + g] - m);
      scores[k * kGroup + g] = p;
      l += p;
    }
    l = attn_group_sum<FT_WAVE_SIZE>(l);
    if (lane == 0) {
      s_max[g] = m;
      s_sum[g] = l;
    }
  }
  sync_threads();

  // Pass 2: weights times V, one 16-byte chunk of the row per lane,
  // kVUnroll keys' loads in flight per lane.
  const int v_sub = lane % kVLanes;
  float acc[kGroup][kVecElems];
#pragma unroll
  for (int g = 0; g < kGroup; ++g)
#pragma unroll
    for (int e = 0; e < kVecElems; ++e) acc[g][e] = 0.0f;
  for (int k0 = 0; k0 < n_keys; k0 += kVKeysPerIter * kVUnroll) {
    V vv[kVUnroll];
#pragma unroll
    for (int u = 0; u < kVUnroll; ++u) {
      const int k = k0 + u * kVKeysPerIter + wave * kVKeysPerWave + lane / kVLanes;
      if (k < n_keys) vv[u] = load_vec<T, kVecBytes>(row_of(a.v_cache, k) + v_sub * kVecElems);
    }
#pragma unroll
    for (int u = 0; u < kVUnroll; ++u) {
      const int k = k0 + u * kVKeysPerIter + wave * kVKeysPerWave + lane / kVLanes;
      if (k < n_keys) {
        float p[kGroup];
#pragma unroll
        for (int g = 0; g < kGroup; ++g) p[g] = scores[k * kGroup + g];
#pragma unroll
        for (int e = 0; e < kVecElems; ++e) {
          const float vf = to_float(vv[u].v[e]);
#pragma unroll
          for (int g = 0; g < kGroup; ++g) acc[g][e] += p[g] * vf;
        }
      }
    }
  }
  // Sum the keys of a wave (lanes with the same v_sub), then the waves.
#pragma unroll
  for (int mask = kVLanes; mask < FT_WAVE_SIZE; mask <<= 1)
#pragma unroll
    for (int g = 0; g < kGroup; ++g)
#pragma unroll
      for (int e = 0; e < kVecElems; ++e) acc[g][e] += shfl_xor(acc[g][e], mask);
  sync_threads();  // scores are dead; smem becomes the per-wave partial sums
  float* red = smem;
  if (lane < kVLanes) {
#pragma unroll
    for (int g = 0; g < kGroup; ++g)
#pragma unroll
      for (int e = 0; e < kVecElems; ++e) red[(wave * kGroup + g) * kHeadDim + v_sub * kVecElems + e] = acc[g][e];
  }
  sync_threads();
  for (int i0 = 0; i0 < kOut4; i0 += kThreads) {  // uniform trip count: the q8 store shuffles
    const bool active = i0 + tid < kOut4;
    const int i = active ? 4 * (i0 + tid) : 0;
    const int g = i / kHeadDim, d = i % kHeadDim;
    const auto sum_w = [&](int e) {
      float o = 0.0f;
#pragma unroll
      for (int w = 0; w < kWaves; ++w) o += red[w * kGroup * kHeadDim + i + e];
      return o;
    };
    // A context that one partition holds (the other blocks of this sequence
    // and KV head have no keys) needs no merge: its block writes the output
    // itself, as when the launch has one partition, and leaves the counter.
    if (a.direct || ctx <= span) {
      const float inv = fast_rcp(s_sum[g]);
      const float o[4] = {sum_w(0) * inv, sum_w(1) * inv, sum_w(2) * inv, sum_w(3) * inv};
      attn_store_out4<T, kHeadDim>(a.out, a.q8, a.n_seqs, a.n_heads, head0 + g, d, o, active);
    } else if (active) {
      const long long p = (head0 + g) * a.max_parts + part;
      Vec<float, 16> o;
#pragma unroll
      for (int e = 0; e < 4; ++e) o.v[e] = sum_w(e);
      store_vec<float, 16>(a.part_out + p * kHeadDim + d, o);
      if (d == 0) {
        a.part_ml[2 * p] = s_max[g];
        a.part_ml[2 * p + 1] = s_sum[g];
      }
    }
  }
  if (a.direct || ctx <= span) return;

  // The last of this (sequence, KV head)'s partitions to finish merges them.
  __shared__ int s_last;
  const int n_parts = attn_min((ctx + span - 1) / span, a.max_parts);
  if (!last_block_to_arrive(a.counters + block_y(), n_parts, &s_last)) return;
  decode_merge<T, kHeadDim, kGroup, kThreads>(a, head0, n_parts, smem, s_max, s_sum);
}

// ---- prefill / extend ------------------------------------------------------------

template <typename T>
struct PrefillArgs {
  const T* q;                // [n_q_tokens, n_heads, head_dim]
  const int* q_start;        // [n_seqs + 1]
  const T* k_cache;
  const T* v_cache;
  const int* block_tables;   // [n_seqs, max_blocks]
  const int* context_lens;   // [n_seqs]
  T* out;                    // [n_q_tokens, n_heads * head_dim]
  float scale_log2;
  int n_heads;
  int n_kv_heads;
  int max_blocks;
  int row_tiles;             // grid x: tiles of (token, head) rows per sequence
};

// The rows of one tile: row r is new token r / kGroup, head kvh * kGroup +
// r % kGroup. Tiles are handed out last first, so the long causal tiles start
// before the short ones.
struct PrefillTile {
  int seq, kvh, q0, q_len, ctx, row_base, rows;
  int min_pos, max_pos;  // cache positions of the tile's first and last rows' tokens
  const int* table;      // the sequence's block table
  // Cache position of the new token behind row r (relative to row_base), or
  // -1 for a row past the end: it then attends to nothing.
  template <int kGroup>
  FT_DEVICE int pos(int r) const {
    return row_base + r < rows ? ctx - q_len + (row_base + r) / kGroup : -1;
  }
};

template <typename T, int kGroup>
FT_DEVICE bool prefill_tile(const PrefillArgs<T>& a, int tile_rows, PrefillTile* t) {
  t->seq = block_y() / a.n_kv_heads;
  t->kvh = block_y() % a.n_kv_heads;
  t->q0 = a.q_start[t->seq];
  t->q_len = a.q_start[t->seq + 1] - t->q0;
  t->ctx = a.context_lens[t->seq];
  t->rows = t->q_len * kGroup;
  t->row_base = (a.row_tiles - 1 - block_x()) * tile_rows;
  if (t->row_base >= t->rows) return false;
  const int last = attn_min(t->row_base + tile_rows, t->rows) - 1;
  t->min_pos = t->ctx - t->q_len + t->row_base / kGroup;
  t->max_pos = t->ctx - t->q_len + last / kGroup;
  t->table = a.block_tables + static_cast<long long>(t->seq) * a.max_blocks;
  return true;
}

// Portable path: kSplit lanes per row split head_dim; K/V tiles of kKeys keys
// are staged in LDS as f32 (converted once per tile, not once per row).
template <typename T, int kHeadDim, int kGroup, int kBlockSize, int kRows, int kSplit, int kKeys>
FT_DEVICE void attention_prefill_fma(const PrefillArgs<T>& a) {
  constexpr int kThreads = kRows * kSplit;
  constexpr int kD = kHeadDim / kSplit;
  constexpr int kVecElems = 16 / static_cast<int>(sizeof(T));
  constexpr int kChunks = kHeadDim / kVecElems;
  constexpr int kStride = kHeadDim + 4;  // pad: rows start on different banks, 16-byte aligned
  static_assert(kD % 4 == 0 && kSplit <= FT_WAVE_SIZE && FT_WAVE_SIZE % kSplit == 0, "bad prefill fma tile");
  __shared__ __attribute__((aligned(16))) float sk[kKeys * kStride];
  __shared__ __attribute__((aligned(16))) float sv[kKeys * kStride];

  PrefillTile t;
  if (!prefill_tile<T, kGroup>(a, kRows, &t)) return;
  const int tid = thread_x(), r = tid / kSplit, sub = tid % kSplit;
  const int pos = t.pos<kGroup>(r);
  const int max_pos = t.max_pos;
  const int token = t.q0 + (t.row_base + r) / kGroup;
  const int head = t.kvh * kGroup + (t.row_base + r) % kGroup;
  const long long qo = (static_cast<long long>(token) * a.n_heads + head) * kHeadDim + sub * kD;

  float q[kD], acc[kD];
#pragma unroll
  for (int j = 0; j < kD; ++j) {
    q[j] = pos >= 0 ? to_float(a.q[qo + j]) * a.scale_log2 : 0.0f;
    acc[j] = 0.0f;
  }
  float m = kAttnMinus, l = 0.0f;
  const int* table = t.table;
  for (int k0 = 0; k0 <= max_pos; k0 += kKeys) {
    sync_threads();  // the previous tile is consumed
    for (int i = tid; i < kKeys * kChunks; i += kThreads) {
      const int key = i / kChunks, c = i % kChunks, p = k0 + key;
      float kf[kVecElems], vf[kVecElems];
      if (p <= max_pos) {
        const long long slot = static_cast<long long>(table[p / kBlockSize]) * kBlockSize + p % kBlockSize;
        const long long off = (slot * a.n_kv_heads + t.kvh) * kHeadDim + c * kVecElems;
        const auto kv = load_vec<T, 16>(a.k_cache + off), vv = load_vec<T, 16>(a.v_cache + off);
#pragma unroll
        for (int e = 0; e < kVecElems; ++e) {
          kf[e] = to_float(kv.v[e]);
          vf[e] = to_float(vv.v[e]);
        }
      } else {
#pragma unroll
        for (int e = 0; e < kVecElems; ++e) kf[e] = vf[e] = 0.0f;
      }
#pragma unroll
      for (int e = 0; e < kVecElems; ++e) {
        sk[key * kStride + c * kVecElems + e] = kf[e];
        sv[key * kStride + c * kVecElems + e] = vf[e];
      }
    }
    sync_threads();
    float s[kKeys];
    float mt = kAttnMinus;
#pragma unroll
    for (int kk = 0; kk < kKeys; ++kk) {
      float d = 0.0f;
#pragma unroll
      for (int j = 0; j < kD; j += 4) {
        const auto kv = *reinterpret_cast<const Vec<float, 16>*>(&sk[kk * kStride + sub * kD + j]);
        d += q[j] * kv.v[0] + q[j + 1] * kv.v[1] + q[j + 2] * kv.v[2] + q[j + 3] * kv.v[3];
      }
      d = attn_group_sum<kSplit>(d);
      s[kk] = k0 + kk <= pos ? d : attn_neg_inf();
      mt = attn_max(mt, s[kk]);
    }
    const float m_new = attn_max(m, mt);
    const float corr = fast_exp2(m - m_new);
    m = m_new;
    l *= corr;
#pragma unroll
    for (int j = 0; j < kD; ++j) acc[j] *= corr;
#pragma unroll
    for (int kk = 0; kk < kKeys; ++kk) {
      const float p = fast_exp2(s[kk] - m);
      l += p;
#pragma unroll
      for (int j = 0; j < kD; j += 4) {
        const auto vv = *reinterpret_cast<const Vec<float, 16>*>(&sv[kk * kStride + sub * kD + j]);
        acc[j] += p * vv.v[0];
        acc[j + 1] += p * vv.v[1];
        acc[j + 2] += p * vv.v[2];
        acc[j + 3] += p * vv.v[3];
      }
    }
  }
  if (pos < 0) return;
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
  for (int j = 0; j < kD; ++j) a.out[qo + j] = from_float<T>(acc[j] * inv);
}

}  // namespace ft

#if defined(FT_NVIDIA)
#include "attention_mma.h"
#endif
