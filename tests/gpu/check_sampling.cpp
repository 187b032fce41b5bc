// Argmax and the seeded sampler on the GPU against the CPU reference.
// Argmax: the ids must be equal. Sampling: the GPU sums 150k floats in
// another order than the host, so the draw may land on a neighbour of the
// host's token; what must hold is that the GPU's token passes the filters
// and that the kept mass before it is within one token's mass (plus float
// error) of u * kept mass. The metric is the share of rows that break this.
#include "runtime/ops/sampling.h"
#include "tests/gpu/device_data.h"
#include "tests/gpu/op_check.h"

namespace ft::gpu {
namespace {

Result<double> check_one(OpContext& ctx, DType dt, int rows, int vocab, bool greedy, const SamplingRow& base,
                         std::mt19937& rng) {
  auto logits = random_values(static_cast<size_t>(rows) * vocab, dt, rng, 3.0f);
  std::vector<SamplingRow> params(rows, base);
  for (int r = 0; r < rows; ++r) {
    params[r].seed = rng();
    params[r].step = static_cast<uint64_t>(r);
  }
  std::vector<int32_t> ref(rows);
  if (greedy) argmax_reference(rows, vocab, logits.data(), ref.data());
  else sample_reference(rows, vocab, logits.data(), params.data(), ref.data());
  // Rows padded past vocab with logits larger than any real one: a kernel that
  // reads past vocab or ignores the stride picks them.
  const int stride = vocab + 40;
  std::vector<float> padded(static_cast<size_t>(rows) * stride, 1e4f);
  for (int r = 0; r < rows; ++r)
    std::copy_n(logits.begin() + static_cast<size_t>(r) * vocab, vocab, padded.begin() + static_cast<size_t>(r) * stride);
  Backend& b = ctx.backend();
  FT_ASSIGN_OR_RETURN(DeviceBuffer dl, upload(b, padded, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dp, b.alloc(params.size() * sizeof(SamplingRow)));
  FT_RETURN_IF_ERROR(b.copy_to_device(dp, params.data(), params.size() * sizeof(SamplingRow)));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dout, b.alloc(rows * 4));
  FT_RETURN_IF_ERROR(b.fill_bytes(dout, 0xFF));
  FT_RETURN_IF_ERROR(greedy ? argmax(ctx, dt, rows, vocab, stride, dl, dout)
                            : sample(ctx, dt, rows, vocab, stride, dl, dp, dout));
  std::vector<int32_t> got(rows);
  FT_RETURN_IF_ERROR(b.copy_to_host(got.data(), dout, rows * 4));
  for (auto buf : {dl, dp, dout}) b.free(buf);
  int bad = 0;
  for (int r = 0; r < rows; ++r) {
    if (greedy) {
      bad += got[r] != ref[r];
      continue;
    }
    const float* row = logits.data() + static_cast<size_t>(r) * vocab;
    if (!(params[r].temperature > 0)) {
      int32_t best = 0;
      argmax_reference(1, vocab, row, &best);
      bad += got[r] != best;
      continue;
    }
    float t = 0;
    const std::vector<float> p = sampling_probs_reference(vocab, row, params[r], &t);
    if (got[r] < 0 || got[r] >= vocab || p[got[r]] < t * (1 - 1e-5f)) {
      ++bad;
      continue;
    }
    double total = 0, before = 0;
    for (int i = 0; i < vocab; ++i) {
      if (p[i] < t) continue;
      if (i < got[r]) before += p[i];
      total += p[i];
    }
    const double u = sampling_uniform(params[r].seed, params[r].step);
    const double slack = 1e-5 * total;
    bad += !(before <= u * total + slack && u * total <= before + p[got[r]] + slack);
  }
  return static_cast<double>(bad) / rows;
}

}  // namespace

std::vector<CheckCase> check_sampling(OpContext& ctx, std::mt19937& rng) {
  std::vector<CheckCase> cases;
  struct Setting {
    const char* name;
    SamplingRow row;
  };
  const Setting settings[] = {
      {"temperature 1", {1.0f, 0, 1.0f, 0.0f, 0, 0}},
      {"t 0.7 top-k 50", {0.7f, 50, 1.0f, 0.0f, 0, 0}},
      {"t 0.8 top-p 0.9", {0.8f, 0, 0.9f, 0.0f, 0, 0}},
      {"t 1 min-p 0.05", {1.0f, 0, 1.0f, 0.05f, 0, 0}},
      {"k 20 p 0.8 min-p 0.1", {0.9f, 20, 0.8f, 0.1f, 0, 0}},
      {"temperature 0", {0.0f, 0, 1.0f, 0.0f, 0, 0}},
  };
  for (DType dt : {DType::kF32, DType::kBF16}) {
    for (auto [rows, vocab] : {std::pair{7, 1000}, {64, 151936}, {3, 32000}}) {
      cases.push_back(make_case("argmax", dt, fmt::format("{}x{}", rows, vocab),
                                check_one(ctx, dt, rows, vocab, true, {}, rng), 1e-9));
      for (const Setting& s : settings)
        cases.push_back(make_case(fmt::format("sample {}", s.name), dt, fmt::format("{}x{}", rows, vocab),
                                  check_one(ctx, dt, rows, vocab, false, s.row, rng), 1e-9));
    }
  }
  return cases;
}

}  // namespace ft::gpu
