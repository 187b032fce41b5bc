// matmul against the CPU reference: every weight type ft ships, m = 1..8 on
// the GEMV kernels (and a few m > 8 cases through the GEMM), odd n, k on and
// off the wave step, with and without bias.
#include <fmt/format.h>

#include "runtime/model/quantize.h"
#include "runtime/ops/activation.h"
#include "runtime/ops/matmul.h"
#include "tests/gpu/device_data.h"
#include "tests/gpu/op_check.h"

namespace ft::gpu {
namespace {

struct MatmulCase {
  GgmlType type;
  DType act;
  int m, n, k;
  bool bias;
  bool gated = false;  // x = SiLU(gate) * up from an [m, 2k] gate_up (matmul_gated)
};

bool is_dense(GgmlType t) { return t == GgmlType::kF32 || t == GgmlType::kF16 || t == GgmlType::kBF16; }

// The GGUF bytes of a random [n, k] weight, row by row.
Result<std::vector<uint8_t>> random_weight(GgmlType type, int n, int k, std::mt19937& rng) {
  const uint64_t row_bytes = *ggml_bytes(type, k);
  std::vector<uint8_t> bytes(row_bytes * n);
  std::normal_distribution<float> dist(0.0f, 0.05f);
  std::vector<float> row(k);
  for (int j = 0; j < n; ++j) {
    for (auto& v : row) v = dist(rng);
    FT_RETURN_IF_ERROR(encode_row(type, row.data(), k, {bytes.data() + row_bytes * j, row_bytes}));
  }
  return bytes;
}

Result<double> check_one(OpContext& ctx, const MatmulCase& c, std::mt19937& rng) {
  FT_ASSIGN_OR_RETURN(auto wbytes, random_weight(c.type, c.n, c.k, rng));
  auto x = random_values(static_cast<size_t>(c.m) * c.k * (c.gated ? 2 : 1), c.act, rng);
  auto bias = random_values(c.n, c.act, rng);
  std::vector<float> ref(static_cast<size_t>(c.m) * c.n);
  std::vector<float> x_ref = x;
  if (c.gated) {  // the two-op reference: the activation's output is stored in act, then multiplied
    x_ref.resize(static_cast<size_t>(c.m) * c.k);
    gated_act_reference(GatedAct::kSilu, c.m, c.k, x.data(), x_ref.data());
    x_ref = decode(encode(x_ref, c.act), c.act);
  }
  FT_RETURN_IF_ERROR(matmul_reference(c.type, wbytes.data(), c.n, c.k, x_ref.data(), c.m, ref.data(),
                                      c.bias ? bias.data() : nullptr));
  Backend& b = ctx.backend();
  FT_ASSIGN_OR_RETURN(DeviceBuffer dw, b.alloc(wbytes.size()));
  FT_RETURN_IF_ERROR(b.copy_to_device(dw, wbytes.data(), wbytes.size()));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dx, upload(b, x, c.act));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dbias, upload(b, bias, c.act));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dy, b.alloc(ref.size() * dtype_size(c.act)));
  FT_RETURN_IF_ERROR(b.fill_bytes(dy, 0xFF));
  WeightView w{c.type, c.n, c.k, dw};
  Status s;
  if (c.gated) {
    auto tmp = b.alloc(static_cast<size_t>(c.m) * c.k * dtype_size(c.act));
    s = tmp.status();
    if (s.ok()) s = matmul_gated(ctx, c.act, GatedAct::kSilu, w, dx, c.m, dy, *tmp);
    if (s.ok()) s = b.synchronize();
    if (tmp.ok()) b.free(*tmp);
  } else {
    s = matmul(ctx, c.act, w, dx, c.m, dy, c.bias ? dbias : DeviceBuffer{});
  }
  if (s.ok()) s = b.synchronize();
  Result<std::vector<float>> got = s.ok() ? download(b, dy, c.act) : Result<std::vector<float>>(s);
  for (auto buf : {dw, dx, dbias, dy}) b.free(buf);
  FT_RETURN_IF_ERROR(got.status());
  return rel_l2(*got, ref);
}

}  // namespace

std::vector<CheckCase> check_matmul(OpContext& ctx, std::mt19937& rng) {
  std::vector<MatmulCase> cases;
  const GgmlType kTypes[] = {GgmlType::kBF16, GgmlType::kF16, GgmlType::kF32,  GgmlType::kQ8_0,
                             GgmlType::kQ4_0, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K};
  for (GgmlType t : kTypes) {
    const bool dense = is_dense(t);
    // k = 3584 leaves a partial last wave step for every type; 1000 (dense)
    // and 96 (32-element blocks) are off every power of two.
    const int odd_k = dense ? 1000 : (ggml_traits(t).block_size == 32 ? 96 : 3584);
    for (int m = 1; m <= 8; ++m) cases.push_back({t, DType::kBF16, m, 515, 4096, m % 2 == 1});
    cases.push_back({t, DType::kBF16, 1, 4097, 3584, false});
    cases.push_back({t, DType::kBF16, 3, 37, odd_k, true});
    // A single output only for dense weights: with the int8 x of the dot
    // path, one dot product that nearly cancels has a large relative error
    // while its absolute error is as small as anywhere else.
    cases.push_back({t, DType::kBF16, 1, dense ? 1 : 5, 1024, true});
    cases.push_back({t, DType::kF16, 1, 1029, 4096, true});
    cases.push_back({t, DType::kF16, 8, 258, 2048, false});
    cases.push_back({t, DType::kF32, 2, 300, 1024, true});
  }
  // m > 8 goes to the GEMM.
  for (GgmlType t : {GgmlType::kBF16, GgmlType::kQ4_K}) cases.push_back({t, DType::kBF16, 17, 256, 4096, true});
  // SiLU(gate) * up fused into the GEMV's x (and, at m > 8, the two ops).
  for (GgmlType t : {GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K}) {
    cases.push_back({t, DType::kBF16, 1, 515, 12288, false, true});
    cases.push_back({t, DType::kBF16, 5, 300, 3072, false, true});
  }
  cases.push_back({GgmlType::kF16, DType::kF16, 2, 258, 2048, false, true});
  cases.push_back({GgmlType::kF32, DType::kF32, 1, 37, 1000, false, true});
  cases.push_back({GgmlType::kBF16, DType::kBF16, 12, 256, 4096, false, true});

  std::vector<CheckCase> out;
  for (const auto& c : cases) {
    // Quantized weights go through the int8 x quantization of the dot path
    // (4e-3 to 6e-3 relative L2 over many outputs), so f32 activations are held
    // to the 16-bit tolerance; the 5-output case has little averaging (2e-2).
    double tol = 0;
    if (!is_dense(c.type)) tol = c.n < 16 ? 2e-2 : c.act == DType::kF32 ? 1e-2 : 0;
    out.push_back(make_case(fmt::format("matmul {}{}", ggml_type_name(c.type), c.gated ? " silu" : ""), c.act,
                            fmt::format("{}x{}x{}{}", c.m, c.n, c.k, c.bias ? "+b" : ""), check_one(ctx, c, rng), tol));
  }
  return out;
}

}  // namespace ft::gpu
