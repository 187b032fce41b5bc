// Tile configurations per kernel family. Each target in targets.cpp carries
// one Tiles value; launchers read it to pick template arguments, and the JIT
// instantiates exactly those. One source of truth, no device-side copy.
#pragma once

namespace ft {

// One block per row; each thread keeps its slice of the row in registers.
struct NormTile {
  int block_threads;  // threads per row
  int load_bytes;     // bytes per vector load (16 = dwordx4 / LDG.128)
};

// Elementwise gated activation over [rows, 2 * inter] -> [rows, inter].
struct ActTile {
  int block_threads;
  int load_bytes;
  int vectors_per_thread;  // loads in flight per thread, to cover memory latency
};

// Decode GEMV (kernel_src/gemv.hip): a block of block_threads / wave_size
// waves owns `rows` rows of W and splits K between its waves. The rows share
// each x load and x quantization; registers grow with rows x m, so the
// m = 4 and 8 buckets use rows_wide_m.
struct GemvTile {
  int block_threads;
  int rows;         // m = 1 and 2
  int rows_wide_m;  // m = 4 and 8
};

// RoPE + q/k norm + KV write (kernel_src/rope.hip).
struct RopeTile {
  int lanes_per_head;   // 8, 16 or 32: a lane group; fewer means wider loads
  int heads_per_block;  // lane groups per block: block = lanes_per_head * heads_per_block threads
  int heads_per_group;  // most heads one lane group takes (a launch on many tokens): their
                        // loads are all in flight at once and they share one sin/cos
};

// Paged attention (kernel_src/attention.hip).
struct AttnTile {
  int decode_waves;      // waves per decode block (one KV head, one partition)
  int decode_partition;  // most context tokens one decode block holds (its scores in LDS); a
                         // short batch splits its contexts finer to fill the GPU
  // Portable f32-FMA prefill: rows (token, head) x split lanes per row, K/V
  // tiles of prefill_keys keys staged as f32 in LDS. (The NVIDIA mma.sync
  // prefill has its own fixed 64 x 64 tile.)
  int prefill_rows;
  int prefill_split;
  int prefill_keys;
};
// The decode workspace is sized for this partition (the smallest allowed),
// so attention_decode_workspace_bytes() needs no target.
constexpr int kMinDecodePartition = 256;

// Prefill GEMM on the matrix cores (kernel_src/gemm.hip): a block of
// warps_m x warps_n waves computes a block_m x block_n output tile, staging K
// block_k at a time through `stages` LDS buffers (cp.async on NVIDIA; AMD is
// register-staged double buffering, stages = 2).
struct GemmTile {
  int block_m;
  int block_n;
  int block_k;  // 16, 32 or 64 (one to four 16-byte chunks per row, swizzled)
  int warps_m;
  int warps_n;
  int stages;
};

struct Tiles {
  NormTile norm;
  ActTile act;
  RopeTile rope;
  AttnTile attn;
  GemmTile gemm;
  // The GEMM for a few rows (batched decode: 9 to 2 x block_m rows), where
  // the large tile leaves most compute units idle: narrow tiles so every
  // unit streams its share of W. block_m == 0: none, the large tile runs.
  GemmTile gemm_small;
  GemvTile gemv;
};

constexpr bool valid(const NormTile& t) {
  return t.block_threads >= 32 && t.block_threads <= 1024 && t.block_threads % 32 == 0 &&
         (t.load_bytes == 4 || t.load_bytes == 8 || t.load_bytes == 16);
}
constexpr bool valid(const ActTile& t) {
  return t.block_threads >= 32 && t.block_threads <= 1024 && t.block_threads % 32 == 0 &&
         (t.load_bytes == 4 || t.load_bytes == 8 || t.load_bytes == 16) && t.vectors_per_thread >= 1 &&
         t.vectors_per_thread <= 8;
}

constexpr bool valid(const RopeTile& t) {
  return (t.lanes_per_head == 8 || t.lanes_per_head == 16 || t.lanes_per_head == 32) && t.heads_per_block >= 1 &&
         t.lanes_per_head * t.heads_per_block >= 32 && t.lanes_per_head * t.heads_per_block <= 1024 &&
         t.heads_per_group >= 1 && t.heads_per_group <= 8;
}
constexpr bool valid(const AttnTile& t) {
  return t.decode_waves >= 1 && t.decode_waves <= 16 && t.decode_partition >= kMinDecodePartition &&
         t.decode_partition % 16 == 0 && t.decode_partition <= 1024 && t.prefill_split >= 1 &&
         t.prefill_split <= 8 && (t.prefill_split & (t.prefill_split - 1)) == 0 &&
         t.prefill_rows * t.prefill_split <= 1024 && t.prefill_keys >= 8 && t.prefill_keys <= 64;
}

constexpr bool valid(const GemvTile& t) {
  // The final sum takes one thread per output: rows * 8 <= block_threads.
  return t.block_threads >= 64 && t.block_threads <= 1024 && t.block_threads % 64 == 0 && t.rows >= 1 &&
         t.rows <= 8 && t.rows_wide_m >= 1 && t.rows_wide_m <= 8 && t.rows * 2 <= t.block_threads &&
         t.rows_wide_m * 8 <= t.block_threads;
}

constexpr bool valid(const GemmTile& t) {
  const int threads = t.warps_m * t.warps_n * 32;
  return (t.block_k == 16 || t.block_k == 32 || t.block_k == 64) && t.warps_m >= 1 && t.warps_n >= 1 &&
         threads <= 1024 && t.block_m % (16 * t.warps_m) == 0 && t.block_n % (16 * t.warps_n) == 0 &&
         t.stages >= 2 && t.stages <= 4;
}

}  // namespace ft
