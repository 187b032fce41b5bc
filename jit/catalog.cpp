#include "jit/catalog.h"

#include <fmt/format.h>

namespace ft {

KernelSpec rmsnorm_spec(const TargetFacts& target, DType dtype, int hidden, bool add_residual) {
  const NormTile& tile = target.tiles.norm;
  KernelSpec s;
  s.name = fmt::format("ft_{}rmsnorm_{}_h{}", add_residual ? "add_" : "", dtype_name(dtype), hidden);
  s.family = "rmsnorm";
  s.function = "ft::rmsnorm";
  s.template_args = {std::string(dtype_device_name(dtype)), std::to_string(hidden), std::to_string(tile.block_threads),
                     std::to_string(tile.load_bytes), add_residual ? "true" : "false"};
  s.args_type = fmt::format("ft::RmsNormArgs<{}>", dtype_device_name(dtype));
  s.block_threads = tile.block_threads;
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
    }
    for (int i : catalog_intermediate_sizes()) specs.push_back(gated_act_spec(target, dt, GatedAct::kSilu, i));
    for (int i : {9216, 14336, 16384}) specs.push_back(gated_act_spec(target, dt, GatedAct::kGeluTanh, i));
  }
  return specs;
}

}  // namespace ft
