// CodeObjectCache: compiled code objects (hsaco, cubin) stored in SQLite,
// keyed by compute_cache_key(), with the key's fields as columns so the cache
// can be listed and pruned by arch or kernel.
//
// Contract:
// - Thread-safe: one SQLite connection per cache, every call serialized by a
//   mutex; several compile threads may call get/put concurrently.
// - Several processes may share one database file: WAL mode, a busy timeout,
//   BEGIN IMMEDIATE writes and a retry where SQLite's busy handler does not
//   apply. Do not use one CodeObjectCache on both sides of a fork().
// - Never returns a damaged blob: each row carries an XXH3-64 of its blob that
//   is checked on every read; a mismatch evicts the row and reads as a miss.
// - Degrades instead of failing: an unusable directory gives an in-memory
//   cache, a database file that is not a database is renamed aside.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache_key.h"
#include "jit/kernel_resources.h"
#include "runtime/base/status.h"

namespace ft {

namespace sqlite {
class Connection;
}  // namespace sqlite

struct CacheEntry {
  std::string key;  // normally compute_cache_key(fields)
  CacheKeyFields fields;
  std::string blob;            // the code object bytes (hsaco or cubin)
  KernelResources resources;   // jit/kernel_resources.h
  double compile_ms = 0;
  // Unix seconds. put() stamps last_used_at, and created_at when it is 0.
  int64_t created_at = 0, last_used_at = 0;
};

// A row without its blob, for listings.
struct CacheEntryInfo {
  std::string key;
  CacheKeyFields fields;
  KernelResources resources;
  double compile_ms = 0;
  int64_t created_at = 0, last_used_at = 0;
  int64_t blob_size = 0;
};

struct CacheStats {
  std::string path;  // database file, or ":memory:"
  bool in_memory = false;
  int64_t entries = 0;
  int64_t total_bytes = 0;  // sum of blob sizes, what max_bytes caps
  int64_t file_bytes = 0;   // database pages in use by SQLite (excludes the WAL)
  int64_t max_bytes = 0;
  std::map<std::string, int64_t> entries_per_arch;
  std::map<std::string, int64_t> bytes_per_arch;
};

struct CacheOptions {
  std::string dir;              // empty: FT_CACHE_DIR, else default_cache_dir() (runtime/base/files.h)
  int64_t max_bytes = 2LL << 30;  // size cap; FT_CACHE_MAX_BYTES overrides when set
  bool in_memory = false;       // force an in-memory cache (tests)
};

class CodeObjectCache {
 public:
  // File name of the database inside the cache directory.
  static constexpr const char* kFileName = "codeobjects.sqlite3";
  static constexpr size_t kTouchBatch = 64;
  static constexpr int64_t kTouchDelayMs = 2000;
  // SQLite's automatic checkpoint would run (and fsync) in whichever commit
  // crosses its threshold, a batch of hit marks included; the cache instead
  // checkpoints after puts, and after hit marks only when the WAL is far larger.
  static constexpr int64_t kCheckpointPages = 1000;
  static constexpr int64_t kHitCheckpointPages = 8000;

  // Opens (creating) <dir>/codeobjects.sqlite3. If the directory cannot be
  // created or written, falls back to an in-memory database and logs one
  // warning naming the directory and the reason. Fails only for a bad
  // FT_CACHE_MAX_BYTES / max_bytes or if not even an in-memory database opens.
  static Result<std::unique_ptr<CodeObjectCache>> open(const CacheOptions& options);

  ~CodeObjectCache();
  CodeObjectCache(const CodeObjectCache&) = delete;
  CodeObjectCache& operator=(const CodeObjectCache&) = delete;

  // The entry for `key`, or std::nullopt on a miss. A row whose blob fails
  // its checksum (or whose metadata is unreadable) is deleted, logged, and
  // reported as a miss so that the caller recompiles. A hit marks the row as
  // most recently used; to keep hits read-only, the marks are batched and
  // written with the next put/prune/list/stats, every kTouchBatch hits,
  // after kTouchDelayMs, or when the cache is destroyed.
  Result<std::optional<CacheEntry>> get(const std::string& key);

  // Inserts or replaces entry.key in one BEGIN IMMEDIATE transaction, then,
  // if the blobs total more than max_bytes, prunes least-recently-used rows
  // (never the one just stored) down to the cap. A full disk is a kIo error;
  // the cache stays readable.
  Status put(const CacheEntry& entry);

  // Rows without blobs, ordered by arch, kernel, key. `arch_filter` matches
  // an arch exactly or as the processor part of a target id ("gfx90a"
  // matches "gfx90a:xnack-"); empty lists everything.
  Result<std::vector<CacheEntryInfo>> list(const std::string& arch_filter = "");

  Result<CacheStats> stats();

  // Deletes least-recently-used rows until the blobs total <= max_bytes;
  // returns the number of rows removed.
  Result<int64_t> prune(int64_t max_bytes);

  // Deletes every row.
  Status clear();

  bool in_memory() const { return in_memory_; }
  const std::string& path() const { return path_; }
  int64_t max_bytes() const { return max_bytes_; }

 private:
  struct Statements;

  CodeObjectCache(std::unique_ptr<sqlite::Connection> db, std::string path, bool in_memory,
                  int64_t max_bytes);
  Status prepare_statements();
  // Runs `body` between BEGIN IMMEDIATE and COMMIT, retrying the whole
  // transaction on SQLITE_BUSY. `body` returns a SQLite result code.
  template <typename F>
  Status write_transaction(const char* what, F&& body);
  int delete_row_locked(const std::string& key);
  int prune_locked(int64_t max_bytes, const std::string& keep_key, int64_t* removed);
  void evict_locked(const std::string& key, const std::string& reason);
  // Writes the batched "used" marks, in hit order; call inside a write
  // transaction and clear pending_touches_ once it commits.
  int flush_touches_locked();
  // Same, in a transaction of its own; failures only lose recency bookkeeping.
  void flush_touches_now_locked();
  // Copies the WAL back into the database once it holds `min_pages` pages.
  void checkpoint_locked(int64_t min_pages);
  Status error(int rc, const char* what) const;

  std::mutex mutex_;
  std::unique_ptr<sqlite::Connection> db_;
  std::unique_ptr<Statements> stmts_;
  std::vector<std::pair<std::string, int64_t>> pending_touches_;  // key, unix seconds
  int64_t first_pending_ms_ = 0;
  int64_t wal_pages_ = 0;  // WAL size after our last commit (from sqlite3_wal_hook)
  std::string path_;
  bool in_memory_;
  int64_t max_bytes_;
};

}  // namespace ft
