#include "tests/cache/cache_test_util.h"

#include <cstdint>

namespace ft::testing_util {

std::string expected_blob(int n) {
  size_t size = 256 + static_cast<size_t>(n) * 997 % 20'000;
  std::string blob(size, '\0');
  uint32_t x = 2166136261u ^ static_cast<uint32_t>(n);
  for (size_t i = 0; i < size; ++i) {
    x = x * 1664525u + 1013904223u;
    blob[i] = static_cast<char>(x >> 24);
  }
  return blob;
}

CacheEntry make_entry(int n, const std::string& arch) {
  CacheEntry e;
  e.fields.kernel = "probe_" + std::to_string(n);
  e.fields.entry = "ft::probe<" + std::to_string(n) + ">";
  e.fields.template_args = std::to_string(n);
  e.fields.arch = arch;
  e.fields.toolchain = "clang";
  e.fields.toolchain_version = "19.1.7";
  e.fields.flags = "-O3 -nogpuinc";
  e.fields.source_hash = hash_sources("source " + std::to_string(n), {});
  e.key = compute_cache_key(e.fields);
  e.blob = expected_blob(n);
  e.resources.symbol = "probe_" + std::to_string(n);
  e.resources.vgprs = n % 256;
  e.resources.sgprs = 20;
  e.resources.lds_bytes = n * 4;
  e.resources.wavefront_size = 32;
  e.compile_ms = 1.5 * n;
  return e;
}

CacheOptions options_in(const std::string& dir) {
  CacheOptions options;
  options.dir = dir;
  return options;
}

CacheOptions in_memory_options() {
  CacheOptions options;
  options.in_memory = true;
  return options;
}

int entry_number(const CacheKeyFields& fields) {
  if (fields.template_args.empty()) return -1;
  try {
    return std::stoi(fields.template_args);
  } catch (...) {
    return -1;
  }
}

}  // namespace ft::testing_util
