// The prefill GEMM (runtime/ops/gemm.h) against a CPU f32 reference: M not a
// multiple of the tile, N not a multiple of the tile, bias on and off, f16 and
// bf16 (f32 on the FMA path), dense weights of the activation type and
// weights that are first expanded (the other 16-bit type, quantized blocks).
#include <algorithm>
#include <cstring>
#include <thread>

#include "runtime/ops/gemm.h"
#include "tests/gpu/device_data.h"
#include "tests/gpu/op_check.h"

namespace ft::gpu {
namespace {

// y[i][j] = sum_k x[i][k] w[j][k] (+ bias[j]), double accumulation, rows
// split over the host's threads (op_check is not built with OpenMP).
std::vector<float> reference(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& bias,
                             int m, int n, int k) {
  std::vector<float> y(static_cast<size_t>(m) * n);
  auto rows = [&](int begin, int end) {
    for (int i = begin; i < end; ++i)
      for (int j = 0; j < n; ++j) {
        const float* xr = &x[static_cast<size_t>(i) * k];
        const float* wr = &w[static_cast<size_t>(j) * k];
        double s = bias.empty() ? 0.0 : bias[j];
        for (int t = 0; t < k; ++t) s += static_cast<double>(xr[t]) * wr[t];
        y[static_cast<size_t>(i) * n + j] = static_cast<float>(s);
      }
  };
  const int threads = static_cast<int>(std::max(1u, std::min(32u, std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(rows, m * t / threads, m * (t + 1) / threads);
  for (auto& th : pool) th.join();
  return y;
}

// Random GGUF blocks of `type` for n x k weights: random payload bytes with the
// f16 scale fields set to small finite values (random bytes there could be
// inf/NaN). The reference dequantizes them with the CPU decoder.
std::vector<uint8_t> random_quant(GgmlType type, int n, int k, std::mt19937& rng) {
  const GgmlTypeTraits& t = ggml_traits(type);
  const size_t blocks = static_cast<size_t>(n) * k / t.block_size;
  std::vector<uint8_t> bytes(blocks * t.bytes_per_block);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> scale(0.002f, 0.02f);
  std::vector<int> scale_offsets;
  switch (type) {
    case GgmlType::kQ8_0: case GgmlType::kQ4_0: scale_offsets = {0}; break;
    case GgmlType::kQ4_K: case GgmlType::kQ5_K: scale_offsets = {0, 2}; break;
    case GgmlType::kQ6_K: scale_offsets = {208}; break;
    default: break;
  }
  for (size_t b = 0; b < blocks; ++b)
    for (int off : scale_offsets) {
      const uint16_t h = f32_to_fp16(scale(rng));
      std::memcpy(&bytes[b * t.bytes_per_block + off], &h, 2);
    }
  return bytes;
}

// W's values as the kernel multiplies them: decoded, then rounded to `act`.
std::vector<float> decode_weight(GgmlType type, const std::vector<uint8_t>& bytes, size_t count, DType act) {
  std::vector<float> w(count);
  (void)dequantize_row(type, bytes, w.data(), count);
  for (auto& v : w) {
    if (act == DType::kBF16) v = bf16_to_f32(f32_to_bf16(v));
    if (act == DType::kF16) v = fp16_to_f32(f32_to_fp16(v));
  }
  return w;
}

std::vector<uint8_t> encode_weight(const std::vector<float>& w, GgmlType type) {
  return encode(w, type == GgmlType::kF32 ? DType::kF32 : type == GgmlType::kF16 ? DType::kF16 : DType::kBF16);
}

Result<double> check(OpContext& ctx, DType act, GgmlType wtype, int m, int n, int k, bool with_bias,
                     std::mt19937& rng) {
  auto x = random_values(static_cast<size_t>(m) * k, act, rng);
  std::vector<uint8_t> wbytes;
  const bool dense = wtype == GgmlType::kF32 || wtype == GgmlType::kF16 || wtype == GgmlType::kBF16;
  if (dense) {
    const DType wdt = wtype == GgmlType::kF32 ? DType::kF32 : wtype == GgmlType::kF16 ? DType::kF16 : DType::kBF16;
    wbytes = encode_weight(random_values(static_cast<size_t>(n) * k, wdt, rng, 0.05f), wtype);
  } else {
    wbytes = random_quant(wtype, n, k, rng);
  }
  auto w = decode_weight(wtype, wbytes, static_cast<size_t>(n) * k, act);
  std::vector<float> bias = with_bias ? random_values(n, act, rng) : std::vector<float>{};
  auto ref = reference(x, w, bias, m, n, k);

  Backend& b = ctx.backend();
  FT_ASSIGN_OR_RETURN(DeviceBuffer dx, upload(b, x, act));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dw, b.alloc(wbytes.size()));
  FT_ASSIGN_OR_RETURN(WeightLayout layout, upload_weight(b, wtype, wbytes, dw));
  DeviceBuffer dbias;
  if (with_bias) {
    FT_ASSIGN_OR_RETURN(dbias, upload(b, bias, act));
  }
  FT_ASSIGN_OR_RETURN(DeviceBuffer dy, b.alloc(ref.size() * dtype_size(act)));
  FT_RETURN_IF_ERROR(b.fill_bytes(dy, 0xFF));
  WeightView view{wtype, n, k, dw, layout};
  Status st = gemm(ctx, act, view, dx, m, dy, dbias);
  if (st.ok()) st = b.synchronize();
  Result<std::vector<float>> got = st.ok() ? download(b, dy, act) : Result<std::vector<float>>(st);
  for (auto buf : {dx, dw, dbias, dy})
    if (buf.ptr) b.free(buf);
  FT_RETURN_IF_ERROR(got.status());
  return rel_l2(*got, ref);
}

// The reference rounds each decoded weight to the activation type once, as
// a kernel that decodes exactly does; what is left is y's own rounding and
// the order of the sums (bf16: about 1.7e-3; f16: 2.1e-4, H100, twenty-fourth
// session). So the bound is near that floor, to catch a kernel that loses
// precision while staying far inside 1e-2: bf16 2.5e-3 (a gemm_qr that
// rounded Q4_K / Q5_K weights twice read 2.9-3.5e-3); f16 1e-3 (f16 holds
// the K-quant scales within 2^-12: up to 4.5e-4).
double gemm_tolerance(DType act) {
  if (act == DType::kF16) return 1e-3;
  if (act != DType::kBF16) return 0;  // f32: the default
  return 2.5e-3;
}

}  // namespace

std::vector<CheckCase> check_gemm(OpContext& ctx, std::mt19937& rng) {
  std::vector<CheckCase> cases;
  auto add = [&](DType act, GgmlType wt, int m, int n, int k, bool bias) {
    cases.push_back(make_case(fmt::format("gemm w={}", ggml_traits(wt).name), act,
                              fmt::format("m{} n{} k{}{}", m, n, k, bias ? " +bias" : ""),
                              check(ctx, act, wt, m, n, k, bias, rng), gemm_tolerance(act)));
  };
  for (DType act : {DType::kBF16, DType::kF16}) {
    const GgmlType same = act == DType::kBF16 ? GgmlType::kBF16 : GgmlType::kF16;
    for (int m : {9, 17, 64, 100, 512, 2048}) {
      add(act, same, m, 384, 256, true);   // n a multiple of the tile
      add(act, same, m, 160, 4096, false);  // n past the tile masked, long K
    }
    add(act, same, 33, 4096, 4096, true);
    add(act, same, 32, 4096, 12288, false);  // batched decode's down projection: the few-rows tile
  }
  // Weights expanded first: the other 16-bit type, f32, quantized blocks.
  add(DType::kBF16, GgmlType::kF16, 100, 256, 4096, false);
  add(DType::kF16, GgmlType::kF32, 17, 128, 256, true);
  for (GgmlType q : {GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K})
    add(DType::kBF16, q, 100, 256, 4096, true);
  // Few rows against quantized W, decoded into the tile (gemm_q): K split
  // across blocks where the grid is small (n = k = 4096: 8 splits on an
  // H100), not split at k = 256; n = 2080 leaves waves of the last block
  // past n; m = 33 and 64 take two row tiles, the second partly past m.
  for (GgmlType q : {GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K})
    for (int m : {1, 9, 32}) add(DType::kBF16, q, m, 4096, 4096, m == 9);
  for (int m : {5, 33, 64}) add(DType::kF16, GgmlType::kQ4_K, m, 160, 12288, m == 33);
  add(DType::kBF16, GgmlType::kQ6_K, 17, 2080, 256, true);
  // NVIDIA's gemm_qr (which takes the cases above on NVIDIA, except Q4_0,
  // whose products stay gemm_q's): its 16-row x tile full (m = 16), long K
  // split; Q4_K at m = 24 in the 32-row tile, or two 16-row tiles with
  // FT_GEMM_QR_X=16; FT_GEMM_QR=0 sends them all to gemm_q.
  for (GgmlType q : {GgmlType::kQ8_0, GgmlType::kQ5_K, GgmlType::kQ6_K})
    add(DType::kF16, q, 16, 192, 12288, q == GgmlType::kQ5_K);
  add(DType::kBF16, GgmlType::kQ4_K, 24, 4096, 12288, false);
  // m = 65: three 32-row tiles of gemm_qr on NVIDIA, past gemm_q's 64 rows
  // (expanded) elsewhere; m = 129: past gemm_qr's 128 as well.
  for (int m : {65, 129}) add(DType::kF16, GgmlType::kQ4_K, m, 128, 4096, false);
  // f32: the plain FMA kernel.
  for (int m : {9, 100}) add(DType::kF32, GgmlType::kF32, m, 160, 256, m == 9);
  return cases;
}

}  // namespace ft::gpu
