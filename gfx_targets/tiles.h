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

struct Tiles {
  NormTile norm;
  ActTile act;
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

}  // namespace ft
