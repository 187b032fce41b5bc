#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "cache/code_object_cache.h"
#include "runtime/base/files.h"
#include "tests/cache/cache_test_util.h"

extern char** environ;

namespace ft {
namespace {

using testing_util::entry_number;
using testing_util::expected_blob;
using testing_util::make_entry;

std::string helper_path() {
  const char* bin = std::getenv("FT_BIN_DIR");
  return std::string(bin && *bin ? bin : FT_BINARY_DIR "/bin") + "/ft_cache_stress_helper";
}

// Every row must be intact: get() verifies its checksum (a damaged row would
// read as a miss and be evicted), and its blob must be the one its fields name.
void expect_all_rows_intact(CodeObjectCache& cache, const std::set<int>& expected_numbers) {
  auto rows = cache.list();
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  std::set<int> numbers;
  for (const auto& info : *rows) {
    int n = entry_number(info.fields);
    numbers.insert(n);
    EXPECT_EQ(info.key, make_entry(n).key);
    auto got = cache.get(info.key);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    ASSERT_TRUE(got->has_value()) << "row " << n << " failed its checksum";
    EXPECT_EQ((*got)->blob, expected_blob(n)) << "row " << n;
  }
  EXPECT_EQ(numbers, expected_numbers);
}

TEST(CacheConcurrency, FourProcessesShareOneDatabase) {
  constexpr int kWorkers = 4;
  constexpr int kCount = 200;
  auto dir = make_temp_dir("ft-cache-mp-");
  ASSERT_TRUE(dir.ok());

  std::vector<pid_t> pids;
  for (int w = 0; w < kWorkers; ++w) {
    std::string exe = helper_path(), worker = std::to_string(w), count = std::to_string(kCount);
    char* argv[] = {exe.data(), dir->data(), worker.data(), count.data(), nullptr};
    pid_t pid = 0;
    ASSERT_EQ(::posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, environ), 0)
        << "cannot start " << exe;
    pids.push_back(pid);
  }
  // All workers start writing together, while the database is still empty.
  ASSERT_TRUE(write_file_atomic(*dir + "/go", "", 0).ok());
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "worker status " << status;
  }

  std::set<int> written;
  for (int w = 0; w < kWorkers; ++w)
    for (int i = 0; i < kCount; ++i) written.insert(w * 50 + i);
  auto cache = CodeObjectCache::open(testing_util::options_in(*dir));
  ASSERT_TRUE(cache.ok());
  expect_all_rows_intact(**cache, written);
  EXPECT_TRUE(remove_tree(*dir).ok());
}

TEST(CacheConcurrency, EightThreadsShareOneCache) {
  constexpr int kThreads = 8;
  constexpr int kCount = 150;
  auto dir = make_temp_dir("ft-cache-mt-");
  ASSERT_TRUE(dir.ok());
  auto opened = CodeObjectCache::open(testing_util::options_in(*dir));
  ASSERT_TRUE(opened.ok());
  CodeObjectCache& cache = **opened;

  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCount; ++i) {
        int n = (t * 37 + i) % 300;  // threads overlap on most numbers
        if (Status st = cache.put(make_entry(n)); !st.ok()) {
          failures[t] = st.to_string();
          return;
        }
        int other = (n + 101) % 300;
        auto got = cache.get(make_entry(other).key);
        if (!got.ok()) {
          failures[t] = got.status().to_string();
          return;
        }
        if (got->has_value() && (*got)->blob != expected_blob(other)) {
          failures[t] = "wrong blob for " + std::to_string(other);
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;

  std::set<int> written;
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kCount; ++i) written.insert((t * 37 + i) % 300);
  expect_all_rows_intact(cache, written);
  EXPECT_TRUE(remove_tree(*dir).ok());
}

}  // namespace
}  // namespace ft
