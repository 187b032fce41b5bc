// Embedding gather from tables of every GGUF type ft reads, against the CPU
// reference (which dequantizes the same bytes).
#include "jit/catalog.h"
#include "runtime/model/quantize.h"
#include "runtime/ops/embedding.h"
#include "tests/gpu/device_data.h"
#include "tests/gpu/op_check.h"

namespace ft::gpu {
namespace {

Result<double> check_one(OpContext& ctx, DType dt, GgmlType type, int vocab, int hidden, int n, std::mt19937& rng) {
  const size_t row_bytes = *ggml_bytes(type, hidden);
  std::vector<uint8_t> table(row_bytes * vocab);
  auto values = random_values(static_cast<size_t>(vocab) * hidden, DType::kF32, rng);
  for (int r = 0; r < vocab; ++r)
    FT_RETURN_IF_ERROR(encode_row(type, values.data() + static_cast<size_t>(r) * hidden, hidden,
                                  {table.data() + row_bytes * r, row_bytes}));
  std::uniform_int_distribution<int> pick(0, vocab - 1);
  std::vector<int32_t> ids(n);
  for (auto& id : ids) id = pick(rng);
  ids[0] = vocab - 1;  // the last row
  std::vector<float> ref(static_cast<size_t>(n) * hidden);
  FT_RETURN_IF_ERROR(embedding_reference(type, table.data(), vocab, hidden, ids.data(), n, ref.data()));
  // The kernel writes dt: compare against the reference rounded the same way.
  for (auto& v : ref) v = decode(encode({v}, dt), dt)[0];
  Backend& b = ctx.backend();
  FT_ASSIGN_OR_RETURN(DeviceBuffer dtable, b.alloc(table.size()));
  FT_ASSIGN_OR_RETURN(WeightLayout layout, upload_weight(b, type, table, dtable));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dids, b.alloc(ids.size() * 4));
  FT_RETURN_IF_ERROR(b.copy_to_device(dids, ids.data(), ids.size() * 4));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dout, b.alloc(ref.size() * dtype_size(dt)));
  FT_RETURN_IF_ERROR(b.fill_bytes(dout, 0xFF));
  FT_RETURN_IF_ERROR(embedding(ctx, dt, WeightView{type, vocab, hidden, dtable, layout}, dids, n, dout));
  FT_RETURN_IF_ERROR(b.synchronize());
  FT_ASSIGN_OR_RETURN(auto got, download(b, dout, dt));
  for (auto buf : {dtable, dids, dout}) b.free(buf);
  return rel_l2(got, ref);
}

}  // namespace

std::vector<CheckCase> check_embedding(OpContext& ctx, std::mt19937& rng) {
  std::vector<CheckCase> cases;
  for (DType dt : {DType::kF32, DType::kBF16, DType::kF16})
    for (GgmlType type : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_0,
                          GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K})
      for (auto [vocab, hidden, n] : {std::tuple{1000, 256, 7}, {151, 4096, 33}, {3000, 768, 1}}) {
        // Exact up to the output rounding, which the reference applies too (a
        // product rounded differently by an FMA can land an element one
        // bf16/f16 step away, hence 1e-3 there).
        cases.push_back(make_case(fmt::format("embedding {}", ggml_type_name(type)), dt,
                                  fmt::format("{}x{} n{}", vocab, hidden, n),
                                  check_one(ctx, dt, type, vocab, hidden, n, rng), dt == DType::kF32 ? 1e-6 : 1e-3));
      }
  return cases;
}

}  // namespace ft::gpu
