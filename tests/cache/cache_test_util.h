// Shared by the cache tests and the stress helper: deterministic entries whose
// contents can be checked from their fields alone.
#pragma once

#include <string>

#include "cache/code_object_cache.h"

namespace ft::testing_util {

// Entry number `n`: its fields name n, its key is compute_cache_key(fields)
// and its blob (a few hundred bytes to ~20 KB, with NUL bytes) is a function
// of n, so any reader can tell whether a blob belongs to its row.
CacheEntry make_entry(int n, const std::string& arch = "gfx1100");
std::string expected_blob(int n);
// Options for a cache in `dir`, or in memory.
CacheOptions options_in(const std::string& dir);
CacheOptions in_memory_options();
// n from an entry made by make_entry, or -1.
int entry_number(const CacheKeyFields& fields);

}  // namespace ft::testing_util
