// RMSNorm (plain and fused with the residual add) and the gated activations.
#include <algorithm>

#include "runtime/ops/activation.h"
#include "runtime/ops/norm.h"
#include "tests/gpu/device_data.h"
#include "tests/gpu/op_check.h"

namespace ft::gpu {
namespace {

// With `fused`, also checks residual_out = x + residual; the error reported
// is the larger of the two outputs'.
Result<double> check_rmsnorm(OpContext& ctx, DType dt, int rows, int hidden, bool fused, std::mt19937& rng) {
  RmsNormShape s{rows, hidden, 1e-6f};
  const size_t n = static_cast<size_t>(rows) * hidden;
  auto x = random_values(n, dt, rng, 2.0f);
  auto res = random_values(n, dt, rng, 2.0f);
  auto w = random_values(hidden, dt, rng);
  std::vector<float> ref(n), ref_res(n);
  rmsnorm_reference(s, x.data(), w.data(), ref.data(), fused ? res.data() : nullptr, ref_res.data());
  Backend& b = ctx.backend();
  FT_ASSIGN_OR_RETURN(DeviceBuffer dx, upload(b, x, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dres, upload(b, res, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dw, upload(b, w, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dout, b.alloc(n * dtype_size(dt)));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dres_out, b.alloc(n * dtype_size(dt)));
  FT_RETURN_IF_ERROR(b.fill_bytes(dout, 0xFF));
  FT_RETURN_IF_ERROR(b.fill_bytes(dres_out, 0xFF));
  FT_RETURN_IF_ERROR(fused ? add_rmsnorm(ctx, dt, s, dx, dres, dw, dout, dres_out) : rmsnorm(ctx, dt, s, dx, dw, dout));
  FT_RETURN_IF_ERROR(b.synchronize());
  FT_ASSIGN_OR_RETURN(auto got, download(b, dout, dt));
  double err = rel_l2(got, ref);
  if (fused) {
    FT_ASSIGN_OR_RETURN(auto got_res, download(b, dres_out, dt));
    err = std::max(err, rel_l2(got_res, ref_res));
  }
  for (auto buf : {dx, dres, dw, dout, dres_out}) b.free(buf);
  return err;
}

Result<double> check_act(OpContext& ctx, DType dt, GatedAct act, int rows, int inter, std::mt19937& rng) {
  auto gu = random_values(static_cast<size_t>(rows) * 2 * inter, dt, rng, 3.0f);
  std::vector<float> ref(static_cast<size_t>(rows) * inter);
  gated_act_reference(act, rows, inter, gu.data(), ref.data());
  Backend& b = ctx.backend();
  FT_ASSIGN_OR_RETURN(DeviceBuffer dgu, upload(b, gu, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dout, b.alloc(ref.size() * dtype_size(dt)));
  FT_RETURN_IF_ERROR(b.fill_bytes(dout, 0xFF));
  FT_RETURN_IF_ERROR(gated_act(ctx, dt, act, rows, inter, dgu, dout));
  FT_RETURN_IF_ERROR(b.synchronize());
  FT_ASSIGN_OR_RETURN(auto got, download(b, dout, dt));
  b.free(dgu);
  b.free(dout);
  return rel_l2(got, ref);
}

// Captures an RMSNorm launch into a graph, then replays it on new input
// written into the same buffers: the replay must see the new data.
Result<double> check_graph_replay(OpContext& ctx, std::mt19937& rng) {
  const DType dt = DType::kBF16;
  RmsNormShape s{4, 4096, 1e-6f};
  const size_t n = static_cast<size_t>(s.rows) * s.hidden;
  Backend& b = ctx.backend();
  auto w = random_values(s.hidden, dt, rng);
  FT_ASSIGN_OR_RETURN(DeviceBuffer dx, b.alloc(n * 2));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dw, upload(b, w, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dout, b.alloc(n * 2));
  FT_RETURN_IF_ERROR(ctx.kernel(rmsnorm_spec(ctx.facts(), dt, s.hidden)).status());  // compile outside the capture
  FT_RETURN_IF_ERROR(b.begin_capture());
  FT_RETURN_IF_ERROR(rmsnorm(ctx, dt, s, dx, dw, dout));
  FT_ASSIGN_OR_RETURN(GraphHandle g, b.end_capture());
  double worst = 0;
  for (int round = 0; round < 3; ++round) {
    auto x = random_values(n, dt, rng, 2.0f);
    auto bytes = encode(x, dt);
    FT_RETURN_IF_ERROR(b.copy_to_device(dx, bytes.data(), bytes.size()));
    FT_RETURN_IF_ERROR(b.fill_bytes(dout, 0xFF));
    FT_RETURN_IF_ERROR(b.replay(g));
    FT_RETURN_IF_ERROR(b.synchronize());
    std::vector<float> ref(n);
    rmsnorm_reference(s, x.data(), w.data(), ref.data());
    FT_ASSIGN_OR_RETURN(auto got, download(b, dout, dt));
    worst = std::max(worst, rel_l2(got, ref));
  }
  b.destroy_graph(g);
  for (auto buf : {dx, dw, dout}) b.free(buf);
  return worst;
}

}  // namespace

std::vector<CheckCase> check_norm_act(OpContext& ctx, std::mt19937& rng) {
  std::vector<CheckCase> cases;
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (auto [rows, hidden] : {std::pair{1, 64}, {3, 128}, {7, 896}, {1, 4096}, {33, 4096}, {5, 5120}, {2, 8192},
                                {17, 2056}, {4, 12288}, {3, 20480}, {2, 10248}}) {
      for (bool fused : {false, true})
        cases.push_back(make_case(fused ? "add_rmsnorm" : "rmsnorm", dt, fmt::format("{}x{}", rows, hidden),
                                  check_rmsnorm(ctx, dt, rows, hidden, fused, rng)));
    }
    for (GatedAct act : {GatedAct::kSilu, GatedAct::kGeluTanh})
      for (auto [rows, inter] : {std::pair{1, 3072}, {3, 12288}, {9, 8}, {2, 1000}, {32, 14336}, {1, 4104}}) {
        if (dt == DType::kF32 && inter % 4 != 0) continue;
        cases.push_back(make_case(act == GatedAct::kSilu ? "silu_mul" : "gelu_tanh_mul", dt,
                                  fmt::format("{}x{}", rows, inter), check_act(ctx, dt, act, rows, inter, rng)));
      }
  }
  cases.push_back(make_case("rmsnorm graph replay", DType::kBF16, "4x4096 x3", check_graph_replay(ctx, rng)));
  return cases;
}

}  // namespace ft::gpu
