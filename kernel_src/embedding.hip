// Embedding gather: out[t, :] = dequant(table row ids[t]). One thread per
// 32-element group of a row; the row's blocks are decoded with GgmlGroup.
// Ids outside [0, vocab) give a zero row (the host checks ids it produced).
#include "ggml_blocks.h"

namespace ft {

template <typename T>
struct EmbeddingArgs {
  const ft_u8* table;  // GGUF tensor bytes, vocab rows
  const int* ids;      // [n_tokens]
  T* out;              // [n_tokens, hidden]
  long long blocks;    // blocks in the table (the device layout's planes span them all)
  int vocab;
  int groups;          // hidden / 32
};

template <typename T, int kType, int kThreads>
FT_DEVICE void embedding(const EmbeddingArgs<T>& a) {
  using G = GgmlGroup<kType>;
  const int t = block_y();
  const int g = block_x() * kThreads + thread_x();
  if (g >= a.groups) return;
  const int id = a.ids[t];
  T* out = a.out + (static_cast<long long>(t) * a.groups + g) * 32;
  float y[32];
  if (id < 0 || id >= a.vocab) {
    for (int l = 0; l < 32; ++l) y[l] = 0.0f;
  } else {
    const long long row_blocks = a.groups / G::kGroups;
    G::decode(a.table, a.blocks, id * row_blocks + g / G::kGroups, g % G::kGroups, y);
  }
#pragma unroll
  for (int l = 0; l < 32; ++l) out[l] = from_float<T>(y[l]);
}

}  // namespace ft
