#include "cache/code_object_cache.h"

#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "runtime/base/files.h"
#include "tests/cache/cache_test_util.h"

namespace ft {
namespace {

using testing_util::expected_blob;
using testing_util::make_entry;
namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    auto dir = make_temp_dir("ft-cache-test-");
    EXPECT_TRUE(dir.ok()) << dir.status().to_string();
    path_ = dir.ok() ? *dir : "/nonexistent";
  }
  ~TempDir() { (void)remove_tree(path_); }
  const std::string& path() const { return path_; }
  std::string db() const { return path_ + "/" + CodeObjectCache::kFileName; }

 private:
  std::string path_;
};

std::unique_ptr<CodeObjectCache> open_cache(const std::string& dir, int64_t max_bytes = 2LL << 30) {
  CacheOptions options;
  options.dir = dir;
  options.max_bytes = max_bytes;
  auto cache = CodeObjectCache::open(options);
  EXPECT_TRUE(cache.ok()) << cache.status().to_string();
  return cache.ok() ? std::move(cache).value() : nullptr;
}

bool has_key(CodeObjectCache& cache, const std::string& key) {
  auto got = cache.get(key);
  EXPECT_TRUE(got.ok()) << got.status().to_string();
  return got.ok() && got->has_value();
}

// Runs one SQL statement on the database file through a separate, raw
// SQLite connection (what another process or a broken disk would do).
void raw_sql(const std::string& db_path, const std::string& sql, const std::string& blob_arg = {}) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  if (!blob_arg.empty())
    sqlite3_bind_blob(stmt, 1, blob_arg.data(), static_cast<int>(blob_arg.size()), SQLITE_TRANSIENT);
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE) << sqlite3_errmsg(db);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST(Cache, PutGetRoundTripAndPersistence) {
  TempDir dir;
  CacheEntry stored = make_entry(7);
  stored.resources.agprs = 12;
  stored.resources.vgpr_spills = 3;
  {
    auto cache = open_cache(dir.path());
    ASSERT_TRUE(cache);
    EXPECT_FALSE(cache->in_memory());
    EXPECT_EQ(cache->path(), dir.db());
    ASSERT_TRUE(cache->put(stored).ok());
  }
  // A second instance (as a later process would) sees the row.
  auto cache = open_cache(dir.path());
  ASSERT_TRUE(cache);
  auto got = cache->get(stored.key);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_TRUE(got->has_value());
  const CacheEntry& e = **got;
  EXPECT_EQ(e.key, stored.key);
  EXPECT_EQ(e.fields, stored.fields);
  EXPECT_EQ(e.blob, stored.blob);
  EXPECT_EQ(e.resources.symbol, stored.resources.symbol);
  EXPECT_EQ(e.resources.vgprs, stored.resources.vgprs);
  EXPECT_EQ(e.resources.agprs, 12);
  EXPECT_EQ(e.resources.vgpr_spills, 3);
  EXPECT_EQ(e.resources.lds_bytes, stored.resources.lds_bytes);
  EXPECT_DOUBLE_EQ(e.compile_ms, stored.compile_ms);
  EXPECT_GT(e.created_at, 0);
  EXPECT_GE(e.last_used_at, e.created_at);

  auto miss = cache->get(make_entry(8).key);
  ASSERT_TRUE(miss.ok());
  EXPECT_FALSE(miss->has_value());

  auto stats = cache->stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->entries, 1);
  EXPECT_EQ(stats->total_bytes, static_cast<int64_t>(stored.blob.size()));
  EXPECT_GT(stats->file_bytes, 0);
}

TEST(Cache, PutReplacesAnExistingKey) {
  auto cache = CodeObjectCache::open(testing_util::in_memory_options());
  ASSERT_TRUE(cache.ok());
  CacheEntry e = make_entry(3);
  ASSERT_TRUE((*cache)->put(e).ok());
  e.blob = "replacement";
  e.compile_ms = 99;
  ASSERT_TRUE((*cache)->put(e).ok());
  auto got = (*cache)->get(e.key);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->blob, "replacement");
  EXPECT_DOUBLE_EQ((*got)->compile_ms, 99);
  EXPECT_EQ((*cache)->stats()->entries, 1);
}

TEST(Cache, PutWithoutKeyIsRejected) {
  auto cache = CodeObjectCache::open(testing_util::in_memory_options());
  ASSERT_TRUE(cache.ok());
  CacheEntry e = make_entry(1);
  e.key.clear();
  Status st = (*cache)->put(e);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
}

TEST(Cache, ChecksumMismatchEvictsTheRow) {
  TempDir dir;
  auto cache = open_cache(dir.path());
  ASSERT_TRUE(cache);
  CacheEntry victim = make_entry(11);
  CacheEntry bystander = make_entry(12);
  ASSERT_TRUE(cache->put(victim).ok());
  ASSERT_TRUE(cache->put(bystander).ok());

  std::string damaged = victim.blob;
  damaged[damaged.size() / 2] ^= 0x40;
  raw_sql(dir.db(), "UPDATE code_object_blobs SET blob = ?1 WHERE key = '" + victim.key + "'",
          damaged);

  auto got = cache->get(victim.key);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_FALSE(got->has_value());
  auto listed = cache->list();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u) << "the damaged row is gone, the other stays";
  EXPECT_EQ((*listed)[0].key, bystander.key);

  ASSERT_TRUE(cache->put(victim).ok());
  got = cache->get(victim.key);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->blob, victim.blob);
}

TEST(Cache, CorruptDatabaseFileIsMovedAside) {
  TempDir dir;
  std::string garbage(8192, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>(i * 131 + 7);
  ASSERT_TRUE(write_file_atomic(dir.db(), garbage.data(), garbage.size()).ok());

  auto cache = open_cache(dir.path());
  ASSERT_TRUE(cache);
  EXPECT_FALSE(cache->in_memory()) << "a fresh file replaces the corrupt one";
  CacheEntry e = make_entry(5);
  ASSERT_TRUE(cache->put(e).ok());
  EXPECT_TRUE(has_key(*cache, e.key));

  int moved = 0;
  for (const auto& item : fs::directory_iterator(dir.path())) {
    std::string name = item.path().filename().string();
    if (name.rfind(std::string(CodeObjectCache::kFileName) + ".corrupt-", 0) == 0) {
      ++moved;
      auto kept = read_file(item.path().string());
      ASSERT_TRUE(kept.ok());
      EXPECT_EQ(*kept, garbage) << "the corrupt file is kept as it was, for inspection";
    }
  }
  EXPECT_EQ(moved, 1);
}

TEST(Cache, LeastRecentlyUsedRowsArePrunedUnderTheCap) {
  TempDir dir;
  CacheEntry a = make_entry(1), b = make_entry(2), c = make_entry(3), d = make_entry(4);
  for (CacheEntry* e : {&a, &b, &c, &d}) e->blob.assign(1000, static_cast<char>('a' + (e - &a)));
  auto cache = open_cache(dir.path(), 3000);
  ASSERT_TRUE(cache);
  ASSERT_TRUE(cache->put(a).ok());
  ASSERT_TRUE(cache->put(b).ok());
  ASSERT_TRUE(cache->put(c).ok());
  ASSERT_TRUE(has_key(*cache, a.key));  // a is now more recent than b and c
  ASSERT_TRUE(cache->put(d).ok());      // 4000 bytes > 3000: the least recent (b) goes

  auto listed = cache->list();
  ASSERT_TRUE(listed.ok());
  std::set<std::string> keys;
  for (const auto& info : *listed) keys.insert(info.key);
  EXPECT_EQ(keys, (std::set<std::string>{a.key, c.key, d.key}));

  // Explicit prune to one entry: c (least recent) then a go, d stays.
  auto removed = cache->prune(1000);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 2);
  EXPECT_TRUE(has_key(*cache, d.key));
  EXPECT_FALSE(has_key(*cache, a.key));
  EXPECT_FALSE(has_key(*cache, c.key));
  EXPECT_EQ(cache->stats()->total_bytes, 1000);
  EXPECT_FALSE(cache->prune(-1).ok());
}

// Hits are recorded in batches; the batch must reach the file by the time the
// cache is closed, so that another process prunes by the true recency.
TEST(Cache, RecencyOfHitsOutlivesTheInstance) {
  TempDir dir;
  CacheEntry a = make_entry(1), b = make_entry(2), c = make_entry(3);
  for (CacheEntry* e : {&a, &b, &c}) e->blob.assign(1000, 'x');
  {
    auto cache = open_cache(dir.path(), 2000);
    ASSERT_TRUE(cache);
    ASSERT_TRUE(cache->put(a).ok());
    ASSERT_TRUE(cache->put(b).ok());
    ASSERT_TRUE(has_key(*cache, a.key));
  }
  auto cache = open_cache(dir.path(), 2000);
  ASSERT_TRUE(cache);
  ASSERT_TRUE(cache->put(c).ok());
  EXPECT_TRUE(has_key(*cache, a.key));
  EXPECT_FALSE(has_key(*cache, b.key));
  EXPECT_TRUE(has_key(*cache, c.key));
}

TEST(Cache, UnwritableDirectoryFallsBackToMemory) {
  TempDir dir;
  // Tests run as root, which ignores permission bits: a directory under a
  // regular file cannot be created by anyone.
  std::string file = dir.path() + "/plain-file";
  ASSERT_TRUE(write_file_atomic(file, "x", 1).ok());
  std::string unusable = file + "/cache";

  ::testing::internal::CaptureStderr();
  auto cache = open_cache(unusable);
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(cache);
  EXPECT_TRUE(cache->in_memory());
  EXPECT_NE(log.find(unusable), std::string::npos) << "the warning names the directory: " << log;

  CacheEntry e = make_entry(9);
  ASSERT_TRUE(cache->put(e).ok());
  auto got = cache->get(e.key);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->blob, e.blob);
  EXPECT_TRUE(cache->stats()->in_memory);
}

TEST(Cache, ListFiltersByArchAndStatsCountPerArch) {
  auto opened = CodeObjectCache::open(testing_util::in_memory_options());
  ASSERT_TRUE(opened.ok());
  CodeObjectCache& cache = **opened;
  const char* arches[] = {"gfx90a:xnack-", "gfx90a", "gfx90a:xnack+", "gfx1100", "sm_90a", "sm_90"};
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(cache.put(make_entry(i, arches[i])).ok());

  auto count = [&](const std::string& filter) {
    auto rows = cache.list(filter);
    EXPECT_TRUE(rows.ok());
    for (const auto& r : *rows) EXPECT_EQ(r.blob_size, static_cast<int64_t>(expected_blob(testing_util::entry_number(r.fields)).size()));
    return rows.ok() ? rows->size() : 0u;
  };
  EXPECT_EQ(count(""), 6u);
  EXPECT_EQ(count("gfx90a"), 3u);
  EXPECT_EQ(count("gfx90a:xnack-"), 1u);
  EXPECT_EQ(count("sm_90"), 1u);
  EXPECT_EQ(count("gfx1150"), 0u);

  auto stats = cache.stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->entries, 6);
  EXPECT_EQ(stats->entries_per_arch.size(), 6u);
  EXPECT_EQ(stats->entries_per_arch.at("gfx1100"), 1);
  EXPECT_EQ(stats->bytes_per_arch.at("sm_90a"), static_cast<int64_t>(expected_blob(4).size()));

  ASSERT_TRUE(cache.clear().ok());
  EXPECT_EQ(cache.stats()->entries, 0);
  EXPECT_EQ(count(""), 0u);
}

TEST(Cache, EnvironmentChoosesDirectoryAndCap) {
  TempDir dir;
  ::setenv("FT_CACHE_DIR", dir.path().c_str(), 1);
  ::setenv("FT_CACHE_MAX_BYTES", "12345", 1);
  auto cache = CodeObjectCache::open(CacheOptions{});
  ::setenv("FT_CACHE_MAX_BYTES", "12k", 1);
  auto bad = CodeObjectCache::open(CacheOptions{});
  ::unsetenv("FT_CACHE_DIR");
  ::unsetenv("FT_CACHE_MAX_BYTES");

  ASSERT_TRUE(cache.ok()) << cache.status().to_string();
  EXPECT_EQ((*cache)->path(), dir.db());
  EXPECT_EQ((*cache)->max_bytes(), 12345);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("FT_CACHE_MAX_BYTES"), std::string::npos);
}

// A write that the file system refuses (here: the file-size limit, the same
// failure path as a full disk) is an error; the rows already stored stay readable.
TEST(Cache, FailedWriteIsAnErrorAndReadsStillWork) {
  TempDir dir;
  CacheEntry small = make_entry(1);
  {
    auto cache = open_cache(dir.path());
    ASSERT_TRUE(cache);
    ASSERT_TRUE(cache->put(small).ok());
  }
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Child: no gtest assertions here, only an exit code per failed step.
    std::signal(SIGXFSZ, SIG_IGN);
    auto opened = CodeObjectCache::open(testing_util::options_in(dir.path()));
    if (!opened.ok() || (*opened)->in_memory()) ::_exit(10);
    rlimit limit{256 * 1024, 256 * 1024};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(11);
    CacheEntry big = make_entry(2);
    big.blob.assign(4 << 20, 'z');
    Status st = (*opened)->put(big);
    if (st.ok()) ::_exit(12);
    if (st.code() != ErrorCode::kIo || st.message().find(dir.path()) == std::string::npos) ::_exit(13);
    auto got = (*opened)->get(small.key);
    if (!got.ok() || !got->has_value() || (*got)->blob != small.blob) ::_exit(14);
    auto missing = (*opened)->get(big.key);
    if (!missing.ok() || missing->has_value()) ::_exit(15);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child died by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "failed step (see the exit codes in the test)";
  auto cache = open_cache(dir.path());
  ASSERT_TRUE(cache);
  EXPECT_TRUE(has_key(*cache, small.key));
}

}  // namespace
}  // namespace ft
