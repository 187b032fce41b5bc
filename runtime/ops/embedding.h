// Embedding gather: out[i, :] = table[ids[i], :].
//
// The table is the GGUF token_embd tensor {hidden, vocab} (a row per token) of
// any type matmul supports (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K);
// quantized rows are dequantized. ids are int32 [n]; an id outside
// [0, vocab) writes zeros on the GPU and is an error on the CPU.
#pragma once

#include "runtime/ops/matmul.h"

namespace ft {

// `table` uses WeightView with n = vocab, k = hidden.
Status embedding(OpContext& ctx, DType out_dtype, const WeightView& table, DeviceBuffer ids, int n_tokens,
                 DeviceBuffer out);

Status embedding_reference(GgmlType type, const uint8_t* table, int vocab, int hidden, const int32_t* ids,
                           int n_tokens, float* out);

}  // namespace ft
