#include <sys/resource.h>

#include <csignal>
#include <filesystem>

#include "runtime/model/gguf_reader.h"
#include "runtime/model/gguf_writer.h"
#include "tests/model/model_test_util.h"

namespace ft {
namespace {

using test::Bytes;
using test::TempDir;

GgufArray nested_strings() {
  std::vector<GgufValue> rows;
  rows.push_back(GgufValue::strings({"a", "bc"}));
  rows.push_back(GgufValue::strings({}));
  rows.push_back(GgufValue::strings({"", "d\0e", "\xF0\x9F\x98\x80"}));
  return GgufArray{GgufType::kArray, std::move(rows)};
}

TEST(GgufRoundTrip, EveryMetadataType) {
  TempDir dir;
  GgufWriter w;
  w.set("t.u8", GgufValue(uint8_t{200}));
  w.set("t.i8", GgufValue(int8_t{-100}));
  w.set("t.u16", GgufValue(uint16_t{60000}));
  w.set("t.i16", GgufValue(int16_t{-30000}));
  w.set("t.u32", GgufValue(uint32_t{4000000000u}));
  w.set("t.i32", GgufValue(int32_t{-2000000000}));
  w.set("t.f32", GgufValue(1.5f));
  w.set("t.bool", GgufValue(true));
  w.set("t.str", GgufValue(std::string("h\xC3\xA9llo\n")));
  w.set("t.u64", GgufValue(uint64_t{1} << 60));
  w.set("t.i64", GgufValue(int64_t{-(int64_t{1} << 60)}));
  w.set("t.f64", GgufValue(-2.25e300));
  w.set("t.arr.f32", GgufValue::f32s({1.0f, -2.0f}));
  w.set("t.arr.i32", GgufValue::i32s({1, -2, 3}));
  w.set("t.arr.bool", GgufValue(GgufArray{GgufType::kBool, std::vector<uint8_t>{1, 0, 1}}));
  w.set("t.arr.u64", GgufValue(GgufArray{GgufType::kUint64, std::vector<uint64_t>{~0ull}}));
  w.set("t.arr.f64", GgufValue(GgufArray{GgufType::kFloat64, std::vector<double>{0.5}}));
  w.set("t.arr.str", GgufValue::strings({"x", "yy"}));
  w.set("t.arr.nested", GgufValue(nested_strings()));
  w.set("t.arr.empty", GgufValue(GgufArray{GgufType::kInt16, std::vector<int16_t>{}}));
  ASSERT_TRUE(w.write(dir.file("m.gguf")).ok());

  auto r = GgufReader::open(dir.file("m.gguf"));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->version(), 3u);
  EXPECT_EQ(*r->find("t.u8")->get_if<uint8_t>(), 200);
  EXPECT_EQ(*r->find("t.i8")->get_if<int8_t>(), -100);
  EXPECT_EQ(*r->find("t.u16")->get_if<uint16_t>(), 60000);
  EXPECT_EQ(*r->find("t.i16")->get_if<int16_t>(), -30000);
  EXPECT_EQ(r->get_uint("t.u32").value(), 4000000000u);
  EXPECT_EQ(r->get_int("t.i32").value(), -2000000000);
  EXPECT_EQ(r->get_float("t.f32").value(), 1.5);
  EXPECT_TRUE(r->get_bool("t.bool").value());
  EXPECT_EQ(r->get_string("t.str").value(), "h\xC3\xA9llo\n");
  EXPECT_EQ(r->get_uint("t.u64").value(), uint64_t{1} << 60);
  EXPECT_EQ(r->get_int("t.i64").value(), -(int64_t{1} << 60));
  EXPECT_EQ(r->get_float("t.f64").value(), -2.25e300);
  EXPECT_EQ(*r->get_array("t.arr.f32").value()->as<float>(), (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(*r->get_array("t.arr.i32").value()->as<int32_t>(), (std::vector<int32_t>{1, -2, 3}));
  EXPECT_EQ(r->get_array("t.arr.bool").value()->elem_type, GgufType::kBool);
  EXPECT_EQ(*r->get_array("t.arr.bool").value()->as<uint8_t>(), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(*r->get_array("t.arr.u64").value()->as<uint64_t>(), (std::vector<uint64_t>{~0ull}));
  EXPECT_EQ(*r->get_array("t.arr.f64").value()->as<double>(), (std::vector<double>{0.5}));
  EXPECT_EQ(r->get_strings("t.arr.str").value(), (std::vector<std::string>{"x", "yy"}));
  EXPECT_EQ(r->get_array("t.arr.empty").value()->size(), 0u);
  const auto* nested = r->get_array("t.arr.nested").value()->as<GgufValue>();
  ASSERT_NE(nested, nullptr);
  ASSERT_EQ(nested->size(), 3u);
  EXPECT_EQ(*(*nested)[0].array()->as<std::string>(), (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ((*nested)[1].array()->size(), 0u);
  EXPECT_EQ((*(*nested)[2].array()->as<std::string>())[2], "\xF0\x9F\x98\x80");
  // Metadata keeps file order, general.alignment first.
  EXPECT_EQ(r->metadata().front().first, "general.alignment");
  EXPECT_EQ(r->metadata().back().first, "t.arr.empty");
}

// Found by the fuzzer: formatting a u64 above INT64_MAX threw.
TEST(GgufValue, ToStringCoversEveryScalarRange) {
  EXPECT_EQ(GgufValue(~uint64_t{0}).to_string(), "18446744073709551615");
  EXPECT_EQ(GgufValue(int64_t{-5}).to_string(), "-5");
  EXPECT_EQ(GgufValue(uint8_t{200}).to_string(), "200");
  EXPECT_EQ(GgufValue(true).to_string(), "true");
  EXPECT_EQ(GgufValue("a\"b").to_string(), "\"a\\\"b\"");
  EXPECT_EQ(GgufValue::i32s({1, 2, 3}).to_string(2), "[3 x i32] 1, 2, ...");
}

TEST(GgufRoundTrip, TypedGettersReportMissingAndMismatchedKeys) {
  TempDir dir;
  GgufWriter w;
  w.set("s", GgufValue("text"));
  w.set("neg", GgufValue(int32_t{-1}));
  ASSERT_TRUE(w.write(dir.file("m.gguf")).ok());
  auto r = GgufReader::open(dir.file("m.gguf"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->get_string("nope").status().code(), ErrorCode::kNotFound);
  EXPECT_NE(r->get_string("nope").status().message().find("nope"), std::string::npos);
  EXPECT_EQ(r->get_uint("s").status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(r->get_uint("neg").status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(r->get_int("neg").value(), -1);
  EXPECT_EQ(r->get_bool("s").status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(r->get_strings("s").status().code(), ErrorCode::kCorrupt);
}

TEST(GgufRoundTrip, EveryWritableTensorTypeWithAlignmentAndPadding) {
  TempDir dir;
  GgufWriter w(64);
  const std::vector<GgmlType> types = {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0,
                                       GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ4_K,
                                       GgmlType::kQ5_K, GgmlType::kQ6_K};
  std::map<std::string, std::vector<uint8_t>> expected;
  for (size_t i = 0; i < types.size(); ++i) {
    const auto& traits = ggml_traits(types[i]);
    const uint64_t row = traits.block_size == 1 ? 3 : traits.block_size;
    const std::vector<uint64_t> shape = {row, 2, 1};
    std::vector<uint8_t> bytes(*ggml_bytes(types[i], row * 2));
    for (size_t j = 0; j < bytes.size(); ++j) bytes[j] = static_cast<uint8_t>(j * 7 + i);
    const std::string name = std::string("t.") + std::string(traits.name);
    expected[name] = bytes;
    ASSERT_TRUE(w.add_tensor_bytes(name, types[i], shape, bytes).ok());
  }
  ASSERT_TRUE(w.write(dir.file("m.gguf")).ok());
  auto r = GgufReader::open(dir.file("m.gguf"));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->alignment(), 64u);
  EXPECT_EQ(r->data_offset() % 64, 0u);
  ASSERT_EQ(r->tensors().size(), types.size());
  for (const auto& t : r->tensors()) {
    EXPECT_EQ(t.offset % 64, 0u) << t.name;
    EXPECT_EQ(t.shape.size(), 3u);
    auto data = r->tensor_data(t.name);
    ASSERT_TRUE(data.ok()) << data.status().to_string();
    EXPECT_EQ(std::vector<uint8_t>(data->begin(), data->end()), expected[t.name]) << t.name;
  }
}

TEST(GgufRoundTrip, StreamsTensorDataInPieces) {
  TempDir dir;
  GgufWriter w;
  ASSERT_TRUE(w.add_tensor("big", GgmlType::kF32, {1024, 600}, [](const GgufSink& sink) -> Status {
                 std::vector<float> row(1024);
                 for (int r = 0; r < 600; ++r) {
                   for (int i = 0; i < 1024; ++i) row[i] = static_cast<float>(r * 1024 + i);
                   FT_RETURN_IF_ERROR(sink({reinterpret_cast<const uint8_t*>(row.data()), row.size() * 4}));
                 }
                 return Status();
               }).ok());
  size_t progress_calls = 0;
  ASSERT_TRUE(w.write(dir.file("m.gguf"), [&](size_t done, size_t count, uint64_t, uint64_t) {
                 ++progress_calls;
                 EXPECT_LE(done, count);
               }).ok());
  EXPECT_EQ(progress_calls, 1u);
  auto r = GgufReader::open(dir.file("m.gguf"));
  ASSERT_TRUE(r.ok());
  auto data = r->tensor_data("big").value();
  float last;
  std::memcpy(&last, data.data() + data.size() - 4, 4);
  EXPECT_EQ(last, 600.0f * 1024 - 1);
}

TEST(GgufWriter, ProducerFailureOrWrongSizeLeavesNoFile) {
  TempDir dir;
  {
    GgufWriter w;
    ASSERT_TRUE(w.add_tensor("t", GgmlType::kF32, {4}, [](const GgufSink&) {
                   return FT_ERROR(ErrorCode::kIo, "source went away");
                 }).ok());
    Status s = w.write(dir.file("a.gguf"));
    EXPECT_EQ(s.code(), ErrorCode::kIo);
  }
  {
    GgufWriter w;
    ASSERT_TRUE(w.add_tensor_bytes("t", GgmlType::kF32, {4}, std::vector<uint8_t>(12)).ok());
    Status s = w.write(dir.file("b.gguf"));
    EXPECT_EQ(s.code(), ErrorCode::kInternal);
    EXPECT_NE(s.message().find("wrote 12 bytes, expected 16"), std::string::npos) << s.message();
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(GgufWriter, RejectsBadTensorDescriptions) {
  GgufWriter w;
  EXPECT_FALSE(w.add_tensor_bytes("a", GgmlType::kQ4_K, {100}, {}).ok());
  EXPECT_FALSE(w.add_tensor_bytes("b", GgmlType::kF32, {}, {}).ok());
  EXPECT_FALSE(w.add_tensor_bytes("c", GgmlType::kF32, {1, 1, 1, 1, 1}, {}).ok());
  EXPECT_FALSE(w.add_tensor_bytes("d", GgmlType::kF32, {4, 0}, {}).ok());
  EXPECT_TRUE(w.add_tensor_bytes("e", GgmlType::kF32, {1}, std::vector<uint8_t>(4)).ok());
  EXPECT_FALSE(w.add_tensor_bytes("e", GgmlType::kF32, {1}, std::vector<uint8_t>(4)).ok());
}

TEST(GgufWriter, UnwritableDirectoryIsAnIoError) {
  GgufWriter w;
  Status s = w.write("/nonexistent-ft-dir/sub/m.gguf");
  EXPECT_EQ(s.code(), ErrorCode::kIo);
  EXPECT_NE(s.message().find("/nonexistent-ft-dir/sub/m.gguf"), std::string::npos);
}

// A file size limit makes write() fail with EFBIG exactly as a full disk
// fails with ENOSPC, and works for root too.
TEST(GgufWriter, DiskFullLeavesNoPartialFile) {
  TempDir dir;
  GgufWriter w;
  ASSERT_TRUE(w.add_tensor_bytes("t", GgmlType::kF32, {1 << 20}, std::vector<uint8_t>(4 << 20, 1)).ok());
  struct rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old_limit;
  small.rlim_cur = 1 << 20;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  Status s = w.write(dir.file("m.gguf"));
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(s.code(), ErrorCode::kIo);
  EXPECT_NE(s.message().find("cannot write"), std::string::npos) << s.message();
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// ---- hostile input --------------------------------------------------------

Status parse(const Bytes& b) {
  auto r = GgufReader::from_memory(b.data());
  return r.ok() ? Status() : r.status();
}

void expect_corrupt(const Bytes& b, const std::string& fragment) {
  Status s = parse(b);
  EXPECT_EQ(s.code(), ErrorCode::kCorrupt) << s.to_string();
  EXPECT_NE(s.message().find(fragment), std::string::npos) << "message: " << s.message();
}

Bytes one_tensor(uint32_t type, std::vector<uint64_t> dims, uint64_t offset, size_t data_bytes) {
  Bytes b;
  b.header(1, 0).tensor("w", dims, type, offset).pad_to(32);
  b.raw(std::vector<uint8_t>(data_bytes, 0));
  return b;
}

TEST(GgufHostile, WrongMagic) {
  Bytes b;
  b.put<uint32_t>(0x46554748).put<uint32_t>(3).put<uint64_t>(0).put<uint64_t>(0);
  expect_corrupt(b, "not a GGUF file");
  expect_corrupt(Bytes().put<uint8_t>('G'), "not a GGUF file");
}

TEST(GgufHostile, VersionsOutsideV2AndV3) {
  EXPECT_TRUE(parse(Bytes().header(0, 0, 2)).ok());
  EXPECT_EQ(parse(Bytes().header(0, 0, 1)).code(), ErrorCode::kUnsupported);
  EXPECT_EQ(parse(Bytes().header(0, 0, 0x03000000)).code(), ErrorCode::kUnsupported);
  expect_corrupt(Bytes().header(0, 0, 77), "unknown GGUF version 77");
}

TEST(GgufHostile, EveryTruncationIsAnError) {
  TempDir dir;
  GgufWriter w;
  w.set("k", GgufValue::strings({"abc", "de"}));
  ASSERT_TRUE(w.add_tensor_bytes("t", GgmlType::kQ8_0, {32}, std::vector<uint8_t>(34, 3)).ok());
  ASSERT_TRUE(w.write(dir.file("m.gguf")).ok());
  const std::string full = read_file(dir.file("m.gguf")).value();
  const std::vector<uint8_t> bytes(full.begin(), full.end());
  ASSERT_TRUE(GgufReader::from_memory(bytes).ok());
  // The last tensor's padding is not needed to read it; cut into its data.
  const size_t needed = bytes.size() - (32 - 34 % 32);
  for (size_t n = 0; n < needed; ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    auto r = GgufReader::from_memory(cut);
    ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes parsed";
    EXPECT_EQ(r.status().code(), ErrorCode::kCorrupt) << r.status().to_string();
  }
}

TEST(GgufHostile, StringLengthPastTheEnd) {
  Bytes b;
  b.header(0, 1).put<uint64_t>(1000).raw(std::vector<uint8_t>(20, 'a'));
  expect_corrupt(b, "string length 1000");
}

TEST(GgufHostile, AbsurdCounts) {
  expect_corrupt(Bytes().header(0, uint64_t{1} << 62), "metadata count");
  expect_corrupt(Bytes().header(uint64_t{1} << 62, 0), "tensor count");
  Bytes arr;
  arr.header(0, 1).str("a").put<uint32_t>(9).put<uint32_t>(8).put<uint64_t>(uint64_t{1} << 61);
  expect_corrupt(arr, "count 2305843009213693952 cannot fit");
  Bytes nums;
  nums.header(0, 1).str("a").put<uint32_t>(9).put<uint32_t>(12).put<uint64_t>(3).put<double>(1.0);
  expect_corrupt(nums, "count 3 cannot fit");
}

TEST(GgufHostile, BadValueTypesAndBools) {
  Bytes type;
  type.header(0, 1).str("a").put<uint32_t>(13).put<uint8_t>(0);
  expect_corrupt(type, "unknown value type 13");
  Bytes elem;
  elem.header(0, 1).str("a").put<uint32_t>(9).put<uint32_t>(99).put<uint64_t>(0);
  expect_corrupt(elem, "unknown array element type 99");
  Bytes flag;
  flag.header(0, 1).str("a").put<uint32_t>(7).put<uint8_t>(2);
  expect_corrupt(flag, "not 0 or 1");
}

TEST(GgufHostile, ArraysNestedTooDeep) {
  Bytes b;
  b.header(0, 1).str("deep").put<uint32_t>(9);
  for (int i = 0; i < 10; ++i) b.put<uint32_t>(9).put<uint64_t>(1);
  b.put<uint32_t>(0).put<uint64_t>(0);
  expect_corrupt(b, "nested deeper");
}

TEST(GgufHostile, DuplicateKeysAndTensorNames) {
  Bytes keys;
  keys.header(0, 2).str("k").put<uint32_t>(4).put<uint32_t>(1).str("k").put<uint32_t>(4).put<uint32_t>(2);
  expect_corrupt(keys, "appears twice");
  Bytes tensors;
  tensors.header(2, 0).tensor("w", {4}, 0, 0).tensor("w", {4}, 0, 32).pad_to(32).raw(std::vector<uint8_t>(64));
  expect_corrupt(tensors, "tensor w appears twice");
}

TEST(GgufHostile, DimensionCounts) {
  expect_corrupt(one_tensor(0, {}, 0, 0), "0 dimensions");
  expect_corrupt(one_tensor(0, {1, 1, 1, 1, 1}, 0, 4), "5 dimensions");
  expect_corrupt(one_tensor(0, {4, 0}, 0, 0), "dimension 1 is zero");
}

TEST(GgufHostile, OverflowingSizesAndOffsets) {
  expect_corrupt(one_tensor(0, {1ull << 32, 1ull << 32, 1ull << 32}, 0, 0), "element count overflows");
  expect_corrupt(one_tensor(0, {1ull << 62, 2}, 0, 0), "byte size overflows");
  expect_corrupt(one_tensor(0, {4}, ~uint64_t{0} - 31, 16), "runs past the end");
  expect_corrupt(one_tensor(0, {1ull << 40}, 0, 16), "runs past the end");
}

TEST(GgufHostile, MisalignedOffsetsAndBadAlignment) {
  expect_corrupt(one_tensor(0, {4}, 8, 64), "misaligned");
  Bytes b;
  b.header(0, 1).str("general.alignment").put<uint32_t>(4).put<uint32_t>(24);
  expect_corrupt(b, "not a power of two");
  Bytes s;
  s.header(0, 1).str("general.alignment").put<uint32_t>(8).str("x");
  expect_corrupt(s, "general.alignment");
}

TEST(GgufHostile, OverlappingTensors) {
  Bytes b;
  b.header(2, 0).tensor("a", {16}, 0, 0).tensor("b", {16}, 0, 32).pad_to(32).raw(std::vector<uint8_t>(128));
  expect_corrupt(b, "overlap");
}

TEST(GgufHostile, UnknownTypeIdIsCorruptKnownButUnsupportedIsListed) {
  expect_corrupt(one_tensor(99, {32}, 0, 64), "unknown ggml type id 99");
  expect_corrupt(one_tensor(12, {100}, 0, 512), "not a multiple of the q4_K block size 256");
  // Q2_K (10) and IQ4_XS (23): a valid file, listed, data refused.
  for (uint32_t id : {10u, 23u}) {
    Bytes b = one_tensor(id, {256}, 0, 256);
    auto r = GgufReader::from_memory(b.data());
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ASSERT_EQ(r->tensors().size(), 1u);
    EXPECT_EQ(r->tensors()[0].n_bytes, id == 10 ? 84u : 136u);
    auto data = r->tensor_data("w");
    EXPECT_EQ(data.status().code(), ErrorCode::kUnsupported);
    EXPECT_NE(data.status().message().find(id == 10 ? "q2_K" : "iq4_xs"), std::string::npos);
  }
}

TEST(GgufReader, OpenErrorsNameThePath) {
  TempDir dir;
  auto missing = GgufReader::open(dir.file("none.gguf"));
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  test::write_bytes(dir.file("junk.gguf"), {'n', 'o', 'p', 'e', 0, 0, 0, 0});
  auto junk = GgufReader::open(dir.file("junk.gguf"));
  EXPECT_EQ(junk.status().code(), ErrorCode::kCorrupt);
  EXPECT_NE(junk.status().message().find("junk.gguf"), std::string::npos);
  test::write_bytes(dir.file("empty.gguf"), {});
  EXPECT_EQ(GgufReader::open(dir.file("empty.gguf")).status().code(), ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace ft
