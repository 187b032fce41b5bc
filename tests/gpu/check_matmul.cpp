// matmul against the CPU reference: every weight type ft ships, m = 1..8 on
// the GEMV kernels (and a few m > 8 cases through the GEMM), odd n, k on and
// off the wave step, with and without bias.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <tuple>

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

// matmul (gated: matmul_gated) with the add_rmsnorm after it
// (AddRmsNormAfter), as the executor runs the o and down projections: at
// m = 1 the GEMV's last block runs the norm in the same launch (its block
// sum has another thread count than the norm kernel's, so out may differ in
// the last bit). On three launches in a row (the block counter must come
// back to zero): residual_out must equal the two GPU ops' byte for byte, the
// q8 out must be quantize_x of out, and out is held to the CPU reference of
// the two ops (the error reported, the worst launch's).
Result<double> check_norm_after(OpContext& ctx, GgmlType type, int m, int n, int k, bool gated, bool q8,
                                std::mt19937& rng) {
  const DType act = DType::kBF16;
  FT_ASSIGN_OR_RETURN(auto wbytes, random_weight(type, n, k, rng));
  auto x = random_values(static_cast<size_t>(m) * k * (gated ? 2 : 1), act, rng);
  auto res = random_values(static_cast<size_t>(m) * n, act, rng, 2.0f);
  auto nw = random_values(n, act, rng);
  std::vector<float> x_ref = x;
  if (gated) {
    x_ref.resize(static_cast<size_t>(m) * k);
    gated_act_reference(GatedAct::kSilu, m, k, x.data(), x_ref.data());
    x_ref = decode(encode(x_ref, act), act);
  }
  const RmsNormShape shape{m, n, 1e-6f};
  std::vector<float> y_ref(static_cast<size_t>(m) * n), ref(y_ref.size()), ref_res(y_ref.size());
  FT_RETURN_IF_ERROR(matmul_reference(type, wbytes.data(), n, k, x_ref.data(), m, y_ref.data()));
  y_ref = decode(encode(y_ref, act), act);  // the GEMV stores y in act before the norm reads it
  rmsnorm_reference(shape, y_ref.data(), nw.data(), ref.data(), res.data(), ref_res.data());

  Backend& b = ctx.backend();
  const size_t out_bytes = y_ref.size() * dtype_size(act), q8_bytes = q8 ? matmul_q8_bytes(m, n) : 0;
  std::vector<DeviceBuffer> bufs;
  auto alloc = [&](size_t bytes) -> Result<DeviceBuffer> {
    FT_ASSIGN_OR_RETURN(DeviceBuffer d, b.alloc(std::max<size_t>(bytes, 256)));
    bufs.push_back(d);
    return d;
  };
  auto run = [&]() -> Result<double> {
    FT_ASSIGN_OR_RETURN(DeviceBuffer dw, alloc(wbytes.size()));
    FT_ASSIGN_OR_RETURN(WeightLayout layout, upload_weight(b, type, wbytes, dw));
    FT_ASSIGN_OR_RETURN(DeviceBuffer dx, upload(b, x, act));
    bufs.push_back(dx);
    FT_ASSIGN_OR_RETURN(DeviceBuffer dres, upload(b, res, act));
    bufs.push_back(dres);
    FT_ASSIGN_OR_RETURN(DeviceBuffer dnw, upload(b, nw, act));
    bufs.push_back(dnw);
    FT_ASSIGN_OR_RETURN(DeviceBuffer dy, alloc(out_bytes));
    FT_ASSIGN_OR_RETURN(DeviceBuffer tmp, alloc(static_cast<size_t>(m) * k * dtype_size(act)));
    FT_ASSIGN_OR_RETURN(DeviceBuffer counter, alloc(4));
    FT_RETURN_IF_ERROR(b.fill_bytes(counter, 0));
    const WeightView w{type, n, k, dw, layout};
    // outs[0..2]: out, residual_out, q8; the separate ops first, then the fused launches.
    auto outputs = [&]() -> Result<std::vector<DeviceBuffer>> {
      std::vector<DeviceBuffer> o;
      for (size_t bytes : {out_bytes, out_bytes, q8_bytes}) {
        FT_ASSIGN_OR_RETURN(DeviceBuffer d, alloc(bytes));
        FT_RETURN_IF_ERROR(b.fill_bytes(d, 0xFF));
        o.push_back(d);
      }
      return o;
    };
    auto bytes_of = [&](const std::vector<DeviceBuffer>& o) -> Result<std::vector<uint8_t>> {
      std::vector<uint8_t> all(2 * out_bytes + q8_bytes);
      FT_RETURN_IF_ERROR(b.synchronize());
      FT_RETURN_IF_ERROR(b.copy_to_host(all.data(), o[0], out_bytes));
      FT_RETURN_IF_ERROR(b.copy_to_host(all.data() + out_bytes, o[1], out_bytes));
      if (q8) FT_RETURN_IF_ERROR(b.copy_to_host(all.data() + 2 * out_bytes, o[2], q8_bytes));
      return all;
    };
    auto mm = [&](const AddRmsNormAfter* after) {
      return gated ? matmul_gated(ctx, act, GatedAct::kSilu, w, dx, m, dy, tmp, after)
                   : matmul(ctx, act, w, dx, m, dy, {}, {}, after);
    };
    FT_ASSIGN_OR_RETURN(auto sep, outputs());
    FT_RETURN_IF_ERROR(mm(nullptr));
    FT_RETURN_IF_ERROR(add_rmsnorm(ctx, act, shape, dy, dres, dnw, sep[0], sep[1], q8 ? sep[2] : DeviceBuffer{}));
    FT_ASSIGN_OR_RETURN(auto want, bytes_of(sep));
    double worst = 0;
    for (int launch = 0; launch < 3; ++launch) {
      FT_ASSIGN_OR_RETURN(auto fused, outputs());
      FT_RETURN_IF_ERROR(b.fill_bytes(dy, 0xFF));
      const AddRmsNormAfter after{shape, dres, dnw, fused[0], fused[1], q8 ? fused[2] : DeviceBuffer{}, counter};
      FT_RETURN_IF_ERROR(mm(&after));
      FT_ASSIGN_OR_RETURN(auto got, bytes_of(fused));
      if (!std::equal(got.begin() + out_bytes, got.begin() + 2 * out_bytes, want.begin() + out_bytes))
        return FT_ERROR(ErrorCode::kInternal, "launch {}: residual_out differs from the two ops'", launch);
      if (q8) {  // what quantize_x makes of the fused out, bit for bit
        FT_ASSIGN_OR_RETURN(DeviceBuffer requant, quantize_x(ctx, act, n, fused[0], m, std::nullopt));
        std::vector<uint8_t> q(q8_bytes);
        FT_RETURN_IF_ERROR(b.synchronize());
        FT_RETURN_IF_ERROR(b.copy_to_host(q.data(), requant, q8_bytes));
        if (!std::equal(q.begin(), q.end(), got.begin() + 2 * out_bytes))
          return FT_ERROR(ErrorCode::kInternal, "launch {}: the q8 out is not quantize_x of out", launch);
      }
      FT_ASSIGN_OR_RETURN(auto got_out, download(b, fused[0], act));
      worst = std::max(worst, rel_l2(got_out, ref));
    }
    FT_ASSIGN_OR_RETURN(auto got_res, download(b, sep[1], act));
    return std::max(worst, rel_l2(got_res, ref_res));
  };
  Result<double> r = run();
  for (DeviceBuffer d : bufs) b.free(d);
  return r;
}

// A gate|up projection writing SiLU(gate) * up quantized (GatedQ8Out) for
// the down GEMV: on three launches in a row (the counters must come back to
// zero), the q8 output must equal quantize_x of the gated y byte for byte;
// y itself is held to the CPU reference (the error reported).
Result<double> check_gated_q8(OpContext& ctx, GgmlType type, int inter, int k, std::mt19937& rng) {
  const DType act = DType::kBF16;
  const int m = 1, n = 2 * inter;
  FT_ASSIGN_OR_RETURN(auto wbytes, random_weight(type, n, k, rng));
  auto x = random_values(static_cast<size_t>(k), act, rng);
  std::vector<float> ref(n);
  FT_RETURN_IF_ERROR(matmul_reference(type, wbytes.data(), n, k, x.data(), m, ref.data()));
  Backend& b = ctx.backend();
  std::vector<DeviceBuffer> bufs;
  auto run = [&]() -> Result<double> {
    FT_ASSIGN_OR_RETURN(DeviceBuffer dw, b.alloc(wbytes.size()));
    bufs.push_back(dw);
    FT_ASSIGN_OR_RETURN(WeightLayout layout, upload_weight(b, type, wbytes, dw));
    FT_ASSIGN_OR_RETURN(DeviceBuffer dx, upload(b, x, act));
    bufs.push_back(dx);
    const size_t q8_bytes = matmul_q8_bytes(m, inter);
    FT_ASSIGN_OR_RETURN(DeviceBuffer dy, b.alloc(static_cast<size_t>(n) * dtype_size(act)));
    bufs.push_back(dy);
    FT_ASSIGN_OR_RETURN(DeviceBuffer dq8, b.alloc(q8_bytes));
    bufs.push_back(dq8);
    FT_ASSIGN_OR_RETURN(DeviceBuffer counters, b.alloc(static_cast<size_t>(inter / 32) * 4));
    bufs.push_back(counters);
    FT_RETURN_IF_ERROR(b.fill_bytes(counters, 0));
    const WeightView w{type, n, k, dw, layout};
    if (!matmul_writes_gated_q8(ctx, {&w, 1}, m))
      return FT_ERROR(ErrorCode::kInternal, "matmul_writes_gated_q8 is false for {} at m = 1", ggml_type_name(type));
    const GatedQ8Out out{GatedAct::kSilu, dq8, counters};
    double worst = 0;
    for (int launch = 0; launch < 3; ++launch) {
      FT_RETURN_IF_ERROR(b.fill_bytes(dy, 0xFF));
      FT_RETURN_IF_ERROR(b.fill_bytes(dq8, 0xFF));
      FT_RETURN_IF_ERROR(matmul_stacked(ctx, act, {&w, 1}, dx, m, dy, {}, {}, {}, &out));
      std::vector<uint8_t> got(q8_bytes), want(q8_bytes);
      FT_RETURN_IF_ERROR(b.synchronize());
      FT_RETURN_IF_ERROR(b.copy_to_host(got.data(), dq8, q8_bytes));
      FT_ASSIGN_OR_RETURN(DeviceBuffer requant, quantize_x(ctx, act, inter, dy, m, GatedAct::kSilu));
      FT_RETURN_IF_ERROR(b.synchronize());
      FT_RETURN_IF_ERROR(b.copy_to_host(want.data(), requant, q8_bytes));
      const auto diff = std::mismatch(got.begin(), got.end(), want.begin());
      if (diff.first != got.end())
        return FT_ERROR(ErrorCode::kInternal, "launch {}: byte {} of the q8 activation differs from quantize_x's",
                        launch, diff.first - got.begin());
      FT_ASSIGN_OR_RETURN(auto y, download(b, dy, act));
      worst = std::max(worst, rel_l2(y, ref));
    }
    return worst;
  };
  Result<double> r = run();
  for (DeviceBuffer d : bufs) b.free(d);
  return r;
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
    for (int m : {1, 3, 8, 12})
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
  // The norm after the matmul: the o projection (persistent Q4_K at K =
  // 4096), the down projection (gated; both K-quants of Q4_K_M), a small
  // width, and the cases that run the two ops (Q8_0 and dense weights, m = 2).
  struct NormAfterCase {
    GgmlType type;
    int m, n, k;
    bool gated, q8;
  };
  const NormAfterCase kNormAfter[] = {
      {GgmlType::kQ4_K, 1, 4096, 4096, false, true},   {GgmlType::kQ8_0, 1, 4096, 4096, false, true},
      {GgmlType::kBF16, 1, 4096, 4096, false, false},  {GgmlType::kQ6_K, 1, 4096, 12288, true, true},
      {GgmlType::kQ4_K, 1, 4096, 12288, true, false},  {GgmlType::kBF16, 1, 4096, 12288, true, false},
      {GgmlType::kQ4_K, 1, 1024, 3072, true, true},    {GgmlType::kQ4_K, 2, 4096, 4096, false, true},
  };
  for (auto [t, inter, k] : {std::tuple{GgmlType::kQ4_K, 12288, 4096}, std::tuple{GgmlType::kQ6_K, 3072, 1024},
                              std::tuple{GgmlType::kQ4_K, 96, 4096}})
    out.push_back(make_case(fmt::format("matmul gate|up {} silu q8 out", ggml_type_name(t)), DType::kBF16,
                            fmt::format("1x{}x{}", 2 * inter, k), check_gated_q8(ctx, t, inter, k, rng)));
  for (const auto& c : kNormAfter)
    out.push_back(make_case(fmt::format("matmul{} {} + add_rmsnorm{}", c.gated ? "_gated" : "", ggml_type_name(c.type),
                                        c.q8 ? " q8" : ""),
                            DType::kBF16, fmt::format("{}x{}x{}", c.m, c.n, c.k),
                            check_norm_after(ctx, c.type, c.m, c.n, c.k, c.gated, c.q8, rng),
                            is_dense(c.type) ? 0 : 2e-2));
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
