#include "runtime/model/safetensors.h"
#include "tests/model/model_test_util.h"

namespace ft {
namespace {

using test::StTensor;
using test::TempDir;

TEST(SafetensorsFile, ReadsTensorsOfEverySupportedDtype) {
  const std::vector<float> a = {1.0f, -2.5f, 3.25f, 0.0f, 7.0f, -1.0f};
  std::vector<uint8_t> f16(a.size() * 2);
  for (size_t i = 0; i < a.size(); ++i) {
    uint16_t h = f32_to_fp16(a[i]);
    std::memcpy(f16.data() + 2 * i, &h, 2);
  }
  auto bytes = test::safetensors_bytes({{"a.f32", {"F32", {2, 3}, test::f32_bytes(a)}},
                                        {"a.f16", {"F16", {6}, f16}},
                                        {"a.bf16", {"BF16", {3, 2}, test::bf16_bytes(a)}},
                                        {"ids", {"I64", {1}, std::vector<uint8_t>(8, 0)}}},
                                       nlohmann::json{{"format", "pt"}});
  auto f = SafetensorsFile::from_memory(bytes);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->tensors().size(), 4u);
  EXPECT_EQ(f->metadata().at("format"), "pt");
  for (const char* name : {"a.f32", "a.f16", "a.bf16"}) {
    const SafetensorsTensor* t = f->find(name);
    ASSERT_NE(t, nullptr);
    ASSERT_TRUE(t->type.has_value());
    std::vector<float> out(6);
    auto data = f->data(name);
    ASSERT_TRUE(data.ok());
    ASSERT_TRUE(dequantize_row(*t->type, *data, out.data(), 6).ok());
    EXPECT_EQ(out, a) << name;
  }
  EXPECT_EQ(f->find("a.f32")->shape, (std::vector<uint64_t>{2, 3}));
  auto ids = f->data("ids");
  EXPECT_EQ(ids.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(ids.status().message().find("I64"), std::string::npos);
  EXPECT_EQ(f->data("nope").status().code(), ErrorCode::kNotFound);
}

void expect_corrupt(const std::vector<uint8_t>& bytes, const std::string& fragment) {
  auto f = SafetensorsFile::from_memory(bytes);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), ErrorCode::kCorrupt) << f.status().to_string();
  EXPECT_NE(f.status().message().find(fragment), std::string::npos) << f.status().message();
}

std::vector<uint8_t> with_header(const std::string& header, size_t data_bytes) {
  test::Bytes b;
  b.put<uint64_t>(header.size()).raw(std::vector<uint8_t>(header.begin(), header.end()));
  b.raw(std::vector<uint8_t>(data_bytes, 0));
  return b.data();
}

TEST(SafetensorsHostile, BadHeadersAndEntries) {
  expect_corrupt({1, 2, 3}, "only 3 bytes");
  expect_corrupt(test::Bytes().put<uint64_t>(1000).put<uint64_t>(0).data(), "header length 1000");
  expect_corrupt(test::Bytes().put<uint64_t>(~0ull).data(), "header length");
  expect_corrupt(with_header("{not json", 0), "not valid JSON");
  expect_corrupt(with_header("[1,2]", 0), "not a JSON object");
  expect_corrupt(with_header(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4), "outside");
  expect_corrupt(with_header(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8), "8 bytes of data");
  expect_corrupt(with_header(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8), "outside");
  expect_corrupt(with_header(R"({"t":{"dtype":"Q4","shape":[2],"data_offsets":[0,2]}})", 8), "unknown dtype Q4");
  expect_corrupt(with_header(R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8), "non-integer");
  expect_corrupt(with_header(R"({"t":{"dtype":"F32","data_offsets":[0,8]}})", 8), "needs dtype");
  expect_corrupt(
      with_header(R"({"t":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]}})", 8),
      "overflows");
}

TEST(SafetensorsModel, ShardedIndexIsFollowed) {
  TempDir dir;
  test::TinyModel m;
  m.sharded = true;
  auto values = test::write_tiny_model(dir.path(), m);
  auto model = SafetensorsModel::open_dir(dir.path());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ(model->files().size(), 2u);
  EXPECT_EQ(model->names().size(), values.size());
  const SafetensorsTensor* t = model->find("model.layers.1.mlp.down_proj.weight");
  ASSERT_NE(t, nullptr);
  auto data = model->data(t->name);
  ASSERT_TRUE(data.ok());
  std::vector<float> row(m.intermediate);
  ASSERT_TRUE(dequantize_row(GgmlType::kF32, *data, row.data(), row.size()).ok());
  EXPECT_EQ(row[5], values[t->name][5]);
}

TEST(SafetensorsModel, IndexNamingAMissingTensorIsCorrupt) {
  TempDir dir;
  test::TinyModel m;
  m.sharded = true;
  test::write_tiny_model(dir.path(), m);
  auto index = nlohmann::json::parse(read_file(dir.file("model.safetensors.index.json")).value());
  index["weight_map"]["model.layers.9.mlp.up_proj.weight"] = "model-00001-of-00002.safetensors";
  test::write_text(dir.file("model.safetensors.index.json"), index.dump());
  auto model = SafetensorsModel::open_dir(dir.path());
  EXPECT_EQ(model.status().code(), ErrorCode::kCorrupt);
  EXPECT_NE(model.status().message().find("model.layers.9.mlp.up_proj.weight"), std::string::npos);
}

TEST(SafetensorsModel, IndexWithPathEscapeIsRefused) {
  TempDir dir;
  test::write_text(dir.file("model.safetensors.index.json"), R"({"weight_map":{"a":"../secret.safetensors"}})");
  auto model = SafetensorsModel::open_dir(dir.path());
  EXPECT_EQ(model.status().code(), ErrorCode::kCorrupt);
}

TEST(SafetensorsModel, EmptyOrMissingFolder) {
  TempDir dir;
  EXPECT_EQ(SafetensorsModel::open_dir(dir.path()).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(SafetensorsModel::open_dir(dir.file("absent")).status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace ft
