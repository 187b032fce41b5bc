// matmul against the CPU reference: every weight type ft ships, m = 1..8 on
// the GEMV kernels (and a few m > 8 cases through the GEMM), odd n, k on and
// off the wave step, with and without bias.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "runtime/model/quantize.h"
#include "runtime/ops/activation.h"
#include "runtime/ops/matmul.h"
#include "runtime/ops/norm.h"
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
  FT_ASSIGN_OR_RETURN(WeightLayout layout, upload_weight(b, c.type, wbytes, dw));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dx, upload(b, x, c.act));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dbias, upload(b, bias, c.act));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dy, b.alloc(ref.size() * dtype_size(c.act)));
  FT_RETURN_IF_ERROR(b.fill_bytes(dy, 0xFF));
  WeightView w{c.type, c.n, c.k, dw, layout};
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

// matmul_stacked: weights of different types side by side on one x, each
// writing its columns of y (the GEMV path quantizes x once). With norm_q8,
// x is an RMSNorm's output and the norm also writes it quantized, as the
// executor does for q|k|v and gate|up: the result must equal, bit for bit,
// the same matmul quantizing x itself. The error is against the CPU
// reference on the GPU norm's (rounded) output.
Result<double> check_stacked(OpContext& ctx, const std::vector<std::pair<GgmlType, int>>& spec, int m, int k,
                             bool with_bias, bool norm_q8, std::mt19937& rng) {
  const DType act = DType::kBF16;
  Backend& b = ctx.backend();
  std::vector<DeviceBuffer> owned;
  auto alloc = [&](size_t bytes) -> Result<DeviceBuffer> {
    FT_ASSIGN_OR_RETURN(DeviceBuffer d, b.alloc(bytes));
    owned.push_back(d);
    return d;
  };
  auto run = [&]() -> Result<double> {
    int total = 0;
    for (auto [t, n] : spec) total += n;
    auto x = random_values(static_cast<size_t>(m) * k, act, rng, 2.0f);
    auto bias = random_values(total, act, rng);
    FT_ASSIGN_OR_RETURN(DeviceBuffer dx, alloc(x.size() * 2));
    FT_RETURN_IF_ERROR(b.copy_to_device(dx, encode(x, act).data(), x.size() * 2));
    FT_ASSIGN_OR_RETURN(DeviceBuffer dbias, alloc(bias.size() * 2));
    FT_RETURN_IF_ERROR(b.copy_to_device(dbias, encode(bias, act).data(), bias.size() * 2));
    DeviceBuffer dq8;
    if (norm_q8) {  // x <- RMSNorm(x), written as bf16 and quantized
      auto w = random_values(k, act, rng);
      FT_ASSIGN_OR_RETURN(DeviceBuffer dw, alloc(w.size() * 2));
      FT_RETURN_IF_ERROR(b.copy_to_device(dw, encode(w, act).data(), w.size() * 2));
      FT_ASSIGN_OR_RETURN(DeviceBuffer dh, alloc(x.size() * 2));
      FT_ASSIGN_OR_RETURN(dq8, alloc(matmul_q8_bytes(m, k)));
      FT_RETURN_IF_ERROR(b.fill_bytes(dq8, 0xFF));
      FT_RETURN_IF_ERROR(rmsnorm(ctx, act, {m, k, 1e-6f}, dx, dw, dh, dq8));
      FT_RETURN_IF_ERROR(b.synchronize());
      FT_ASSIGN_OR_RETURN(x, download(b, dh, act));
      dx = dh;
    }
    std::vector<WeightView> parts;
    std::vector<float> ref(static_cast<size_t>(m) * total);
    int col = 0;
    for (auto [t, n] : spec) {
      FT_ASSIGN_OR_RETURN(auto wbytes, random_weight(t, n, k, rng));
      std::vector<float> part(static_cast<size_t>(m) * n);
      FT_RETURN_IF_ERROR(matmul_reference(t, wbytes.data(), n, k, x.data(), m, part.data(),
                                          with_bias ? bias.data() + col : nullptr));
      for (int i = 0; i < m; ++i)
        std::copy_n(part.begin() + static_cast<size_t>(i) * n, n, ref.begin() + static_cast<size_t>(i) * total + col);
      FT_ASSIGN_OR_RETURN(DeviceBuffer dw, alloc(wbytes.size()));
      FT_ASSIGN_OR_RETURN(WeightLayout layout, upload_weight(b, t, wbytes, dw));
      parts.push_back({t, n, k, dw, layout});
      col += n;
    }
    int widest = 0;
    for (auto [t, n] : spec) widest = std::max(widest, n);
    FT_ASSIGN_OR_RETURN(DeviceBuffer tmp, alloc(static_cast<size_t>(m) * widest * 2));
    FT_ASSIGN_OR_RETURN(DeviceBuffer dy, alloc(ref.size() * 2));
    FT_RETURN_IF_ERROR(b.fill_bytes(dy, 0xFF));
    const DeviceBuffer db = with_bias ? dbias : DeviceBuffer{};
    FT_RETURN_IF_ERROR(matmul_stacked(ctx, act, parts, dx, m, dy, db, tmp, dq8));
    FT_RETURN_IF_ERROR(b.synchronize());
    FT_ASSIGN_OR_RETURN(auto got, download(b, dy, act));
    if (norm_q8) {
      FT_RETURN_IF_ERROR(b.fill_bytes(dy, 0xFF));
      FT_RETURN_IF_ERROR(matmul_stacked(ctx, act, parts, dx, m, dy, db, tmp));
      FT_RETURN_IF_ERROR(b.synchronize());
      FT_ASSIGN_OR_RETURN(auto self, download(b, dy, act));
      for (size_t i = 0; i < got.size(); ++i)
        if (std::memcmp(&got[i], &self[i], 4) != 0)
          return FT_ERROR(ErrorCode::kInternal, "output {}: {} from the norm's q8 x, {} quantizing x itself", i,
                          got[i], self[i]);
    }
    return rel_l2(got, ref);
  };
  Result<double> r = run();
  for (DeviceBuffer d : owned) b.free(d);
  return r;
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
  // Enough row groups for the persistent grid (one step of K per wave, more
  // than one resident round of groups): each block takes several groups;
  // 4099 rows are between one and two rounds on a 132-SM GPU, ragged.
  cases.push_back({GgmlType::kQ4_K, DType::kBF16, 1, 24576, 4096, false});
  cases.push_back({GgmlType::kQ4_K, DType::kBF16, 1, 4099, 4096, true});
  cases.push_back({GgmlType::kQ6_K, DType::kBF16, 1, 4099, 4096, false});
  cases.push_back({GgmlType::kQ6_K, DType::kBF16, 2, 30001, 4096, true});
  cases.push_back({GgmlType::kQ4_K, DType::kBF16, 4, 24573, 4096, true});
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
  // Stacked weights of different types (Q4_K_M's q|k with a Q6_K v), x from
  // the matmul's own quantization or from the RMSNorm's q8 output.
  using Parts = std::vector<std::pair<GgmlType, int>>;
  const std::pair<Parts, int> kStacked[] = {
      {{{GgmlType::kQ4_K, 515}, {GgmlType::kQ6_K, 300}}, 4096},
      {{{GgmlType::kQ4_K, 256}, {GgmlType::kBF16, 37}, {GgmlType::kQ8_0, 129}}, 1024},
      {{{GgmlType::kBF16, 64}, {GgmlType::kF16, 100}}, 512},
      {{{GgmlType::kQ4_K, 256}, {GgmlType::kQ6_K, 64}}, 4096},
  };
  for (const auto& [parts, k] : kStacked)
    for (int m : {1, 3, 8, 12, 32})
      for (bool norm_q8 : {false, true}) {
        // m > 8 runs the parts through the GEMM, whose n granule is 32.
        bool gemm_ok = true;
        for (auto [t, n] : parts) gemm_ok = gemm_ok && n % 32 == 0;
        if (m > 8 && !gemm_ok) continue;
        std::string types;
        for (auto [t, n] : parts) types += fmt::format("{}{}", types.empty() ? "" : "|", ggml_type_name(t));
        out.push_back(make_case(fmt::format("matmul_stacked{} {}", norm_q8 ? " norm_q8" : "", types), DType::kBF16,
                                fmt::format("{}x{}", m, k), check_stacked(ctx, parts, m, k, m % 2 == 1, norm_q8, rng)));
      }
  for (const auto& c : cases) {
    // Quantized weights go through the int8 x quantization of the dot path
    // (4e-3 to 6e-3 relative L2 over many outputs), so f32 activations are held
    // to the 16-bit tolerance; the 5-output case has little averaging (2e-2),
    // and so has the gated x: SiLU(gate) * up is heavy-tailed, so its int8
    // blocks lose more (9e-3 to 1.1e-2 measured on the H200 at every type).
    double tol = 0;
    if (!is_dense(c.type)) tol = c.n < 16 || c.gated ? 2e-2 : c.act == DType::kF32 ? 1e-2 : 0;
    out.push_back(make_case(fmt::format("matmul {}{}", ggml_type_name(c.type), c.gated ? " silu" : ""), c.act,
                            fmt::format("{}x{}x{}{}", c.m, c.n, c.k, c.bias ? "+b" : ""), check_one(ctx, c, rng), tol));
  }
  return out;
}

}  // namespace ft::gpu
