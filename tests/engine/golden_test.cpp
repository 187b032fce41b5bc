// The CPU forward pass against teacher-forced logits from HF transformers
// (fixtures made by tests/reference/make_golden.py): relative L2 error below
// 1e-4 at every position, through both the decode and the prefill paths.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <span>

#include <nlohmann/json.hpp>

#include "runtime/base/files.h"
#include "runtime/engine/executor.h"
#include "tests/gpu/device_data.h"

namespace ft {
namespace {

struct Golden {
  std::vector<int32_t> prompt;
  int vocab = 0;
  std::vector<float> logits;
};

Golden load_golden(const std::string& dir) {
  Golden g;
  auto meta = read_file(dir + "/golden.json");
  EXPECT_TRUE(meta.ok()) << dir;
  if (!meta.ok()) return g;
  auto j = nlohmann::json::parse(*meta);
  g.prompt = j["prompt"].get<std::vector<int32_t>>();
  g.vocab = j["vocab"].get<int>();
  auto raw = read_file(dir + "/logits.f32");
  EXPECT_TRUE(raw.ok());
  g.logits.resize(raw->size() / 4);
  std::memcpy(g.logits.data(), raw->data(), g.logits.size() * 4);
  EXPECT_EQ(g.logits.size(), g.prompt.size() * g.vocab);
  return g;
}

// Row `row` of a [rows, vocab] logits array.
std::span<const float> logits_row(const std::vector<float>& logits, size_t row, int vocab) {
  return {logits.data() + row * vocab, static_cast<size_t>(vocab)};
}

class GoldenLogits : public ::testing::TestWithParam<const char*> {};

// A golden model on the CPU backend with an executor of the given limits
// (filled in place: the executor keeps references to the weights and ops).
struct GoldenRun {
  Golden g;
  std::optional<WeightSet> weights;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<OpContext> ops;
  std::unique_ptr<Executor> ex;
};

Status open_golden(const std::string& model, int block_size, int max_seqs, int max_blocks, int kv_blocks,
                   GoldenRun& r, std::vector<std::string> skip_ops = {}) {
  const std::string dir = std::string(FT_SOURCE_DIR) + "/tests/reference/golden/" + model;
  r.g = load_golden(dir);
  if (r.g.prompt.empty()) return FT_ERROR(ErrorCode::kNotFound, "no golden prompt in {}", dir);
  FT_ASSIGN_OR_RETURN(WeightSet w, WeightSet::open(dir));
  r.weights.emplace(std::move(w));
  FT_ASSIGN_OR_RETURN(r.backend, open_cpu_backend(2));
  r.ops = std::make_unique<OpContext>(r.backend.get());
  ExecutorOptions eo;
  eo.kv_block_size = block_size;
  eo.max_tokens_per_step = 64;
  eo.max_seqs_per_step = max_seqs;
  eo.max_blocks_per_seq = max_blocks;
  eo.kv_cache_bytes = static_cast<int64_t>(kv_block_bytes(r.weights->config(), block_size, DType::kF32)) * kv_blocks;
  eo.skip_ops = std::move(skip_ops);
  FT_ASSIGN_OR_RETURN(r.ex, Executor::create(r.backend.get(), r.ops.get(), *r.weights, eo));
  return Status();
}

// The whole golden prompt as one step in the blocks of `table` (16 tokens
// each): the last position's logits brought to the host, or every
// position's.
Batch whole_prompt(const Golden& g, const std::vector<int32_t>& table, bool all_logits = false) {
  const int n = static_cast<int>(g.prompt.size());
  Batch batch;
  for (int i = 0; i < n; ++i) {
    batch.tokens.push_back(g.prompt[i]);
    batch.positions.push_back(i);
    batch.slots.push_back(table[i / 16] * 16 + i % 16);
  }
  batch.seqs.push_back(BatchSeq{.n_tokens = n, .context_len = n, .block_table = table.data(),
                                .n_blocks = static_cast<int>(table.size()), .want_logits = true,
                                .host_logits = !all_logits, .all_logits = all_logits, .sampling = {}});
  return batch;
}

// Runs the prompt as a prefill of `first` tokens and then one token per step,
// checking the logits of every position from first-1 on.
void check(const std::string& model, int first, int block_size) {
  const int max_blocks = 64 / block_size + 1;
  GoldenRun run;
  Status st0 = open_golden(model, block_size, 2, max_blocks, 2 * max_blocks, run);
  ASSERT_TRUE(st0.ok()) << st0.to_string();
  const Golden& g = run.g;
  auto* ex = &run.ex;
  // Blocks in reverse order, so the table is not the identity.
  std::vector<int32_t> table;
  for (int b = max_blocks - 1; b >= 0; --b) table.push_back(b + 3);
  const int n = static_cast<int>(g.prompt.size());
  for (int done = 0; done < n;) {
    const int step = done == 0 ? first : 1;
    Batch batch;
    for (int i = done; i < done + step; ++i) {
      batch.tokens.push_back(g.prompt[i]);
      batch.positions.push_back(i);
      batch.slots.push_back(table[i / block_size] * block_size + i % block_size);
    }
    BatchSeq s;
    s.n_tokens = step;
    s.context_len = done + step;
    s.block_table = table.data();
    s.n_blocks = static_cast<int>(table.size());
    s.want_logits = true;
    s.host_logits = true;
    s.sampling.temperature = 0;  // greedy: the drawn token is the argmax
    batch.seqs.push_back(s);
    StepOutput out;
    Status st = (*ex)->forward(batch, out);
    ASSERT_TRUE(st.ok()) << st.to_string();
    const std::vector<float>& logits = out.logits;
    ASSERT_EQ(out.tokens.size(), 1u);
    EXPECT_EQ(out.tokens[0], std::max_element(logits.begin(), logits.end()) - logits.begin());
    ASSERT_EQ(logits.size(), static_cast<size_t>(g.vocab));
    done += step;
    const double err = gpu::rel_l2(logits_row(logits, 0, g.vocab), logits_row(g.logits, done - 1, g.vocab));
    EXPECT_LT(err, 1e-4) << model << " position " << done - 1;
  }
}

// The whole prompt in one step with every position's logits (all_logits, as
// the GPU logits check uses it): the LM head runs over the rows in chunks.
TEST_P(GoldenLogits, AllPositionsInOneStep) {
  GoldenRun run;
  // 3 sequences per step does not divide the prompt: the last chunk is short.
  Status st0 = open_golden(GetParam(), 16, 3, 4, 4, run);
  ASSERT_TRUE(st0.ok()) << st0.to_string();
  const Golden& g = run.g;
  auto* ex = &run.ex;
  const int n = static_cast<int>(g.prompt.size());
  ASSERT_GT(n % 3, 0);
  const std::vector<int32_t> table = {3, 1, 0, 2};
  const Batch batch = whole_prompt(g, table, true);
  StepOutput out;
  Status st = (*ex)->forward(batch, out);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_EQ(out.logits.size(), g.logits.size());
  for (int p = 0; p < n; ++p)
    EXPECT_LT(gpu::rel_l2(logits_row(out.logits, p, g.vocab), logits_row(g.logits, p, g.vocab)), 1e-4)
        << "position " << p;
}

// The trace (for layer-by-layer checks against HF): "out" once per layer with
// every token's residual stream, each op's output in the first op_layers
// layers, and the logits unchanged by it.
TEST(Trace, EveryLayerOutAndFirstLayerOpsLogitsUnchanged) {
  GoldenRun run;
  Status st0 = open_golden("qwen3", 16, 2, 4, 4, run);
  ASSERT_TRUE(st0.ok()) << st0.to_string();
  const Golden& g = run.g;
  auto* ex = &run.ex;
  const auto& weights = run.weights;
  const ModelConfig& c = weights->config();
  const int n = static_cast<int>(g.prompt.size());
  const size_t hidden = c.hidden_size, q_width = static_cast<size_t>(c.num_heads) * c.head_dim;
  const std::vector<int32_t> table = {0, 1, 2, 3};
  const Batch batch = whole_prompt(g, table);
  std::vector<std::pair<int, std::string>> calls;
  std::map<std::string, std::vector<float>> first;
  (*ex)->set_trace(
      [&](int layer, std::string_view name, const std::vector<float>& h) {
        calls.emplace_back(layer, std::string(name));
        if (layer == 0) first[std::string(name)] = h;
        double norm = 0;
        for (float v : h) norm += static_cast<double>(v) * v;
        EXPECT_TRUE(std::isfinite(norm) && norm > 0) << "layer " << layer << " " << name;
        return Status();
      },
      1);
  StepOutput out;
  ASSERT_TRUE((*ex)->forward(batch, out).ok());
  const std::vector<std::string> ops = {"attn_norm", "qkv", "q", "attn", "o", "resid", "ffn_norm", "gate_up", "down",
                                        "out"};
  std::vector<std::pair<int, std::string>> want;
  for (const auto& op : ops) want.emplace_back(0, op);
  for (int i = 1; i < static_cast<int>(c.num_layers); ++i) want.emplace_back(i, "out");
  EXPECT_EQ(calls, want);
  const std::map<std::string, size_t> widths = {
      {"attn_norm", hidden}, {"qkv", q_width + 2 * static_cast<size_t>(c.num_kv_heads) * c.head_dim},
      {"q", q_width},        {"attn", q_width},
      {"o", hidden},         {"resid", hidden},
      {"ffn_norm", hidden},  {"gate_up", 2 * static_cast<size_t>(c.intermediate_size)},
      {"down", hidden},      {"out", hidden}};
  for (const auto& [name, width] : widths) EXPECT_EQ(first[name].size(), n * width) << name;
  // The traced values are the ones the forward pass used: out is resid plus
  // down.
  for (size_t i = 0; i < n * hidden; ++i) {
    ASSERT_NEAR(first["out"][i], first["resid"][i] + first["down"][i], 1e-6f) << i;
  }
  EXPECT_LT(gpu::rel_l2(logits_row(out.logits, 0, g.vocab), logits_row(g.logits, n - 1, g.vocab)), 1e-4);
}

// skip_ops (timing experiments): an unknown name is refused with the list
// of names; a skipped op's output stays as initialized (zeros), the ops after
// it read that, and the logits move off the golden ones.
TEST(SkipOps, UnknownNamesRefusedSkippedOpsNotRun) {
  GoldenRun bad;
  Status st = open_golden("qwen3", 16, 2, 4, 4, bad, {"gate_up", "nope"});
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.to_string().find("'nope'"), std::string::npos) << st.to_string();
  EXPECT_NE(st.to_string().find("attn_norm, qkv, rope"), std::string::npos) << st.to_string();

  GoldenRun run;
  Status st0 = open_golden("qwen3", 16, 2, 4, 4, run, {"gate_up"});
  ASSERT_TRUE(st0.ok()) << st0.to_string();
  const Golden& g = run.g;
  const int n = static_cast<int>(g.prompt.size());
  const std::vector<int32_t> table = {0, 1, 2, 3};
  const Batch batch = whole_prompt(g, table);
  std::map<std::string, double> norms;
  run.ex->set_trace(
      [&](int layer, std::string_view name, const std::vector<float>& h) {
        double sum = 0;
        for (float v : h) sum += static_cast<double>(v) * v;
        if (layer == 0) norms[std::string(name)] = sum;
        return Status();
      },
      1);
  StepOutput out;
  ASSERT_TRUE(run.ex->forward(batch, out).ok());
  EXPECT_EQ(norms["gate_up"], 0.0);
  EXPECT_EQ(norms["down"], 0.0);  // SiLU(0) * 0
  EXPECT_GT(norms["o"], 0.0);
  EXPECT_GT(norms["ffn_norm"], 0.0);
  EXPECT_GT(gpu::rel_l2(logits_row(out.logits, 0, g.vocab), logits_row(g.logits, n - 1, g.vocab)), 1e-2);
}

TEST_P(GoldenLogits, DecodeOneTokenAtATime) { check(GetParam(), 1, 4); }
TEST_P(GoldenLogits, PrefillThenDecode) { check(GetParam(), 21, 16); }

INSTANTIATE_TEST_SUITE_P(Models, GoldenLogits, ::testing::Values("qwen3", "llama", "qwen2"));

}  // namespace
}  // namespace ft
