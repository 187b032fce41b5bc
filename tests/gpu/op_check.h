// op_check: runs the GPU kernels (compiled at run time by the JIT) against
// the CPU reference, over many shapes, with fresh random inputs and outputs
// poisoned (0xFF bytes = NaN in every float format) before each run.
// Each op family has its check_<family>.cpp with one function listed below.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "runtime/base/dtype.h"
#include "runtime/ops/op_context.h"

namespace ft::gpu {

struct CheckCase {
  std::string op;
  DType dtype;
  std::string shape;
  double err = -1;         // relative L2 error (or a family-specific metric)
  std::string error;       // a launch or shape error
  double tolerance = 0;    // 0: the default for the dtype (f32 1e-5, else 1e-2)
};

template <typename T>
CheckCase make_case(std::string op, DType dt, std::string shape, const Result<T>& r, double tolerance = 0) {
  return {std::move(op), dt, std::move(shape), r.ok() ? static_cast<double>(*r) : -1.0,
          r.ok() ? "" : r.status().message(), tolerance};
}

std::vector<CheckCase> check_norm_act(OpContext& ctx, std::mt19937& rng);
std::vector<CheckCase> check_embedding(OpContext& ctx, std::mt19937& rng);
std::vector<CheckCase> check_sampling(OpContext& ctx, std::mt19937& rng);
std::vector<CheckCase> check_gemm(OpContext& ctx, std::mt19937& rng);
std::vector<CheckCase> check_matmul(OpContext& ctx, std::mt19937& rng);
std::vector<CheckCase> check_attention(OpContext& ctx, std::mt19937& rng);
std::vector<CheckCase> check_device(OpContext& ctx, std::mt19937& rng);

}  // namespace ft::gpu
