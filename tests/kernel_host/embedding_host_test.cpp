// kernel_src/embedding.hip run by the host emulator against
// embedding_reference for every table type the kernel decodes (Q8_0 and
// Q6_K in the device layout, as GPU backends upload them), ids out of range
// giving zero rows. The launch follows runtime/ops/embedding.cpp.
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/ops/embedding.h"
#include "runtime/ops/weight_layout.h"
#include "tests/gpu/device_data.h"
#include "tests/kernel_host/host_data.h"
#include "tests/kernel_host/simt.h"

#include "kernel_src/embedding.hip"

namespace ft {
namespace {

constexpr int kThreads = 64;

// host::max_error of the gathered rows (the table's own values come back
// exactly but for the bf16 output's rounding).
template <GgmlType kType>
double gather_error(int vocab, int hidden, std::mt19937& rng) {
  auto w = gpu::random_weight(kType, vocab, hidden, rng);
  EXPECT_TRUE(w.ok());
  if (!w.ok()) return 1.0;
  const std::vector<uint8_t>& table = *w;
  std::vector<uint8_t> dev = table;
  if (has_device_layout(kType)) EXPECT_TRUE(to_device_layout(kType, table, dev).ok());
  const std::vector<int> ids = {3, 0, vocab - 1, -1, vocab, 3};  // the out-of-range ones give zeros
  std::vector<bf16> out(ids.size() * hidden, from_float<bf16>(-7.0f));
  EmbeddingArgs<bf16> a{dev.data(), ids.data(), out.data(),
                        static_cast<long long>(table.size() / ggml_traits(kType).bytes_per_block), vocab, hidden / 32};
  EXPECT_EQ(host::launch({(a.groups + kThreads - 1) / kThreads, static_cast<int>(ids.size()), 1}, kThreads,
                         [&] { embedding<bf16, static_cast<int>(kType), kThreads>(a); }),
            "");
  // The reference takes valid ids only; the others want zero rows.
  std::vector<float> want(out.size(), 0.0f);
  for (size_t t = 0; t < ids.size(); ++t)
    if (ids[t] >= 0 && ids[t] < vocab)
      EXPECT_TRUE(embedding_reference(kType, table.data(), vocab, hidden, &ids[t], 1, &want[t * hidden]).ok());
  return host::max_error(out, want);
}

// bf16 output: half an ulp of the largest value at most (3.9e-3).
TEST(EmbeddingOnHost, EveryTableType) {
  std::mt19937 rng(41);
  EXPECT_LT(gather_error<GgmlType::kF32>(7, 96, rng), 4e-3);
  EXPECT_LT(gather_error<GgmlType::kF16>(7, 96, rng), 4e-3);
  EXPECT_LT(gather_error<GgmlType::kBF16>(7, 96, rng), 4e-3);
  EXPECT_LT(gather_error<GgmlType::kQ8_0>(7, 2112, rng), 4e-3);  // more groups than a block's threads
  EXPECT_LT(gather_error<GgmlType::kQ4_0>(7, 128, rng), 4e-3);
  EXPECT_LT(gather_error<GgmlType::kQ4_K>(5, 512, rng), 4e-3);
  EXPECT_LT(gather_error<GgmlType::kQ5_K>(5, 256, rng), 4e-3);
  EXPECT_LT(gather_error<GgmlType::kQ6_K>(5, 2304, rng), 4e-3);
}

}  // namespace
}  // namespace ft
