#include "runtime/ops/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "jit/catalog.h"
#include "runtime/base/env.h"

namespace ft {
namespace {

// FT_ROPE_LANES (the lanes per head in place of the tile's), for tuning.
int rope_lanes_setting() {
  static const int lanes =
      env_int("FT_ROPE_LANES", [](int v) { return v == 8 || v == 16 || v == 32; }, "8, 16 or 32");
  return lanes;
}

}  // namespace

RopeTables rope_inv_freq(const ModelConfig& c) {
  const int d = static_cast<int>(c.head_dim);
  const int half = d / 2;
  const double base = c.rope_theta;
  RopeTables t;
  t.inv_freq.resize(half);
  for (int i = 0; i < half; ++i) t.inv_freq[i] = static_cast<float>(std::pow(base, -2.0 * i / d));
  const RopeScaling& s = c.rope_scaling;
  switch (s.type) {
    case RopeScalingType::kNone: break;
    case RopeScalingType::kLinear:
      for (float& f : t.inv_freq) f = static_cast<float>(f / s.factor);
      break;
    case RopeScalingType::kLlama3: break;  // freq_factors below
    case RopeScalingType::kYarn: {
      // YaRN: interpolate low frequencies by `factor`, keep high ones, with a
      // linear ramp between the correction dimensions of beta_fast and beta_slow.
      const double max_pos = s.original_max_positions ? s.original_max_positions : c.max_positions;
      auto correction_dim = [&](double rotations) {
        return d * std::log(max_pos / (rotations * 2 * std::numbers::pi)) / (2 * std::log(base));
      };
      double low = std::max(0.0, std::floor(correction_dim(s.beta_fast)));
      double high = std::min(d - 1.0, std::ceil(correction_dim(s.beta_slow)));
      if (low == high) high += 0.001;
      for (int i = 0; i < half; ++i) {
        const double extrapolation = std::pow(base, -2.0 * i / d);
        const double interpolation = extrapolation / s.factor;
        const double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
        const double keep = 1.0 - ramp;  // share of the extrapolated frequency
        t.inv_freq[i] = static_cast<float>(interpolation * (1 - keep) + extrapolation * keep);
      }
      t.mscale = s.factor > 1 ? static_cast<float>(0.1 * std::log(s.factor) + 1.0) : 1.0f;
      break;
    }
  }
  if (!s.freq_factors.empty() && static_cast<int>(s.freq_factors.size()) == half)
    for (int i = 0; i < half; ++i) t.inv_freq[i] /= s.freq_factors[i];
  return t;
}

namespace {

void rms_norm_head(float* x, const float* w, int d, float eps) {
  double sum = 0;
  for (int i = 0; i < d; ++i) sum += static_cast<double>(x[i]) * x[i];
  const double scale = 1.0 / std::sqrt(sum / d + eps);
  for (int i = 0; i < d; ++i) x[i] = static_cast<float>(x[i] * scale * w[i]);
}

void rotate(float* x, const float* inv_freq, int d, int pos, RopeStyle style, float mscale) {
  const int half = d / 2;
  for (int i = 0; i < half; ++i) {
    const double a = static_cast<double>(pos) * inv_freq[i];
    const double c = std::cos(a) * mscale, s = std::sin(a) * mscale;
    float& x0 = style == RopeStyle::kNeox ? x[i] : x[2 * i];
    float& x1 = style == RopeStyle::kNeox ? x[i + half] : x[2 * i + 1];
    const double a0 = x0, a1 = x1;
    x0 = static_cast<float>(a0 * c - a1 * s);
    x1 = static_cast<float>(a0 * s + a1 * c);
  }
}

}  // namespace

void rope_qk_norm_kv_write_reference(const RopeShape& s, const float* qkv, const int32_t* positions,
                                     const int32_t* slots, const float* inv_freq, const float* q_norm,
                                     const float* k_norm, float* q_out, const KvLayout& kv, float* k_cache,
                                     float* v_cache) {
  const int d = s.head_dim;
  const size_t row = static_cast<size_t>(s.n_heads + 2 * s.n_kv_heads) * d;
#pragma omp parallel for schedule(static)
  for (int t = 0; t < s.n_tokens; ++t) {
    const float* src = qkv + row * t;
    std::vector<float> head(d);
    for (int h = 0; h < s.n_heads + s.n_kv_heads; ++h) {
      const bool is_q = h < s.n_heads;
      std::copy(src + static_cast<size_t>(h) * d, src + static_cast<size_t>(h + 1) * d, head.begin());
      const float* w = is_q ? q_norm : k_norm;
      if (w) rms_norm_head(head.data(), w, d, s.norm_eps);
      rotate(head.data(), inv_freq, d, positions[t], s.style, s.mscale);
      if (is_q) {
        std::copy(head.begin(), head.end(), q_out + (static_cast<size_t>(t) * s.n_heads + h) * d);
      } else if (slots[t] >= 0) {
        const int kh = h - s.n_heads;
        const size_t at = (static_cast<size_t>(slots[t]) * kv.n_kv_heads + kh) * d;
        std::copy(head.begin(), head.end(), k_cache + at);
        const float* v = src + static_cast<size_t>(s.n_heads + s.n_kv_heads + kh) * d;
        std::copy(v, v + d, v_cache + at);
      }
    }
  }
}

int rope_heads_per_group(const RopeTile& tile, int n_tokens, int heads, int resident_blocks) {
  // The most heads per lane group that still leaves a full round of resident
  // blocks: few tokens (decode) keep one head per group and the widest grid.
  for (int per = tile.heads_per_group; per > 1; per /= 2) {
    const long long blocks = static_cast<long long>(n_tokens) * ((heads + tile.heads_per_block * per - 1) / (tile.heads_per_block * per));
    if (blocks >= resident_blocks) return per;
  }
  return 1;
}

Status rope_qk_norm_kv_write(OpContext& ctx, DType dtype, const RopeShape& s, DeviceBuffer qkv, DeviceBuffer positions,
                             DeviceBuffer slots, DeviceBuffer inv_freq, DeviceBuffer q_norm, DeviceBuffer k_norm,
                             DeviceBuffer q_out, const KvLayout& kv, DeviceBuffer k_cache, DeviceBuffer v_cache) {
  const size_t es = dtype_size(dtype);
  const size_t d = static_cast<size_t>(s.head_dim);
  if (s.n_tokens <= 0 || s.n_heads <= 0 || s.n_kv_heads <= 0 || s.head_dim <= 0 || s.head_dim % 2 != 0 ||
      s.n_kv_heads != kv.n_kv_heads || s.head_dim != kv.head_dim)
    return FT_ERROR(ErrorCode::kInvalidArgument, "rope: bad shape ({} tokens, {}/{} heads, head_dim {}; cache {}/{})",
                    s.n_tokens, s.n_heads, s.n_kv_heads, s.head_dim, kv.n_kv_heads, kv.head_dim);
  const size_t n = static_cast<size_t>(s.n_tokens);
  if (qkv.bytes < n * (s.n_heads + 2 * s.n_kv_heads) * d * es || positions.bytes < n * 4 || slots.bytes < n * 4 ||
      inv_freq.bytes < d / 2 * 4 || q_out.bytes < n * s.n_heads * d * es || k_cache.bytes < kv.elements() * es ||
      v_cache.bytes < kv.elements() * es || (q_norm.ptr && q_norm.bytes < d * es) || (k_norm.ptr && k_norm.bytes < d * es))
    return FT_ERROR(ErrorCode::kInvalidArgument, "rope: buffers too small for {} tokens", s.n_tokens);
  if (ctx.on_cpu()) {
    FT_RETURN_IF_ERROR(check_cpu_dtype("rope", dtype));
    const int32_t* sl = host_ptr<const int32_t>(slots);
    const int64_t capacity = static_cast<int64_t>(kv.num_blocks) * kv.block_size;
    for (int t = 0; t < s.n_tokens; ++t)
      if (sl[t] >= capacity) return FT_ERROR(ErrorCode::kInvalidArgument, "rope: slot {} beyond the cache ({} slots)", sl[t], capacity);
    rope_qk_norm_kv_write_reference(s, host_ptr<const float>(qkv), host_ptr<const int32_t>(positions), sl,
                                    host_ptr<const float>(inv_freq), q_norm.ptr ? host_ptr<const float>(q_norm) : nullptr,
                                    k_norm.ptr ? host_ptr<const float>(k_norm) : nullptr, host_ptr<float>(q_out), kv,
                                    host_ptr<float>(k_cache), host_ptr<float>(v_cache));
    return Status();
  }
  if (s.head_dim % 64 != 0 || s.head_dim > 256)
    return FT_ERROR(ErrorCode::kUnsupported, "rope: head_dim {} (the kernel takes multiples of 64 up to 256)", s.head_dim);
  if ((q_norm.ptr == 0) != (k_norm.ptr == 0))
    return FT_ERROR(ErrorCode::kInvalidArgument, "rope: give both q_norm and k_norm weights or neither");
  const bool has_norm = q_norm.ptr != 0;
  const RopeTile& tile = ctx.facts().tiles.rope;
  const KernelSpec spec =
      rope_spec(ctx.facts(), dtype, s.head_dim, s.style == RopeStyle::kNeox, has_norm, rope_lanes_setting());
  FT_ASSIGN_OR_RETURN(KernelHandle k, ctx.kernel(spec));
  FT_ASSIGN_OR_RETURN(int resident, ctx.resident_blocks(spec));
  const int heads = s.n_heads + 2 * s.n_kv_heads;
  const int per_group = rope_heads_per_group(tile, s.n_tokens, heads, resident);
  const int per_block = tile.heads_per_block * per_group;
  // Mirrors kernel_src/rope.hip's RopeArgs<T>.
  struct {
    uint64_t qkv, positions, slots, inv_freq, q_norm, k_norm, q_out, k_cache, v_cache;
    float mscale, norm_eps;
    int n_tokens, n_heads, n_kv_heads, heads_per_group;
  } args{qkv.ptr,     positions.ptr, slots.ptr,   inv_freq.ptr, q_norm.ptr,   k_norm.ptr,   q_out.ptr,
         k_cache.ptr, v_cache.ptr,   s.mscale,    s.norm_eps,   s.n_tokens,   s.n_heads,    s.n_kv_heads, per_group};
  LaunchDims dims;
  dims.grid[0] = static_cast<unsigned>(s.n_tokens);
  dims.grid[1] = static_cast<unsigned>((heads + per_block - 1) / per_block);
  dims.block[0] = static_cast<unsigned>(spec.block_threads);
  return ctx.backend().launch(k, dims, &args, sizeof args);
}

}  // namespace ft
