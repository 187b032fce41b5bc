#include "jit/catalog.h"

#include <fmt/format.h>

namespace ft {

namespace {
// Threads of a norm block: the tile's, doubled (up to 1024) while a thread
// would hold more than 8 vectors of its row (x and the weight, kept in
// registers). At 20480 bf16 wide and 256 threads a thread held 10 of each,
// the register file fit one such block per SM, and nothing overlapped one
// row's loads but its own (71% of copy); 512 threads hold 5 and two rows fit
// (on NVIDIA by a launch bound, taken where it costs no spills: ptxas had
// given the plain norm 66 registers, one block per SM, 76% of copy on an
// H100).
int norm_block_threads(const NormTile& tile, DType dtype, int hidden) {
  const long long vectors = static_cast<long long>(hidden) * dtype_size(dtype) / tile.load_bytes;
  int threads = tile.block_threads;
  while (threads < 1024 && vectors > 8LL * threads) threads *= 2;
  return threads;
}
}  // namespace

KernelSpec rmsnorm_spec(const TargetFacts& target, DType dtype, int hidden, bool add_residual, bool q8_out) {
  const NormTile& tile = target.tiles.norm;
  const int threads = norm_block_threads(tile, dtype, hidden);
  KernelSpec s;
  s.name = fmt::format("ft_{}rmsnorm_{}_h{}{}", add_residual ? "add_" : "", dtype_name(dtype), hidden,
                       q8_out ? "_q8" : "");
  s.family = "rmsnorm";
  s.function = "ft::rmsnorm";
  s.waits_itself = true;  // it requests its weight before waiting (kernel_src/rmsnorm.hip)
  s.template_args = {std::string(dtype_device_name(dtype)), std::to_string(hidden), std::to_string(threads),
                     std::to_string(tile.load_bytes), add_residual ? "true" : "false"};
  if (q8_out) s.template_args.push_back("true");
  s.args_type = fmt::format("ft::RmsNormArgs<{}>", dtype_device_name(dtype));
  s.block_threads = threads;
  // Two blocks of 1024 would leave 32 registers a thread: that bound is not asked.
  if (threads > tile.block_threads && threads <= 512) s.min_blocks = 2;
  return s;
}

KernelSpec gated_act_spec(const TargetFacts& target, DType dtype, GatedAct act, int inter) {
  const ActTile& tile = target.tiles.act;
  const char* op = act == GatedAct::kSilu ? "silu" : "gelu_tanh";
  KernelSpec s;
  s.name = fmt::format("ft_{}_mul_{}_i{}", op, dtype_name(dtype), inter);
  s.family = "activation";
  s.function = "ft::gated_act";
  s.template_args = {std::string(dtype_device_name(dtype)), act == GatedAct::kSilu ? "ft::SiluOp" : "ft::GeluTanhOp",
                     std::to_string(inter), std::to_string(tile.block_threads), std::to_string(tile.load_bytes),
                     std::to_string(tile.vectors_per_thread)};
  s.args_type = fmt::format("ft::GatedActArgs<{}>", dtype_device_name(dtype));
  s.block_threads = tile.block_threads;
  return s;
}

int rope_lanes_per_head(int lanes, DType dtype, int head_dim) {
  const size_t es = dtype_size(dtype);
  while (lanes < 32 && static_cast<size_t>(head_dim) / (2 * lanes) * es > 16) lanes *= 2;
  return lanes;
}

KernelSpec rope_spec(const TargetFacts& target, DType dtype, int head_dim, bool neox, bool qk_norm,
                     int lanes_per_head) {
  const RopeTile& tile = target.tiles.rope;
  const int lanes = rope_lanes_per_head(lanes_per_head ? lanes_per_head : tile.lanes_per_head, dtype, head_dim);
  KernelSpec s;
  s.name = fmt::format("ft_rope_{}_{}_d{}{}_l{}", neox ? "neox" : "norm", dtype_name(dtype), head_dim,
                       qk_norm ? "_qknorm" : "", lanes);
  s.family = "rope";
  s.function = "ft::rope_qk_norm_kv_write";
  s.waits_itself = true;  // it requests its constants before waiting (kernel_src/rope.hip)
  s.template_args = {std::string(dtype_device_name(dtype)), std::to_string(head_dim), neox ? "1" : "0",
                     qk_norm ? "true" : "false", std::to_string(lanes), std::to_string(tile.heads_per_block),
                     std::to_string(tile.heads_per_group)};
  s.args_type = fmt::format("ft::RopeArgs<{}>", dtype_device_name(dtype));
  s.block_threads = lanes * tile.heads_per_block;
  return s;
}

int attention_decode_wide_waves(const TargetFacts& target, int group) {
  return group >= 2 ? 2 * target.tiles.attn.decode_waves : target.tiles.attn.decode_waves;
}

KernelSpec attention_decode_spec(const TargetFacts& target, DType dtype, int head_dim, int group, int block_size,
                                 int waves) {
  const AttnTile& tile = target.tiles.attn;
  if (waves <= 0) waves = tile.decode_waves;
  KernelSpec s;
  s.name = fmt::format("ft_attn_decode_{}_d{}_g{}_b{}{}", dtype_name(dtype), head_dim, group, block_size,
                       waves == tile.decode_waves ? "" : fmt::format("_w{}", waves));
  s.family = "attention";
  s.function = "ft::attention_decode";
  s.block_threads = waves * target.wave_size;
  s.template_args = {std::string(dtype_device_name(dtype)), std::to_string(head_dim), std::to_string(group),
                     std::to_string(block_size), std::to_string(s.block_threads),
                     std::to_string(tile.decode_partition)};
  s.args_type = fmt::format("ft::DecodeArgs<{}>", dtype_device_name(dtype));
  s.waits_itself = true;  // a small launch reads its context lengths and block table first (kernel_src/attention.hip)
  return s;
}

namespace {
bool prefill_uses_mma(const TargetFacts& target, DType dtype) {
  return !target.is_amd() && dtype != DType::kF32 &&
         (target.matrix_core == MatrixCore::kMmaSync || target.matrix_core == MatrixCore::kWgmma);
}
}  // namespace

int attention_prefill_rows(const TargetFacts& target, DType dtype) {
  return prefill_uses_mma(target, dtype) ? 64 : target.tiles.attn.prefill_rows;
}

KernelSpec attention_prefill_spec(const TargetFacts& target, DType dtype, int head_dim, int group, int block_size) {
  const AttnTile& tile = target.tiles.attn;
  KernelSpec s;
  s.name = fmt::format("ft_attn_prefill_{}_d{}_g{}_b{}", dtype_name(dtype), head_dim, group, block_size);
  s.family = "attention";
  s.args_type = fmt::format("ft::PrefillArgs<{}>", dtype_device_name(dtype));
  s.template_args = {std::string(dtype_device_name(dtype)), std::to_string(head_dim), std::to_string(group),
                     std::to_string(block_size)};
  if (prefill_uses_mma(target, dtype)) {
    // Hopper, head_dim 128: wgmma with K and V read from shared memory by the
    // tensor cores (kernel_src/attention_wgmma.h); otherwise mma.sync with
    // ldmatrix. Same tile (64 rows, 128 threads) for both.
    const bool wgmma = target.matrix_core == MatrixCore::kWgmma && head_dim == 128;
    s.function = wgmma ? "ft::attention_prefill_wgmma" : "ft::attention_prefill_mma";
    s.block_threads = 128;
    return s;
  }
  s.function = "ft::attention_prefill_fma";
  for (int v : {tile.prefill_rows, tile.prefill_split, tile.prefill_keys}) s.template_args.push_back(std::to_string(v));
  s.block_threads = tile.prefill_rows * tile.prefill_split;
  return s;
}

std::vector<std::pair<int, int>> catalog_attention_shapes() {
  return {{128, 1}, {128, 2}, {128, 3}, {128, 4}, {128, 5}, {128, 6}, {128, 7}, {128, 8},
          {64, 1},  {64, 2},  {64, 4},  {64, 5},  {64, 7},  {64, 8}};
}

GemmLaunchShape gemm_launch_shape(const TargetFacts& target, DType dtype, bool small) {
  if (dtype == DType::kF32) return {256, 64, 64, 16};  // kernel_src/gemm.hip gemm_f32
  const GemmTile& t = small ? target.tiles.gemm_small : target.tiles.gemm;
  return {t.warps_m * t.warps_n * target.wave_size, t.block_m, t.block_n, t.block_k};
}

bool gemm_small_fits(const TargetFacts& target, DType dtype, int m, int k) {
  const GemmTile& t = target.tiles.gemm_small;
  return dtype != DType::kF32 && t.block_m > 0 && m <= 2 * t.block_m && k % t.block_k == 0;
}

KernelSpec gemm_spec(const TargetFacts& target, DType dtype, int k, bool small) {
  small = small && dtype != DType::kF32 && target.tiles.gemm_small.block_m > 0;
  const GemmTile& t = small ? target.tiles.gemm_small : target.tiles.gemm;
  KernelSpec s;
  s.name = fmt::format("ft_gemm{}_{}_k{}", small ? "_small" : "", dtype_name(dtype), k);
  s.family = "gemm";
  s.args_type = fmt::format("ft::GemmArgs<{}>", dtype_device_name(dtype));
  s.block_threads = gemm_launch_shape(target, dtype, small).threads;
  if (dtype == DType::kF32) {
    s.function = "ft::gemm_f32";
    s.template_args = {std::to_string(k)};
    return s;
  }
  // Hopper's large tile: wgmma warpgroups (kernel_src/gemm_wgmma.h);
  // elsewhere, and for small tiles, the per-warp matrix-core kernel
  // (mma.sync, WMMA, MFMA).
  s.function = target.matrix_core == MatrixCore::kWgmma && !small ? "ft::gemm_wgmma" : "ft::gemm";
  s.template_args = {std::string(dtype_device_name(dtype)), std::to_string(k), std::to_string(t.block_m),
                     std::to_string(t.block_n), std::to_string(t.block_k), std::to_string(t.warps_m),
                     std::to_string(t.warps_n), std::to_string(t.stages)};
  return s;
}

namespace {
// Lower-case ggml names without linking ft_model (ggml_type_name lives there).
const char* dequant_type_name(GgmlType type) {
  switch (type) {
    case GgmlType::kF32: return "f32";
    case GgmlType::kF16: return "f16";
    case GgmlType::kBF16: return "bf16";
    case GgmlType::kQ4_0: return "q4_0";
    case GgmlType::kQ8_0: return "q8_0";
    case GgmlType::kQ4_K: return "q4_k";
    case GgmlType::kQ5_K: return "q5_k";
    case GgmlType::kQ6_K: return "q6_k";
    default: return nullptr;
  }
}
}  // namespace

bool gemm_dequant_supported(GgmlType type) { return dequant_type_name(type) != nullptr; }

KernelSpec gemm_dequant_spec(const TargetFacts&, DType dtype, GgmlType type) {
  KernelSpec s;
  const char* tname = dequant_type_name(type);
  s.name = fmt::format("ft_gemm_dequant_{}_to_{}", tname ? tname : "unknown", dtype_name(dtype));
  s.family = "gemm";
  s.function = "ft::gemm_dequant";
  s.template_args = {std::string(dtype_device_name(dtype)), std::to_string(static_cast<uint32_t>(type))};
  s.args_type = fmt::format("ft::GemmDequantArgs<{}>", dtype_device_name(dtype));
  s.block_threads = 256;
  return s;
}

bool gemm_q_supported(GgmlType type) {
  return type == GgmlType::kQ4_0 || type == GgmlType::kQ8_0 || type == GgmlType::kQ4_K || type == GgmlType::kQ5_K ||
         type == GgmlType::kQ6_K;
}

KernelSpec gemm_q_spec(const TargetFacts& target, DType dtype, GgmlType type) {
  KernelSpec s;
  const char* tname = dequant_type_name(type);
  s.name = fmt::format("ft_gemm_q_{}_{}", tname ? tname : "unknown", dtype_name(dtype));
  s.family = "gemm";
  s.function = "ft::gemm_q";
  s.template_args = {std::string(dtype_device_name(dtype)), std::to_string(static_cast<uint32_t>(type))};
  s.args_type = fmt::format("ft::GemmQArgs<{}>", dtype_device_name(dtype));
  s.block_threads = kGemmQWaves * target.wave_size;
  return s;
}

bool gemm_qr_supported(const TargetFacts& target, GgmlType type) {
  return !target.is_amd() && (target.matrix_core == MatrixCore::kMmaSync || target.matrix_core == MatrixCore::kWgmma) &&
         (type == GgmlType::kQ4_K || type == GgmlType::kQ5_K || type == GgmlType::kQ6_K || type == GgmlType::kQ8_0);
}

KernelSpec gemm_qr_spec(const TargetFacts& target, DType dtype, GgmlType type, int x_tiles) {
  KernelSpec s;
  const char* tname = dequant_type_name(type);
  s.name = fmt::format("ft_gemm_qr_{}_{}_x{}", tname ? tname : "unknown", dtype_name(dtype), 8 * x_tiles);
  s.family = "gemm";
  s.function = "ft::gemm_qr";
  s.template_args = {std::string(dtype_device_name(dtype)), std::to_string(static_cast<uint32_t>(type)),
                     std::to_string(x_tiles)};
  s.args_type = fmt::format("ft::GemmQArgs<{}>", dtype_device_name(dtype));
  s.block_threads = kGemmQrWaves * target.wave_size;
  return s;
}

KernelSpec gemm_q_reduce_spec(DType dtype) {
  KernelSpec s;
  s.name = fmt::format("ft_gemm_q_reduce_{}", dtype_name(dtype));
  s.family = "gemm";
  s.function = "ft::gemm_q_reduce";
  s.template_args = {std::string(dtype_device_name(dtype))};
  s.args_type = fmt::format("ft::GemmQReduceArgs<{}>", dtype_device_name(dtype));
  s.block_threads = 256;
  return s;
}

std::vector<int> catalog_gemm_k_sizes() { return {4096, 12288, 14336}; }

namespace {

// The device-side weight type of a gemv instantiation and its name in kernel names.
struct GemvWeight {
  GgmlType type;
  const char* name;
  const char* device_type;  // template argument of gemv_dense / gemv_quant
  bool quantized;
  int parts;  // lanes per weight block: the device type's kParts (0: dense)
  int elems;  // elements per weight block: kElems
};
constexpr GemvWeight kGemvWeights[] = {
    {GgmlType::kF32, "f32", "float", false, 0, 1},
    {GgmlType::kF16, "f16", "ft::f16", false, 0, 1},
    {GgmlType::kBF16, "bf16", "ft::bf16", false, 0, 1},
    {GgmlType::kQ8_0, "q8_0", "ft::QuantQ8_0", true, 2, 32},
    {GgmlType::kQ4_0, "q4_0", "ft::QuantQ4_0", true, 4, 32},
    {GgmlType::kQ4_K, "q4_k", "ft::QuantQ4_K", true, 8, 256},
    {GgmlType::kQ5_K, "q5_k", "ft::QuantQ5_K", true, 8, 256},
    {GgmlType::kQ6_K, "q6_k", "ft::QuantQ6_K", true, 8, 256},
};

const GemvWeight* find_gemv_weight(GgmlType t) {
  for (const auto& w : kGemvWeights)
    if (w.type == t) return &w;
  return nullptr;
}

}  // namespace

bool gemv_supports(GgmlType weight) { return find_gemv_weight(weight) != nullptr; }
bool gemv_quantized(GgmlType weight) {
  const GemvWeight* w = find_gemv_weight(weight);
  return w && w->quantized;
}

int gemv_m_bucket(int m) { return m <= 1 ? 1 : m <= 2 ? 2 : m <= 4 ? 4 : 8; }

int gemv_steps_per_wave(const TargetFacts& target, GgmlType weight, int k) {
  const GemvWeight* w = find_gemv_weight(weight);
  if (!w || !w->quantized) return 0;
  const int blocks = k / w->elems;
  const int per_step = target.wave_size / w->parts;
  const int steps = (blocks + per_step - 1) / per_step;
  const int waves = target.tiles.gemv.block_threads / target.wave_size;
  return (steps + waves - 1) / waves;
}

int gemv_rows_per_block(const TargetFacts& target, int m_bucket) {
  return m_bucket <= 2 ? target.tiles.gemv.rows : target.tiles.gemv.rows_wide_m;
}

namespace {
const char* gated_x_type(GatedAct gate) {
  return gate == GatedAct::kSilu ? "ft::XGated<ft::SiluOp>" : "ft::XGated<ft::GeluTanhOp>";
}
}  // namespace

KernelSpec gemv_quantize_x_spec(DType act, int k, std::optional<GatedAct> gate) {
  KernelSpec s;
  const char* gate_name = !gate ? "" : *gate == GatedAct::kSilu ? "_silu" : "_gelu_tanh";
  s.name = fmt::format("ft_quantize_x_q8_{}_k{}{}", dtype_name(act), k, gate_name);
  s.family = "gemv";
  s.function = "ft::quantize_x_q8";
  s.block_threads = kGemvQuantizeThreads;
  s.template_args = {std::string(dtype_device_name(act)), std::to_string(k), std::to_string(s.block_threads)};
  if (gate) s.template_args.push_back(gated_x_type(*gate));
  s.args_type = fmt::format("ft::QuantizeXArgs<{}>", dtype_device_name(act));
  return s;
}

size_t gemv_quantized_x_bytes(int m, int k) { return static_cast<size_t>(m) * k + 2 * static_cast<size_t>(m) * (k / 32) * 4; }

KernelSpec gemv_spec(const TargetFacts& target, DType act, GgmlType weight, int k, int m_bucket,
                     std::optional<GatedAct> gate) {
  const GemvTile& tile = target.tiles.gemv;
  const GemvWeight* w = find_gemv_weight(weight);
  if (!w) w = &kGemvWeights[0];  // callers check gemv_supports(); keeps the spec well-formed
  KernelSpec s;
  const char* gate_name = !gate || w->quantized ? "" : *gate == GatedAct::kSilu ? "_silu" : "_gelu_tanh";
  s.name = fmt::format("ft_gemv_{}_{}_k{}_m{}{}", dtype_name(act), w->name, k, m_bucket, gate_name);
  s.family = "gemv";
  s.function = w->quantized ? "ft::gemv_quant" : "ft::gemv_dense";
  s.waits_itself = w->quantized;  // it loads its first weights before waiting (kernel_src/gemv.hip)
  s.template_args = {std::string(dtype_device_name(act)), w->device_type, std::to_string(m_bucket), std::to_string(k),
                     std::to_string(tile.block_threads), std::to_string(gemv_rows_per_block(target, m_bucket))};
  // Quantized weights read quantize_x_q8's output; the gate goes there.
  if (gate && !w->quantized) s.template_args.push_back(gated_x_type(*gate));
  s.args_type = fmt::format("ft::GemvArgs<{}>", dtype_device_name(act));
  s.block_threads = tile.block_threads;
  return s;
}

KernelSpec gemv2_spec(const TargetFacts& target, DType act, GgmlType first, GgmlType second, int k, int m_bucket) {
  KernelSpec s = gemv_spec(target, act, first, k, m_bucket);
  const GemvWeight* w2 = find_gemv_weight(second);
  if (!w2) w2 = &kGemvWeights[0];
  const GemvWeight* w1 = find_gemv_weight(first);
  s.name = fmt::format("ft_gemv_{}_{}_{}_k{}_m{}", dtype_name(act), w1 ? w1->name : "f32", w2->name, k, m_bucket);
  s.function = "ft::gemv_quant2";
  s.template_args.insert(s.template_args.begin() + 2, w2->device_type);
  return s;
}

std::vector<int> catalog_gemv_k_sizes() {
  // Qwen3-0.6B 1024 / 3072 (o_proj 2048), Llama-3.2-1B 2048 / 8192, Qwen2.5-7B 3584 / 18944,
  // Llama-3-8B / Qwen3-8B 4096 / 14336 / 12288.
  return {1024, 2048, 3072, 3584, 4096, 8192, 12288, 14336, 18944};
}

std::vector<int> catalog_hidden_sizes() {
  // Qwen2.5-0.5B 896, Llama-3.2-1B 2048, Gemma-2-2B 2304, Qwen3-4B 2560, Llama-3.2-3B 3072,
  // Qwen2.5-7B 3584, Llama-3-8B / Qwen3-8B 4096, Qwen3-14B 5120, Llama-3-70B 8192; head_dim 64/128
  // for Qwen3's per-head q/k norm.
  return {64, 128, 896, 1024, 1536, 2048, 2304, 2560, 3072, 3584, 4096, 5120, 8192};
}

std::vector<int> catalog_intermediate_sizes() {
  return {3072, 4864, 6144, 8192, 8960, 9216, 9728, 11008, 12288, 13824, 14336, 17408, 18944, 28672};
}

std::vector<KernelSpec> kernel_catalog(const TargetFacts& target) {
  std::vector<KernelSpec> specs;
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (int h : catalog_hidden_sizes()) {
      specs.push_back(rmsnorm_spec(target, dt, h));
      // The fused residual form is for model widths, not per-head q/k norms.
      if (h >= 896) specs.push_back(rmsnorm_spec(target, dt, h, true));
      // With the quantized output for a quantized model's decode GEMVs: the
      // residual form between layers, the plain one before the first layer.
      if (h >= 896 && dt != DType::kF32) {
        specs.push_back(rmsnorm_spec(target, dt, h, true, true));
        specs.push_back(rmsnorm_spec(target, dt, h, false, true));
      }
    }
    for (int i : catalog_intermediate_sizes()) specs.push_back(gated_act_spec(target, dt, GatedAct::kSilu, i));
    for (int i : {9216, 14336, 16384}) specs.push_back(gated_act_spec(target, dt, GatedAct::kGeluTanh, i));
    if (dt != DType::kF32)
      for (int k : catalog_gemm_k_sizes()) {
        specs.push_back(gemm_spec(target, dt, k));
        if (target.tiles.gemm_small.block_m > 0 && k % target.tiles.gemm_small.block_k == 0)
          specs.push_back(gemm_spec(target, dt, k, true));
      }
    for (GgmlType w : {GgmlType::kQ4_0, GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K})
      if (dt != DType::kF32) {
        specs.push_back(gemm_dequant_spec(target, dt, w));
        specs.push_back(gemm_q_spec(target, dt, w));
        if (gemm_qr_supported(target, w))
          for (int x_tiles : {2, 4}) specs.push_back(gemm_qr_spec(target, dt, w, x_tiles));
      }
    if (dt != DType::kF32) specs.push_back(gemm_q_reduce_spec(dt));
  }
  // GEMV, kept modest because CI warms the whole catalog for four targets:
  // bf16 activations at m = 1 (decode batch 1) with every GGUF type ft ships
  // and bf16, at m <= 8 for bf16 / Q8_0 / Q4_K; f16 activations at m = 1 for
  // f16 and the common GGUF types. Other buckets and K compile on first use.
  for (int k : catalog_gemv_k_sizes()) {
    for (GgmlType w : {GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_K, GgmlType::kQ5_K,
                       GgmlType::kQ6_K})
      specs.push_back(gemv_spec(target, DType::kBF16, w, k, 1));
    for (GgmlType w : {GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_K})
      specs.push_back(gemv_spec(target, DType::kBF16, w, k, 8));
    for (GgmlType w : {GgmlType::kF16, GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K})
      specs.push_back(gemv_spec(target, DType::kF16, w, k, 1));
  }
  // Q4_K_M's q|k (Q4_K) and v (Q6_K) in one launch, at the hidden widths.
  for (int k : catalog_gemv_k_sizes())
    if (k <= 8192) specs.push_back(gemv2_spec(target, DType::kBF16, GgmlType::kQ4_K, GgmlType::kQ6_K, k, 1));
  // x quantization for the quantized GEMVs.
  for (int k : catalog_gemv_k_sizes())
    for (DType dt : {DType::kBF16, DType::kF16}) specs.push_back(gemv_quantize_x_spec(dt, k));
  // The down projection with SiLU(gate) * up fused into its x load (dense)
  // or into the x quantization, at the 8B models' intermediate sizes.
  for (int k : {12288, 14336}) {
    specs.push_back(gemv_spec(target, DType::kBF16, GgmlType::kBF16, k, 1, GatedAct::kSilu));
    specs.push_back(gemv_quantize_x_spec(DType::kBF16, k, GatedAct::kSilu));
  }
  // Paged attention and RoPE: the GPU engine runs f16/bf16 activations, block size 16.
  for (DType dt : {DType::kF16, DType::kBF16}) {
    for (int d : {64, 128}) {
      // NORM pairs are llama weights from GGUF (no q/k norm); Qwen3's q/k norm comes with NEOX.
      specs.push_back(rope_spec(target, dt, d, false, false));
      for (bool norm : {false, true}) specs.push_back(rope_spec(target, dt, d, true, norm));
    }
    for (auto [d, g] : catalog_attention_shapes()) {
      specs.push_back(attention_decode_spec(target, dt, d, g, 16));
      if (const int wide = attention_decode_wide_waves(target, g); wide != target.tiles.attn.decode_waves)
        specs.push_back(attention_decode_spec(target, dt, d, g, 16, wide));
      specs.push_back(attention_prefill_spec(target, dt, d, g, 16));
    }
  }
  for (DType dt : {DType::kF16, DType::kBF16})
    for (GgmlType w : {GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K})
      specs.push_back(embedding_spec(target, dt, w));
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    specs.push_back(argmax_spec(target, dt));
    specs.push_back(sample_spec(target, dt));
  }
  return specs;
}

bool embedding_supports(GgmlType type) {
  switch (type) {
    case GgmlType::kF32: case GgmlType::kF16: case GgmlType::kBF16: case GgmlType::kQ4_0: case GgmlType::kQ8_0:
    case GgmlType::kQ4_K: case GgmlType::kQ5_K: case GgmlType::kQ6_K: return true;
    default: return false;
  }
}

KernelSpec embedding_spec(const TargetFacts&, DType dtype, GgmlType type) {
  KernelSpec s;
  s.name = fmt::format("ft_embedding_t{}_to_{}", static_cast<uint32_t>(type), dtype_name(dtype));
  s.family = "embedding";
  s.function = "ft::embedding";
  s.template_args = {std::string(dtype_device_name(dtype)), std::to_string(static_cast<uint32_t>(type)), "64"};
  s.args_type = fmt::format("ft::EmbeddingArgs<{}>", dtype_device_name(dtype));
  s.block_threads = 64;
  return s;
}

KernelSpec argmax_spec(const TargetFacts&, DType dtype) {
  KernelSpec s;
  s.name = fmt::format("ft_argmax_{}", dtype_name(dtype));
  s.family = "sampling";
  s.function = "ft::argmax_rows";
  s.template_args = {std::string(dtype_device_name(dtype)), "512"};
  s.args_type = fmt::format("ft::SamplingArgs<{}>", dtype_device_name(dtype));
  s.block_threads = 512;
  return s;
}

KernelSpec sample_spec(const TargetFacts& target, DType dtype) {
  KernelSpec s = argmax_spec(target, dtype);
  s.name = fmt::format("ft_sample_{}", dtype_name(dtype));
  s.function = "ft::sample_rows";
  return s;
}

}  // namespace ft
