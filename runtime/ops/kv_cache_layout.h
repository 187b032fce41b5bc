// The paged KV cache as the kernels see it.
//
// Per layer, K and V are each [num_blocks, block_size, n_kv_heads, head_dim]
// of the activation dtype. A token's slot is block * block_size + offset in
// block; element (slot, h, d) sits at (slot * n_kv_heads + h) * head_dim + d.
// A sequence's block table is int32 [max_blocks_per_seq]: logical block i of
// the sequence lives in physical block table[i].
#pragma once

#include <cstddef>

namespace ft {

struct KvLayout {
  int num_blocks = 0;
  int block_size = 16;
  int n_kv_heads = 0;
  int head_dim = 0;

  size_t elements() const {
    return static_cast<size_t>(num_blocks) * block_size * n_kv_heads * head_dim;
  }
};

}  // namespace ft
