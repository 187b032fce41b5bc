#include "cache/cache_key.h"

#include <set>

#include <gtest/gtest.h>

namespace ft {
namespace {

CacheKeyFields sample_fields() {
  CacheKeyFields f;
  f.kernel = "rmsnorm_bf16_h4096";
  f.entry = "ft::rmsnorm<ft::bf16,4096,256>";
  f.template_args = "bf16,4096,256";
  f.arch = "gfx90a:xnack-";
  f.toolchain = "clang";
  f.toolchain_version = "19.1.7";
  f.flags = "-O3 -ffast-math -nogpuinc";
  f.source_hash = hash_sources("template <int N> void k() {}", {{"ft_device.h", "#pragma once"}});
  return f;
}

bool is_lower_hex(const std::string& s) {
  return s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(CacheKey, IsThirtyTwoLowercaseHexDigits) {
  std::string key = compute_cache_key(sample_fields());
  EXPECT_EQ(key.size(), 32u);
  EXPECT_TRUE(is_lower_hex(key)) << key;
  std::string hash = hash_sources("x", {});
  EXPECT_EQ(hash.size(), 32u);
  EXPECT_TRUE(is_lower_hex(hash)) << hash;
}

TEST(CacheKey, IdenticalFieldsGiveIdenticalKeys) {
  EXPECT_EQ(compute_cache_key(sample_fields()), compute_cache_key(sample_fields()));
  EXPECT_EQ(compute_cache_key(CacheKeyFields{}), compute_cache_key(CacheKeyFields{}));
}

TEST(CacheKey, ChangingAnyFieldChangesTheKey) {
  const std::string base = compute_cache_key(sample_fields());
  std::set<std::string> keys = {base};
  for (auto member : {&CacheKeyFields::kernel, &CacheKeyFields::entry, &CacheKeyFields::template_args,
                      &CacheKeyFields::arch, &CacheKeyFields::toolchain,
                      &CacheKeyFields::toolchain_version, &CacheKeyFields::flags,
                      &CacheKeyFields::source_hash}) {
    for (const char* change : {"", "x"}) {
      CacheKeyFields f = sample_fields();
      f.*member = change[0] ? f.*member + change : std::string();
      std::string key = compute_cache_key(f);
      EXPECT_NE(key, base) << "field value '" << f.*member << "'";
      keys.insert(key);
    }
  }
  // 8 fields x 2 changes, all distinct from each other too.
  EXPECT_EQ(keys.size(), 1u + 8 * 2);
}

TEST(CacheKey, TargetIdFeatureAndToolchainVersionMatter) {
  CacheKeyFields minus = sample_fields();
  CacheKeyFields plus = sample_fields();
  plus.arch = "gfx90a:xnack+";
  CacheKeyFields bare = sample_fields();
  bare.arch = "gfx90a";
  EXPECT_NE(compute_cache_key(minus), compute_cache_key(plus));
  EXPECT_NE(compute_cache_key(minus), compute_cache_key(bare));

  CacheKeyFields newer = sample_fields();
  newer.toolchain_version = "19.1.8";
  EXPECT_NE(compute_cache_key(sample_fields()), compute_cache_key(newer));
}

TEST(CacheKey, FieldBoundariesAreUnambiguous) {
  // The same characters split differently between neighbouring fields.
  CacheKeyFields a = sample_fields();
  CacheKeyFields b = sample_fields();
  a.kernel = "rmsnorm_bf16";
  a.entry = "_h4096";
  b.kernel = "rmsnorm_bf16_h4096";
  b.entry = "";
  EXPECT_NE(compute_cache_key(a), compute_cache_key(b));

  EXPECT_NE(hash_sources("ab", {{"c", "d"}}), hash_sources("a", {{"bc", "d"}}));
  EXPECT_NE(hash_sources("a", {{"b", "cd"}}), hash_sources("a", {{"bc", "d"}}));
  EXPECT_NE(hash_sources("a", {{"b", ""}}), hash_sources("a", {}));
}

TEST(CacheKey, HeaderContentsChangeTheSourceHash) {
  std::vector<std::pair<std::string, std::string>> headers = {
      {"ft_device.h", "#define FT_WAVE 64"}, {"tiles.h", "constexpr int kTile = 16;"}};
  std::string base = hash_sources("kernel", headers);
  auto edited = headers;
  edited[1].second = "constexpr int kTile = 32;";
  EXPECT_NE(hash_sources("kernel", edited), base);
  auto renamed = headers;
  renamed[0].first = "ft_device2.h";
  EXPECT_NE(hash_sources("kernel", renamed), base);
  EXPECT_NE(hash_sources("kernel2", headers), base);

  CacheKeyFields f1 = sample_fields();
  CacheKeyFields f2 = sample_fields();
  f1.source_hash = base;
  f2.source_hash = hash_sources("kernel", edited);
  EXPECT_NE(compute_cache_key(f1), compute_cache_key(f2));
}

TEST(CacheKey, HeaderOrderDoesNotMatter) {
  std::vector<std::pair<std::string, std::string>> forward = {
      {"a.h", "1"}, {"b.h", "2"}, {"c.h", "3"}};
  std::vector<std::pair<std::string, std::string>> backward(forward.rbegin(), forward.rend());
  EXPECT_EQ(hash_sources("src", forward), hash_sources("src", backward));
}

}  // namespace
}  // namespace ft
