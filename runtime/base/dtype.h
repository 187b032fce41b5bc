// Element types of activations and dense weights.
#pragma once

#include <string_view>

namespace ft {

enum class DType { kF32, kF16, kBF16 };

constexpr int dtype_size(DType t) { return t == DType::kF32 ? 4 : 2; }
constexpr std::string_view dtype_name(DType t) {
  return t == DType::kF32 ? "f32" : t == DType::kF16 ? "f16" : "bf16";
}
// The type's name in kernel sources (kernel_src/ft_device.h).
constexpr std::string_view dtype_device_name(DType t) {
  return t == DType::kF32 ? "float" : t == DType::kF16 ? "ft::f16" : "ft::bf16";
}

}  // namespace ft
