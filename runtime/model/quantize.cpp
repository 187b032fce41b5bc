#include "runtime/model/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/model/quant_blocks.h"

namespace ft {

namespace {

// Round to nearest (ties to even) by the 1.5 * 2^23 trick: inlined, unlike
// std::lround, which was most of a K-quant conversion's time. Inputs are
// clamped first so the trick holds (every caller clamps to a few levels).
int nearest_int(float v) {
  v = std::min(std::max(v, -4.0e6f), 4.0e6f);
  const float r = (v + 12582912.0f) - 12582912.0f;
  return static_cast<int>(r);
}
int clamp_int(int v, int lo, int hi) { return std::min(hi, std::max(lo, v)); }

// The element with the largest magnitude, sign kept (Q4_0/Q5_0/Q6_K map it to
// the most negative level, which has one more step than the positive side).
float signed_absmax(const float* x, int n) {
  float best = 0.0f;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(best)) best = x[i];
  return best;
}

template <typename Block>
void store_block(const Block& b, uint8_t* dst) {
  std::memcpy(dst, &b, sizeof(Block));
}

void encode_block(const float* x, quant::BlockQ8_0* b) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  b->d = f32_to_fp16(amax / 127.0f);
  const float d = fp16_to_f32(b->d);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < 32; ++j) b->qs[j] = static_cast<int8_t>(clamp_int(nearest_int(x[j] * id), -127, 127));
}

// Q4_0 and Q5_0 share the scheme: d = max / -half_levels, q = round(x/d) + offset.
void encode_symmetric(const float* x, int levels, uint16_t* d_out, int* q) {
  const int half = levels / 2;
  *d_out = f32_to_fp16(signed_absmax(x, 32) / static_cast<float>(-half));
  const float d = fp16_to_f32(*d_out);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < 32; ++j) q[j] = clamp_int(nearest_int(x[j] * id) + half, 0, levels - 1);
}

void encode_block(const float* x, quant::BlockQ4_0* b) {
  int q[32];
  encode_symmetric(x, 16, &b->d, q);
  for (int j = 0; j < 16; ++j) b->qs[j] = static_cast<uint8_t>(q[j] | (q[j + 16] << 4));
}

void encode_block(const float* x, quant::BlockQ5_0* b) {
  int q[32];
  encode_symmetric(x, 32, &b->d, q);
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    b->qs[j] = static_cast<uint8_t>((q[j] & 0x0F) | ((q[j + 16] & 0x0F) << 4));
    qh |= static_cast<uint32_t>(q[j] >> 4) << j;
    qh |= static_cast<uint32_t>(q[j + 16] >> 4) << (j + 16);
  }
  std::memcpy(b->qh, &qh, 4);
}

void encode_block(const float* x, quant::BlockQ4_1* b) {
  float lo = x[0], hi = x[0];
  for (int j = 1; j < 32; ++j) {
    lo = std::min(lo, x[j]);
    hi = std::max(hi, x[j]);
  }
  b->d = f32_to_fp16((hi - lo) / 15.0f);
  b->m = f32_to_fp16(lo);
  const float d = fp16_to_f32(b->d);
  const float m = fp16_to_f32(b->m);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < 16; ++j) {
    const int q0 = clamp_int(nearest_int((x[j] - m) * id), 0, 15);
    const int q1 = clamp_int(nearest_int((x[j + 16] - m) * id), 0, 15);
    b->qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
  }
}

// Fits x ~= scale * L - min with L in [0, nmax], scale >= 0 and min >= 0 (the
// K-quant decode form), minimising squared error. Candidate grids are tried
// around the plain range split, each refined by a least-squares solve.
void fit_scale_min(const float* x, int n, int nmax, float* scale, float* min) {
  float lo = 0.0f, hi = x[0];
  for (int i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  *scale = 0.0f;
  *min = -lo;
  if (hi <= lo) return;
  float sx = 0.0f;
  for (int i = 0; i < n; ++i) sx += x[i];
  float best_err = INFINITY;
  for (int step = -10; step <= 10; ++step) {
    const float iscale = (static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / (hi - lo);
    int sl = 0, sl2 = 0;
    float slx = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_int(nearest_int(iscale * (x[i] - lo)), 0, nmax);
      sl += l;
      sl2 += l * l;
      slx += static_cast<float>(l) * x[i];
    }
    // Least squares in double: the determinant cancels.
    const double det = static_cast<double>(n) * sl2 - static_cast<double>(sl) * sl;
    if (det <= 0) continue;
    double a = (n * static_cast<double>(slx) - static_cast<double>(sx) * sl) / det;
    double b = (sl2 * static_cast<double>(sx) - sl * static_cast<double>(slx)) / det;
    if (b > 0) {  // the format cannot add a positive offset
      b = 0;
      a = slx / static_cast<double>(sl2);
    }
    if (a <= 0) continue;
    const float fa = static_cast<float>(a), fb = static_cast<float>(b), inv_a = 1.0f / fa;
    float err = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_int(nearest_int((x[i] - fb) * inv_a), 0, nmax);
      const float e = fa * static_cast<float>(l) + fb - x[i];
      err += e * e;
    }
    if (err < best_err) {
      best_err = err;
      *scale = fa;
      *min = -fb;
    }
  }
  if (best_err == INFINITY) *scale = (hi - lo) / static_cast<float>(nmax);
}

// Shared by Q4_K and Q5_K: eight 32-element sub-blocks with 6-bit scale and
// min, levels 0..nmax. Writes the super-block scales and the final levels.
void encode_k_asymmetric(const float* x, int nmax, uint16_t* d_out, uint16_t* dmin_out, uint8_t* packed_scales,
                         int* levels) {
  float scales[8], mins[8];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 8; ++j) {
    fit_scale_min(x + 32 * j, 32, nmax, &scales[j], &mins[j]);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  *d_out = f32_to_fp16(max_scale / 63.0f);
  *dmin_out = f32_to_fp16(max_min / 63.0f);
  const float d = fp16_to_f32(*d_out);
  const float dmin = fp16_to_f32(*dmin_out);
  uint8_t sc[8], mn[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = static_cast<uint8_t>(d > 0 ? clamp_int(nearest_int(scales[j] / d), 0, 63) : 0);
    mn[j] = static_cast<uint8_t>(dmin > 0 ? clamp_int(nearest_int(mins[j] / dmin), 0, 63) : 0);
  }
  quant::pack_k_scales(sc, mn, packed_scales);
  for (int j = 0; j < 8; ++j) {
    const float ds = d * sc[j];
    const float dm = dmin * mn[j];
    for (int i = 0; i < 32; ++i)
      levels[32 * j + i] = ds > 0 ? clamp_int(nearest_int((x[32 * j + i] + dm) / ds), 0, nmax) : 0;
  }
}

void encode_block(const float* x, quant::BlockQ4_K* b) {
  int l[kQK_K];
  encode_k_asymmetric(x, 15, &b->d, &b->dmin, b->scales, l);
  for (int g = 0; g < 4; ++g)
    for (int i = 0; i < 32; ++i) b->qs[32 * g + i] = static_cast<uint8_t>(l[64 * g + i] | (l[64 * g + 32 + i] << 4));
}

void encode_block(const float* x, quant::BlockQ5_K* b) {
  int l[kQK_K];
  encode_k_asymmetric(x, 31, &b->d, &b->dmin, b->scales, l);
  std::memset(b->qh, 0, sizeof(b->qh));
  for (int g = 0; g < 4; ++g) {
    for (int i = 0; i < 32; ++i) {
      const int lo = l[64 * g + i], hi = l[64 * g + 32 + i];
      b->qs[32 * g + i] = static_cast<uint8_t>((lo & 0x0F) | ((hi & 0x0F) << 4));
      b->qh[i] |= static_cast<uint8_t>(((lo >> 4) << (2 * g)) | ((hi >> 4) << (2 * g + 1)));
    }
  }
}

// Fits x ~= scale * q with q in [-32, 31] for one 16-element Q6_K sub-block.
float fit_scale_q6(const float* x) {
  const float max = signed_absmax(x, 16);
  if (max == 0.0f) return 0.0f;
  float best_scale = max / -32.0f;
  float best_err = INFINITY;
  for (int step = -9; step <= 9; ++step) {
    const float iscale = -(32.0f + 0.1f * static_cast<float>(step)) / max;
    float sqx = 0.0f;
    int sq2 = 0;
    for (int i = 0; i < 16; ++i) {
      const int q = clamp_int(nearest_int(iscale * x[i]), -32, 31);
      sqx += static_cast<float>(q) * x[i];
      sq2 += q * q;
    }
    if (sq2 == 0) continue;
    const float s = sqx / static_cast<float>(sq2), inv_s = 1.0f / s;
    float err = 0.0f;
    for (int i = 0; i < 16; ++i) {
      const float e = s * static_cast<float>(clamp_int(nearest_int(x[i] * inv_s), -32, 31)) - x[i];
      err += e * e;
    }
    if (err < best_err) {
      best_err = err;
      best_scale = s;
    }
  }
  return best_scale;
}

void encode_block(const float* x, quant::BlockQ6_K* b) {
  float scales[16];
  float max_scale = 0.0f;
  for (int j = 0; j < 16; ++j) {
    scales[j] = fit_scale_q6(x + 16 * j);
    if (std::fabs(scales[j]) > std::fabs(max_scale)) max_scale = scales[j];
  }
  b->d = f32_to_fp16(max_scale / -128.0f);
  const float d = fp16_to_f32(b->d);
  int q[kQK_K];
  for (int j = 0; j < 16; ++j) {
    b->scales[j] = static_cast<int8_t>(d != 0 ? clamp_int(nearest_int(scales[j] / d), -128, 127) : 0);
    const float ds = d * b->scales[j];
    for (int i = 0; i < 16; ++i)
      q[16 * j + i] = (ds != 0 ? clamp_int(nearest_int(x[16 * j + i] / ds), -32, 31) : 0) + 32;
  }
  for (int h = 0; h < 2; ++h) {
    const int* qq = q + 128 * h;
    for (int l = 0; l < 32; ++l) {
      const int q1 = qq[l], q2 = qq[l + 32], q3 = qq[l + 64], q4 = qq[l + 96];
      b->ql[64 * h + l] = static_cast<uint8_t>((q1 & 0x0F) | ((q3 & 0x0F) << 4));
      b->ql[64 * h + l + 32] = static_cast<uint8_t>((q2 & 0x0F) | ((q4 & 0x0F) << 4));
      b->qh[32 * h + l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
    }
  }
}

template <typename Block>
void encode_blocks(const float* x, size_t n, uint8_t* dst) {
  for (size_t i = 0; i < n / Block::kElements; ++i) {
    Block b{};
    encode_block(x + i * Block::kElements, &b);
    store_block(b, dst + i * sizeof(Block));
  }
}

template <typename Convert>
void encode_elements(const float* x, size_t n, uint8_t* dst, Convert convert) {
  for (size_t i = 0; i < n; ++i) {
    const uint16_t v = convert(x[i]);
    std::memcpy(dst + 2 * i, &v, 2);
  }
}

}  // namespace

bool can_encode(GgmlType type) {
  switch (type) {
    case GgmlType::kF32: case GgmlType::kF16: case GgmlType::kBF16: case GgmlType::kQ8_0:
    case GgmlType::kQ4_0: case GgmlType::kQ4_1: case GgmlType::kQ5_0: case GgmlType::kQ4_K:
    case GgmlType::kQ5_K: case GgmlType::kQ6_K:
      return true;
    default:
      return false;
  }
}

Status encode_row(GgmlType type, const float* x, size_t n, std::span<uint8_t> dst) {
  const auto& t = ggml_traits(type);
  if (!can_encode(type)) return FT_ERROR(ErrorCode::kUnsupported, "cannot encode tensor type {}", t.name);
  const auto need = ggml_bytes(type, n);
  if (!need) return FT_ERROR(ErrorCode::kInvalidArgument, "{} values is not a whole number of {} blocks", n, t.name);
  if (dst.size() < *need)
    return FT_ERROR(ErrorCode::kInvalidArgument, "{} bytes given for {} values of {} (need {})", dst.size(), n,
                    t.name, *need);
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return FT_ERROR(ErrorCode::kInvalidArgument, "value {} is not finite ({})", i, x[i]);
  uint8_t* p = dst.data();
  switch (type) {
    case GgmlType::kF32: std::memcpy(p, x, n * sizeof(float)); break;
    case GgmlType::kF16: encode_elements(x, n, p, f32_to_fp16); break;
    case GgmlType::kBF16: encode_elements(x, n, p, f32_to_bf16); break;
    case GgmlType::kQ8_0: encode_blocks<quant::BlockQ8_0>(x, n, p); break;
    case GgmlType::kQ4_0: encode_blocks<quant::BlockQ4_0>(x, n, p); break;
    case GgmlType::kQ4_1: encode_blocks<quant::BlockQ4_1>(x, n, p); break;
    case GgmlType::kQ5_0: encode_blocks<quant::BlockQ5_0>(x, n, p); break;
    case GgmlType::kQ4_K: encode_blocks<quant::BlockQ4_K>(x, n, p); break;
    case GgmlType::kQ5_K: encode_blocks<quant::BlockQ5_K>(x, n, p); break;
    case GgmlType::kQ6_K: encode_blocks<quant::BlockQ6_K>(x, n, p); break;
    default: break;
  }
  return Status();
}

}  // namespace ft
