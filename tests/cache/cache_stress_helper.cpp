// One writer of the multi-process cache test: waits for <dir>/go, then
// stores and reads back `count` entries whose numbers overlap with the other
// workers', checking every blob it reads. Exit 0 on success; otherwise a
// message on stderr and exit 1.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cache/code_object_cache.h"
#include "tests/cache/cache_test_util.h"

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "cache stress worker: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return fail("usage: ft_cache_stress_helper DIR WORKER COUNT");
  std::string dir = argv[1];
  int worker = std::atoi(argv[2]);
  int count = std::atoi(argv[3]);
  for (int i = 0; i < 10'000 && ::access((dir + "/go").c_str(), F_OK) != 0; ++i) ::usleep(1000);

  auto opened = ft::CodeObjectCache::open(ft::testing_util::options_in(dir));
  if (!opened.ok()) return fail(opened.status().to_string());
  ft::CodeObjectCache& cache = **opened;
  if (cache.in_memory()) return fail("fell back to memory");

  for (int i = 0; i < count; ++i) {
    // Worker w writes numbers w*50 .. w*50+count-1: neighbours overlap.
    int n = worker * 50 + i;
    ft::Status st = cache.put(ft::testing_util::make_entry(n));
    if (!st.ok()) return fail("put " + std::to_string(n) + ": " + st.to_string());
    // Read something another worker may be writing right now.
    int other = (worker + 1) * 50 + (i * 7) % count;
    auto got = cache.get(ft::testing_util::make_entry(other).key);
    if (!got.ok()) return fail("get " + std::to_string(other) + ": " + got.status().to_string());
    if (got->has_value() && (*got)->blob != ft::testing_util::expected_blob(other))
      return fail("wrong blob for " + std::to_string(other));
    if (i % 40 == 39) {
      auto rows = cache.list();
      if (!rows.ok()) return fail("list: " + rows.status().to_string());
    }
  }
  return 0;
}
