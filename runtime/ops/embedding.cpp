#include "runtime/ops/embedding.h"

#include <cstring>

#include "jit/catalog.h"

namespace ft {

Status embedding_reference(GgmlType type, const uint8_t* table, int vocab, int hidden, const int32_t* ids,
                           int n_tokens, float* out) {
  const auto row_bytes = ggml_bytes(type, static_cast<uint64_t>(hidden));
  if (!row_bytes)
    return FT_ERROR(ErrorCode::kInvalidArgument, "embedding: hidden {} does not fit {} blocks", hidden, ggml_type_name(type));
  for (int i = 0; i < n_tokens; ++i) {
    if (ids[i] < 0 || ids[i] >= vocab)
      return FT_ERROR(ErrorCode::kInvalidArgument, "embedding: token id {} outside the vocabulary of {}", ids[i], vocab);
    const uint8_t* row = table + *row_bytes * static_cast<size_t>(ids[i]);
    float* dst = out + static_cast<size_t>(i) * hidden;
    if (type == GgmlType::kF32) std::memcpy(dst, row, static_cast<size_t>(hidden) * 4);
    else FT_RETURN_IF_ERROR(dequantize_row(type, {row, *row_bytes}, dst, static_cast<size_t>(hidden)));
  }
  return Status();
}

Status embedding(OpContext& ctx, DType out_dtype, const WeightView& table, DeviceBuffer ids, int n_tokens,
                 DeviceBuffer out) {
  const auto row_bytes = ggml_bytes(table.type, static_cast<uint64_t>(table.k));
  if (!row_bytes || n_tokens <= 0 || table.data.bytes < *row_bytes * table.n ||
      ids.bytes < static_cast<size_t>(n_tokens) * 4 ||
      out.bytes < static_cast<size_t>(n_tokens) * table.k * dtype_size(out_dtype))
    return FT_ERROR(ErrorCode::kInvalidArgument, "embedding: bad shape ({} tokens, table [{}, {}] {}) or buffers too small",
                    n_tokens, table.n, table.k, ggml_type_name(table.type));
  FT_RETURN_IF_ERROR(check_layout(ctx.backend(), "embedding", table));
  if (ctx.on_cpu()) {
    FT_RETURN_IF_ERROR(check_cpu_dtype("embedding", out_dtype));
    return embedding_reference(table.type, host_ptr<const uint8_t>(table.data), table.n, table.k,
                               host_ptr<const int32_t>(ids), n_tokens, host_ptr<float>(out));
  }
  if (!embedding_supports(table.type) || table.k % 32 != 0)
    return FT_ERROR(ErrorCode::kUnsupported, "embedding: no GPU kernel for {} tables of width {}",
                    ggml_type_name(table.type), table.k);
  const KernelSpec spec = embedding_spec(ctx.facts(), out_dtype, table.type);
  FT_ASSIGN_OR_RETURN(KernelHandle k, ctx.kernel(spec));
  // Mirrors kernel_src/embedding.hip's EmbeddingArgs<T>.
  struct {
    uint64_t table, ids, out;
    long long blocks;
    int vocab;
    int groups;
  } args{table.data.ptr, ids.ptr, out.ptr, static_cast<long long>(weight_blocks(table)), table.n, table.k / 32};
  LaunchDims dims;
  dims.grid[0] = static_cast<unsigned>((args.groups + spec.block_threads - 1) / spec.block_threads);
  dims.grid[1] = static_cast<unsigned>(n_tokens);
  dims.block[0] = static_cast<unsigned>(spec.block_threads);
  return ctx.backend().launch(k, dims, &args, sizeof args);
}

}  // namespace ft
