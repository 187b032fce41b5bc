// Shared by the host-emulator kernel checks: values as a kernel's storage
// type T sees them, and the error measures (relative L2 is tests/gpu's
// rel_l2, on the outputs read back as f32).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernel_src/ft_device.h"

namespace ft::host {

// `values` rounded to T; with `rounded`, also what they became, as f32 (the
// reference's input).
template <typename T>
std::vector<T> to_device(const std::vector<float>& values, std::vector<float>* rounded = nullptr) {
  std::vector<T> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = from_float<T>(values[i]);
  if (rounded) {
    rounded->resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) (*rounded)[i] = to_float(out[i]);
  }
  return out;
}

template <typename T>
std::vector<float> to_floats(const std::vector<T>& values) {
  std::vector<float> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = to_float(values[i]);
  return out;
}

// The largest |got - want| over the largest |want|: the outputs' rounding to
// T is half an ulp of the largest value at most.
template <typename T>
double max_error(const std::vector<T>& got, const std::vector<float>& want) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
    worst = std::max(worst, std::fabs(static_cast<double>(to_float(got[i])) - want[i]));
  }
  return worst / scale;
}

}  // namespace ft::host
