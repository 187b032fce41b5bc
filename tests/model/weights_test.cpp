#include <cmath>
#include <filesystem>

#include "runtime/model/hf_convert.h"
#include "runtime/model/model_writer.h"
#include "runtime/model/tensor_names.h"
#include "runtime/model/weights.h"
#include "tests/model/model_test_util.h"

namespace ft {
namespace {

using test::TempDir;
using test::TinyModel;

std::vector<float> rows_of(const Weight& w) {
  uint64_t n = 1;
  for (uint64_t d : w.shape) n *= d;
  std::vector<float> out(n);
  EXPECT_TRUE(dequantize_row(w.type, w.data, out.data(), n).ok()) << w.name;
  return out;
}

TEST(WeightsNames, HfNamesMapToGgufNames) {
  EXPECT_EQ(hf_to_internal_name("model.embed_tokens.weight"), "token_embd.weight");
  EXPECT_EQ(hf_to_internal_name("lm_head.weight"), "output.weight");
  EXPECT_EQ(hf_to_internal_name("model.layers.12.self_attn.o_proj.weight"), "blk.12.attn_output.weight");
  EXPECT_EQ(hf_to_internal_name("model.layers.0.self_attn.k_norm.weight"), "blk.0.attn_k_norm.weight");
  EXPECT_EQ(hf_to_internal_name("model.layers.3.self_attn.v_proj.bias"), "blk.3.attn_v.bias");
  EXPECT_EQ(hf_to_internal_name("model.layers.3.post_attention_layernorm.weight"), "blk.3.ffn_norm.weight");
  EXPECT_EQ(hf_to_internal_name("model.layers.x.mlp.up_proj.weight"), std::nullopt);
  EXPECT_EQ(hf_to_internal_name("model.rotary_emb.inv_freq"), std::nullopt);
}

TEST(WeightsSafetensors, OpensFolderWithGgmlOrderShapes) {
  TempDir dir;
  TinyModel m;
  m.dtype = "BF16";
  auto values = test::write_tiny_model(dir.path(), m);
  auto w = WeightSet::open(dir.path());
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EXPECT_FALSE(w->from_gguf());
  EXPECT_EQ(w->config().arch, ModelArch::kLlama);
  const Weight* q = w->find("blk.1.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->type, GgmlType::kBF16);
  EXPECT_EQ(q->shape, (std::vector<uint64_t>{m.hidden, uint64_t{m.heads} * m.head_dim}));
  EXPECT_EQ(q->source_name, "model.layers.1.self_attn.q_proj.weight");
  EXPECT_EQ(rows_of(*q), values["model.layers.1.self_attn.q_proj.weight"]);
  EXPECT_FALSE(w->config().tied_embeddings);
  EXPECT_EQ(w->find("output.weight")->source_name, "lm_head.weight");
  EXPECT_EQ(w->get("blk.7.attn_q.weight").status().code(), ErrorCode::kNotFound);
}

TEST(WeightsSafetensors, TiedEmbeddingsResolveOutputToTokenEmbd) {
  TempDir dir;
  TinyModel m;
  m.arch = "qwen3";
  m.tied = true;
  test::write_tiny_model(dir.path(), m);
  auto w = WeightSet::open(dir.path());
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EXPECT_TRUE(w->config().tied_embeddings);
  EXPECT_EQ(w->find("output.weight")->data.data(), w->find("token_embd.weight")->data.data());
  EXPECT_NE(w->find("blk.0.attn_q_norm.weight"), nullptr);
}

TEST(WeightsSafetensors, MissingOrMisshapenTensorIsNamed) {
  {
    TempDir dir;
    TinyModel m;
    m.arch = "qwen2";
    test::write_tiny_model(dir.path(), m, {"model.layers.1.self_attn.k_proj.bias"});
    auto w = WeightSet::open(dir.path());
    EXPECT_EQ(w.status().code(), ErrorCode::kCorrupt);
    EXPECT_NE(w.status().message().find("blk.1.attn_k.bias is missing"), std::string::npos) << w.status().message();
  }
  {
    TempDir dir;
    TinyModel m;
    test::write_tiny_model(dir.path(), m);
    auto config = nlohmann::json::parse(read_file(dir.file("config.json")).value());
    config["intermediate_size"] = 128;
    test::write_text(dir.file("config.json"), config.dump());
    auto w = WeightSet::open(dir.path());
    EXPECT_EQ(w.status().code(), ErrorCode::kCorrupt);
    EXPECT_NE(w.status().message().find("ffn_gate.weight"), std::string::npos) << w.status().message();
    EXPECT_NE(w.status().message().find("[64, 128]"), std::string::npos) << w.status().message();
  }
}

// Rotates (x[a], x[b]) pairs by pos * theta^(-2i/d): NEOX pairs i with i+d/2,
// NORM pairs 2i with 2i+1.
std::vector<float> rope(std::vector<float> x, int pos, bool neox, uint32_t head_dim) {
  const size_t n_heads = x.size() / head_dim;
  for (size_t h = 0; h < n_heads; ++h) {
    float* v = x.data() + h * head_dim;
    for (uint32_t i = 0; i < head_dim / 2; ++i) {
      const double angle = pos * std::pow(10000.0, -2.0 * i / head_dim);
      const size_t a = neox ? i : 2 * i, b = neox ? i + head_dim / 2 : 2 * i + 1;
      const double xa = v[a], xb = v[b];
      v[a] = static_cast<float>(xa * std::cos(angle) - xb * std::sin(angle));
      v[b] = static_cast<float>(xa * std::sin(angle) + xb * std::cos(angle));
    }
  }
  return x;
}

std::vector<float> matvec(const std::vector<float>& w, const std::vector<float>& x, size_t rows) {
  std::vector<float> y(rows, 0.0f);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < x.size(); ++c) y[r] += w[r * x.size() + c] * x[c];
  return y;
}

double head_dot(const std::vector<float>& q, const std::vector<float>& k, size_t qh, size_t kh, uint32_t d) {
  double s = 0;
  for (uint32_t i = 0; i < d; ++i) s += double(q[qh * d + i]) * k[kh * d + i];
  return s;
}

TEST(WeightsConvert, LlamaPermutationPreservesAttentionScores) {
  TempDir dir;
  TinyModel m;
  test::write_tiny_model(dir.path(), m);
  ConvertOptions o{dir.path(), dir.file("m.gguf"), ModelFileType::kF32, {}};
  ASSERT_TRUE(convert_hf_to_gguf(o).ok());
  auto hf = WeightSet::open(dir.path());
  auto gguf = WeightSet::open(dir.file("m.gguf"));
  ASSERT_TRUE(hf.ok() && gguf.ok()) << gguf.status().to_string();
  EXPECT_EQ(gguf->config().rope_style, RopeStyle::kNorm);
  EXPECT_EQ(hf->config().rope_style, RopeStyle::kNeox);
  const auto x = test::gaussian(m.hidden, 9);
  const size_t q_rows = m.heads * m.head_dim, k_rows = m.kv_heads * m.head_dim;
  auto q_hf = matvec(rows_of(*hf->find("blk.0.attn_q.weight")), x, q_rows);
  auto k_hf = matvec(rows_of(*hf->find("blk.0.attn_k.weight")), x, k_rows);
  auto q_gg = matvec(rows_of(*gguf->find("blk.0.attn_q.weight")), x, q_rows);
  auto k_gg = matvec(rows_of(*gguf->find("blk.0.attn_k.weight")), x, k_rows);
  q_hf = rope(q_hf, 7, true, m.head_dim);
  k_hf = rope(k_hf, 3, true, m.head_dim);
  q_gg = rope(q_gg, 7, false, m.head_dim);
  k_gg = rope(k_gg, 3, false, m.head_dim);
  for (size_t h = 0; h < m.heads; ++h) {
    const size_t kh = h / (m.heads / m.kv_heads);
    EXPECT_NEAR(head_dot(q_hf, k_hf, h, kh, m.head_dim), head_dot(q_gg, k_gg, h, kh, m.head_dim), 1e-4) << h;
  }
  // Everything but q/k is carried unchanged at f32.
  EXPECT_EQ(rows_of(*hf->find("blk.1.attn_v.weight")), rows_of(*gguf->find("blk.1.attn_v.weight")));
  EXPECT_EQ(rows_of(*hf->find("output.weight")), rows_of(*gguf->find("output.weight")));
  EXPECT_NE(rows_of(*hf->find("blk.0.attn_q.weight")), rows_of(*gguf->find("blk.0.attn_q.weight")));
}

TEST(WeightsConvert, ShardedQwen2KeepsBiasesAndTokenizer) {
  TempDir dir;
  TinyModel m;
  m.arch = "qwen2";
  m.sharded = true;
  auto values = test::write_tiny_model(dir.path(), m);
  ConvertOptions o{dir.path(), dir.file("m.gguf"), ModelFileType::kBF16, {}};
  ASSERT_TRUE(convert_hf_to_gguf(o).ok());
  auto w = WeightSet::open(dir.file("m.gguf"));
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EXPECT_TRUE(w->config().qkv_bias);
  EXPECT_EQ(w->config().rope_style, RopeStyle::kNeox);
  const Weight* bias = w->find("blk.1.attn_k.bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->type, GgmlType::kF32);
  EXPECT_EQ(rows_of(*bias), values["model.layers.1.self_attn.k_proj.bias"]);
  EXPECT_EQ(w->find("blk.0.ffn_up.weight")->type, GgmlType::kBF16);
  const GgufReader& g = *w->gguf();
  EXPECT_EQ(g.get_string("tokenizer.ggml.model").value(), "gpt2");
  EXPECT_EQ(g.get_string("tokenizer.ggml.pre").value(), "qwen2");
  const auto tokens = g.get_strings("tokenizer.ggml.tokens").value();
  ASSERT_EQ(tokens.size(), m.vocab);
  EXPECT_EQ(tokens[m.vocab - 1], "<|eos|>");
  EXPECT_EQ(tokens[65], "A");  // byte 0x41 stands for itself
  const auto* types = g.get_array("tokenizer.ggml.token_type").value()->as<int32_t>();
  EXPECT_EQ((*types)[m.vocab - 1], 3);  // control
  EXPECT_EQ((*types)[10], 1);
  EXPECT_EQ(g.get_strings("tokenizer.ggml.merges").value().front(), "Ġ t");
  EXPECT_EQ(g.get_uint("tokenizer.ggml.bos_token_id").value(), m.vocab - 2);
  EXPECT_EQ(g.get_uint("tokenizer.ggml.eos_token_id").value(), m.vocab - 1);
  EXPECT_TRUE(g.get_bool("tokenizer.ggml.add_bos_token").value());
  EXPECT_NE(g.get_string("tokenizer.chat_template").value().find("messages"), std::string::npos);
  EXPECT_EQ(w->config().eos_id, static_cast<int32_t>(m.vocab - 1));
}

TEST(WeightsConvert, Q4KMRecipeAndRowFallback) {
  ModelConfig c;
  c.num_layers = 16;
  std::string note;
  EXPECT_EQ(choose_tensor_type(ModelFileType::kQ4_K_M, "output.weight", {512, 100}, c, true, &note), GgmlType::kQ6_K);
  EXPECT_EQ(choose_tensor_type(ModelFileType::kQ4_K_M, "token_embd.weight", {512, 100}, c, true, &note),
            GgmlType::kQ4_K);
  EXPECT_EQ(choose_tensor_type(ModelFileType::kQ4_K_M, "token_embd.weight", {512, 100}, c, false, &note),
            GgmlType::kQ6_K);
  EXPECT_EQ(choose_tensor_type(ModelFileType::kQ4_K_M, "blk.3.attn_norm.weight", {512}, c, true, &note),
            GgmlType::kF32);
  // 16 layers: first and last two, then every third from layer 4.
  std::vector<int> six;
  for (int i = 0; i < 16; ++i)
    if (choose_tensor_type(ModelFileType::kQ4_K_M, fmt::format("blk.{}.ffn_down.weight", i), {512, 512}, c, true,
                           &note) == GgmlType::kQ6_K)
      six.push_back(i);
  EXPECT_EQ(six, (std::vector<int>{0, 1, 4, 7, 10, 13, 14, 15}));
  EXPECT_EQ(choose_tensor_type(ModelFileType::kQ4_K_M, "blk.2.attn_q.weight", {512, 512}, c, true, &note),
            GgmlType::kQ4_K);
  EXPECT_TRUE(note.empty());
  EXPECT_EQ(choose_tensor_type(ModelFileType::kQ4_K_M, "blk.2.attn_q.weight", {96, 512}, c, true, &note),
            GgmlType::kQ5_0);
  EXPECT_NE(note.find("not a multiple of 256"), std::string::npos);
  EXPECT_EQ(choose_tensor_type(ModelFileType::kQ6_K, "blk.2.attn_q.weight", {96, 512}, c, true, &note),
            GgmlType::kQ8_0);
  EXPECT_EQ(choose_tensor_type(ModelFileType::kQ8_0, "blk.2.attn_q.weight", {100, 512}, c, true, &note),
            GgmlType::kF16);
}

TEST(WeightsConvert, QuantizedConversionStaysCloseToSource) {
  TempDir dir;
  TinyModel m;
  m.arch = "qwen3";
  m.hidden = 256;
  m.intermediate = 512;
  m.heads = 4;
  m.kv_heads = 2;
  m.head_dim = 64;
  m.layers = 1;
  auto values = test::write_tiny_model(dir.path(), m);
  std::vector<std::string> notes;
  size_t reported = 0;
  ConvertOptions o{dir.path(), dir.file("m.gguf"), ModelFileType::kQ4_K_M, {}};
  o.callbacks.note = [&](const std::string& n) { notes.push_back(n); };
  o.callbacks.on_tensor = [&](size_t, size_t, const std::string&, GgmlType) { ++reported; };
  ASSERT_TRUE(convert_hf_to_gguf(o).ok());
  auto w = WeightSet::open(dir.file("m.gguf"));
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EXPECT_EQ(reported, w->gguf()->tensors().size());
  EXPECT_TRUE(notes.empty());
  const Weight* gate = w->find("blk.0.ffn_gate.weight");
  EXPECT_EQ(gate->type, GgmlType::kQ4_K);
  EXPECT_LT(test::relative_l2(values["model.layers.0.mlp.gate_proj.weight"], rows_of(*gate)), 0.075);
  const Weight* down = w->find("blk.0.ffn_down.weight");
  EXPECT_EQ(down->type, GgmlType::kQ6_K);
  EXPECT_LT(test::relative_l2(values["model.layers.0.mlp.down_proj.weight"], rows_of(*down)), 0.02);
}

TEST(WeightsConvert, FailuresLeaveNoOutput) {
  TempDir dir;
  TinyModel m;
  test::write_tiny_model(dir.path(), m);
  std::filesystem::remove(dir.file("tokenizer.json"));
  ConvertOptions o{dir.path(), dir.file("m.gguf"), ModelFileType::kF16, {}};
  Status s = convert_hf_to_gguf(o);
  EXPECT_EQ(s.code(), ErrorCode::kIo);
  EXPECT_NE(s.message().find("tokenizer.json"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.file("m.gguf")));
}

}  // namespace
}  // namespace ft
