// Opening the cache database: where it lives, its pragmas and schema, and the
// two ways it degrades instead of failing (in-memory fallback, corrupt file
// renamed aside). Internal to the cache module.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cache/code_object_cache.h"
#include "cache/sqlite_db.h"
#include "runtime/base/status.h"

namespace ft {

struct OpenedDatabase {
  std::unique_ptr<sqlite::Connection> connection;
  std::string path;  // the database file, or ":memory:"
  bool in_memory = false;
};

// FT_CACHE_MAX_BYTES when set (a positive integer), else `configured`.
Result<int64_t> resolve_cache_max_bytes(int64_t configured);

// options.dir, else FT_CACHE_DIR, else default_cache_dir().
std::string resolve_cache_dir(const std::string& configured);

// A configured connection with the schema in place. Falls back to an
// in-memory database (with one warning) when the directory or file cannot be
// used; errors only if even that fails.
Result<OpenedDatabase> open_cache_database(const CacheOptions& options);

}  // namespace ft
