#include "cache/code_object_cache.h"

#include <chrono>
#include <utility>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cache/cache_open.h"
#include "jit/code_object_meta.h"
#include "runtime/base/log.h"

namespace ft {
namespace {

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int step_once(sqlite::Statement& stmt) {
  int rc = stmt.step();
  stmt.reset();
  return rc;
}

int64_t blob_checksum(std::string_view blob) {
  return static_cast<int64_t>(XXH3_64bits(blob.data(), blob.size()));
}

// Metadata columns in the order both the get and the list queries return them.
constexpr const char* kInfoColumns =
    "o.kernel, o.entry, o.template_args, o.arch, o.toolchain, o.toolchain_version, o.flags, "
    "o.source_hash, o.resources, o.compile_ms, o.created_at, o.last_used_at, o.blob_size";
constexpr int kInfoColumnCount = 13;

// Reads kInfoColumns starting at column `first`. False when the stored
// resources are not valid JSON (a damaged row).
bool read_info(const sqlite::Statement& stmt, int first, CacheEntryInfo* info) {
  CacheKeyFields& f = info->fields;
  int c = first;
  for (std::string* field : {&f.kernel, &f.entry, &f.template_args, &f.arch, &f.toolchain,
                             &f.toolchain_version, &f.flags, &f.source_hash}) {
    *field = stmt.text(c++);
  }
  nlohmann::json resources = nlohmann::json::parse(stmt.text(c++), nullptr, false);
  info->compile_ms = stmt.real(c++);
  info->created_at = stmt.int64(c++);
  info->last_used_at = stmt.int64(c++);
  info->blob_size = stmt.int64(c++);
  if (resources.is_discarded() || !resources.is_object()) return false;
  info->resources = kernel_resources_from_json(resources);
  return true;
}

}  // namespace

// Prepared once per connection and reused: a hit costs one lookup by primary
// key (its recency UPDATE is batched), with no SQL parsing.
struct CodeObjectCache::Statements {
  sqlite::Statement begin, commit, rollback;
  sqlite::Statement select, touch, insert_meta, insert_blob, delete_meta, delete_blob;
  sqlite::Statement totals, lru, per_arch, list;
};

CodeObjectCache::CodeObjectCache(std::unique_ptr<sqlite::Connection> db, std::string path,
                                 bool in_memory, int64_t max_bytes)
    : db_(std::move(db)),
      stmts_(std::make_unique<Statements>()),
      path_(std::move(path)),
      in_memory_(in_memory),
      max_bytes_(max_bytes) {
  // Installing a WAL hook replaces SQLite's automatic checkpoints.
  sqlite3_wal_hook(
      db_->raw(),
      [](void* self, sqlite3*, const char*, int pages) {
        static_cast<CodeObjectCache*>(self)->wal_pages_ = pages;
        return SQLITE_OK;
      },
      this);
}

CodeObjectCache::~CodeObjectCache() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    flush_touches_now_locked();
  }
  // Statements must be finalized before their connection closes.
  stmts_.reset();
  db_.reset();
}

Result<std::unique_ptr<CodeObjectCache>> CodeObjectCache::open(const CacheOptions& options) {
  FT_ASSIGN_OR_RETURN(int64_t max_bytes, resolve_cache_max_bytes(options.max_bytes));
  FT_ASSIGN_OR_RETURN(OpenedDatabase opened, open_cache_database(options));
  std::unique_ptr<CodeObjectCache> cache(
      new CodeObjectCache(std::move(opened.connection), opened.path, opened.in_memory, max_bytes));
  FT_RETURN_IF_ERROR(cache->prepare_statements());
  return cache;
}

Status CodeObjectCache::prepare_statements() {
  const std::string info_columns = kInfoColumns;
  const std::pair<sqlite::Statement*, std::string> sql[] = {
      {&stmts_->begin, "BEGIN IMMEDIATE"},
      {&stmts_->commit, "COMMIT"},
      {&stmts_->rollback, "ROLLBACK"},
      {&stmts_->select, "SELECT " + info_columns + ", o.blob_xxh3, b.blob FROM code_objects o "
                        "LEFT JOIN code_object_blobs b ON b.key = o.key WHERE o.key = ?1"},
      {&stmts_->touch, "UPDATE code_objects SET last_used_at = ?2, "
                       "use_seq = (SELECT IFNULL(MAX(use_seq), 0) + 1 FROM code_objects) "
                       "WHERE key = ?1"},
      {&stmts_->insert_meta,
       "INSERT OR REPLACE INTO code_objects (key, format_version, kernel, entry, template_args, "
       "arch, toolchain, toolchain_version, flags, source_hash, blob_size, blob_xxh3, resources, "
       "compile_ms, created_at, last_used_at, use_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
       "?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
       "(SELECT IFNULL(MAX(use_seq), 0) + 1 FROM code_objects))"},
      {&stmts_->insert_blob, "INSERT OR REPLACE INTO code_object_blobs (key, blob) VALUES (?1, ?2)"},
      {&stmts_->delete_meta, "DELETE FROM code_objects WHERE key = ?1"},
      {&stmts_->delete_blob, "DELETE FROM code_object_blobs WHERE key = ?1"},
      {&stmts_->totals, "SELECT COUNT(*), IFNULL(SUM(blob_size), 0) FROM code_objects"},
      {&stmts_->lru, "SELECT key, blob_size FROM code_objects ORDER BY use_seq"},
      {&stmts_->per_arch,
       "SELECT arch, COUNT(*), IFNULL(SUM(blob_size), 0) FROM code_objects GROUP BY arch"},
      {&stmts_->list, "SELECT o.key, " + info_columns + " FROM code_objects o "
                      "WHERE ?1 = '' OR o.arch = ?1 OR substr(o.arch, 1, length(?1) + 1) = ?1 || ':' "
                      "ORDER BY o.arch, o.kernel, o.key"},
  };
  for (const auto& [stmt, text] : sql) {
    int rc = sqlite::Statement::prepare(db_->raw(), text, stmt);
    if (rc != SQLITE_OK) return error(rc, "preparing statements");
  }
  return Status();
}

Status CodeObjectCache::error(int rc, const char* what) const {
  return sqlite::to_status(rc, db_->message(), what, path_);
}

template <typename F>
Status CodeObjectCache::write_transaction(const char* what, F&& body) {
  int64_t deadline = sqlite::monotonic_ms() + sqlite::kRetryBudgetMs;
  for (int attempt = 0;; ++attempt) {
    int rc = step_once(stmts_->begin);
    if (!sqlite::is_error(rc)) {
      rc = body();
      if (!sqlite::is_error(rc)) rc = step_once(stmts_->commit);
      if (!sqlite::is_error(rc)) return Status();
    }
    // Take the message before ROLLBACK replaces it.
    Status failure = error(rc, what);
    if (!sqlite3_get_autocommit(db_->raw())) step_once(stmts_->rollback);
    if (!sqlite::is_busy(rc) || sqlite::monotonic_ms() >= deadline) return failure;
    sqlite::sleep_before_retry(attempt);
  }
}

int CodeObjectCache::delete_row_locked(const std::string& key) {
  for (sqlite::Statement* stmt : {&stmts_->delete_meta, &stmts_->delete_blob}) {
    stmt->bind_text(1, key);
    int rc = step_once(*stmt);
    if (sqlite::is_error(rc)) return rc;
  }
  return SQLITE_DONE;
}

void CodeObjectCache::evict_locked(const std::string& key, const std::string& reason) {
  Status st = write_transaction("evicting a damaged row", [&] { return delete_row_locked(key); });
  log::warn("code-object cache {}: entry {} {}; {}, it will be recompiled", path_, key, reason,
            st.ok() ? "evicted" : "could not evict it (" + st.message() + ")");
}

int CodeObjectCache::flush_touches_locked() {
  for (const auto& [key, when] : pending_touches_) {
    stmts_->touch.bind_text(1, key);
    stmts_->touch.bind_int64(2, when);
    int rc = step_once(stmts_->touch);
    if (sqlite::is_error(rc)) return rc;
  }
  return SQLITE_DONE;
}

void CodeObjectCache::flush_touches_now_locked() {
  if (pending_touches_.empty()) return;
  Status st = write_transaction("marking entries used", [&] { return flush_touches_locked(); });
  if (!st.ok()) log::debug("{}", st.message());
  pending_touches_.clear();
  checkpoint_locked(kHitCheckpointPages);
}

void CodeObjectCache::checkpoint_locked(int64_t min_pages) {
  if (wal_pages_ < min_pages) return;
  // PASSIVE: copies what it can without waiting for other connections' readers.
  int rc = sqlite3_wal_checkpoint_v2(db_->raw(), "main", SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  if (rc != SQLITE_OK) log::debug("{}", error(rc, "checkpointing the WAL").message());
  wal_pages_ = 0;
}

Result<std::optional<CacheEntry>> CodeObjectCache::get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  sqlite::Statement& select = stmts_->select;
  std::optional<CacheEntry> entry;
  std::string damage;
  {
    sqlite::ResetOnExit reset(select);
    int rc = sqlite::retry_busy([&] {
      select.reset();
      select.bind_text(1, key);
      return select.step();
    });
    if (rc == SQLITE_DONE) return std::optional<CacheEntry>();
    if (rc != SQLITE_ROW) return error(rc, "reading an entry");

    CacheEntryInfo info;
    bool resources_ok = read_info(select, 0, &info);
    int64_t stored_checksum = select.int64(kInfoColumnCount);
    bool has_blob = !select.is_null(kInfoColumnCount + 1);
    std::string_view blob = select.blob(kInfoColumnCount + 1);
    if (!has_blob) {
      damage = "has no blob";
    } else if (static_cast<int64_t>(blob.size()) != info.blob_size ||
               blob_checksum(blob) != stored_checksum) {
      damage = fmt::format("({} for {}) fails its blob checksum", info.fields.kernel,
                           info.fields.arch);
    } else if (!resources_ok) {
      damage = "has unreadable resource metadata";
    } else {
      entry = CacheEntry{key, std::move(info.fields), std::string(blob), info.resources,
                         info.compile_ms, info.created_at, info.last_used_at};
    }
  }
  if (!entry) {
    evict_locked(key, damage);
    return std::optional<CacheEntry>();
  }
  int64_t now = unix_now();
  if (pending_touches_.empty()) first_pending_ms_ = sqlite::monotonic_ms();
  pending_touches_.emplace_back(key, now);
  if (pending_touches_.size() >= kTouchBatch ||
      sqlite::monotonic_ms() - first_pending_ms_ >= kTouchDelayMs)
    flush_touches_now_locked();
  entry->last_used_at = now;
  return entry;
}

int CodeObjectCache::prune_locked(int64_t max_bytes, const std::string& keep_key,
                                  int64_t* removed) {
  *removed = 0;
  int64_t total = 0;
  {
    sqlite::ResetOnExit reset(stmts_->totals);
    int rc = stmts_->totals.step();
    if (rc != SQLITE_ROW) return rc;
    total = stmts_->totals.int64(1);
  }
  if (total <= max_bytes) return SQLITE_DONE;

  std::vector<std::string> victims;
  {
    sqlite::Statement& lru = stmts_->lru;
    sqlite::ResetOnExit reset(lru);
    int rc = SQLITE_DONE;
    while (total > max_bytes && (rc = lru.step()) == SQLITE_ROW) {
      std::string key = lru.text(0);
      if (key == keep_key) continue;
      total -= lru.int64(1);
      victims.push_back(std::move(key));
    }
    if (sqlite::is_error(rc)) return rc;
  }
  for (const std::string& key : victims) {
    int rc = delete_row_locked(key);
    if (sqlite::is_error(rc)) return rc;
  }
  *removed = static_cast<int64_t>(victims.size());
  // Hand the freed pages back to the file system (auto_vacuum=INCREMENTAL).
  return db_->exec("PRAGMA incremental_vacuum");
}

Status CodeObjectCache::put(const CacheEntry& entry) {
  if (entry.key.empty())
    return FT_ERROR(ErrorCode::kInvalidArgument, "code-object cache {}: put without a key", path_);
  const CacheKeyFields& f = entry.fields;
  std::string resources = to_json(entry.resources).dump();
  int64_t now = unix_now();
  int64_t checksum = blob_checksum(entry.blob);

  std::lock_guard<std::mutex> lock(mutex_);
  int64_t pruned = 0;
  Status st = write_transaction("writing", [&] {
    // Earlier hits first, so that they rank as less recent than this entry.
    int rc = flush_touches_locked();
    if (sqlite::is_error(rc)) return rc;
    sqlite::Statement& meta = stmts_->insert_meta;
    meta.bind_text(1, entry.key);
    meta.bind_int64(2, kCacheFormatVersion);
    int column = 3;
    for (const std::string* field : {&f.kernel, &f.entry, &f.template_args, &f.arch, &f.toolchain,
                                     &f.toolchain_version, &f.flags, &f.source_hash}) {
      meta.bind_text(column++, *field);
    }
    meta.bind_int64(11, static_cast<int64_t>(entry.blob.size()));
    meta.bind_int64(12, checksum);
    meta.bind_text(13, resources);
    meta.bind_double(14, entry.compile_ms);
    meta.bind_int64(15, entry.created_at != 0 ? entry.created_at : now);
    meta.bind_int64(16, now);
    rc = step_once(meta);
    if (sqlite::is_error(rc)) return rc;
    stmts_->insert_blob.bind_text(1, entry.key);
    stmts_->insert_blob.bind_blob(2, entry.blob);
    rc = step_once(stmts_->insert_blob);
    if (sqlite::is_error(rc)) return rc;
    return prune_locked(max_bytes_, entry.key, &pruned);
  });
  if (!st.ok()) return st.with_context(fmt::format("storing {} for {}", f.kernel, f.arch));
  pending_touches_.clear();
  checkpoint_locked(kCheckpointPages);
  if (pruned > 0)
    log::debug("code-object cache {}: pruned {} least-recently-used entries to stay under {} bytes",
               path_, pruned, max_bytes_);
  return Status();
}

Result<std::vector<CacheEntryInfo>> CodeObjectCache::list(const std::string& arch_filter) {
  std::lock_guard<std::mutex> lock(mutex_);
  flush_touches_now_locked();
  sqlite::Statement& stmt = stmts_->list;
  sqlite::ResetOnExit reset(stmt);
  std::vector<CacheEntryInfo> rows;
  stmt.bind_text(1, arch_filter);
  int rc;
  while ((rc = stmt.step()) == SQLITE_ROW) {
    CacheEntryInfo info;
    info.key = stmt.text(0);
    // A row with damaged resources is still listed (with default resources);
    // get() evicts it.
    read_info(stmt, 1, &info);
    rows.push_back(std::move(info));
  }
  if (rc != SQLITE_DONE) return error(rc, "listing entries");
  return rows;
}

Result<CacheStats> CodeObjectCache::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  flush_touches_now_locked();
  CacheStats stats;
  stats.path = path_;
  stats.in_memory = in_memory_;
  stats.max_bytes = max_bytes_;
  {
    sqlite::ResetOnExit reset(stmts_->totals);
    int rc = stmts_->totals.step();
    if (rc != SQLITE_ROW) return error(rc, "counting entries");
    stats.entries = stmts_->totals.int64(0);
    stats.total_bytes = stmts_->totals.int64(1);
  }
  {
    sqlite::Statement& stmt = stmts_->per_arch;
    sqlite::ResetOnExit reset(stmt);
    int rc;
    while ((rc = stmt.step()) == SQLITE_ROW) {
      stats.entries_per_arch[stmt.text(0)] = stmt.int64(1);
      stats.bytes_per_arch[stmt.text(0)] = stmt.int64(2);
    }
    if (rc != SQLITE_DONE) return error(rc, "counting entries per arch");
  }
  int64_t page_count = 0, page_size = 0;
  int rc = db_->query_int64("PRAGMA page_count", &page_count);
  if (rc == SQLITE_OK) rc = db_->query_int64("PRAGMA page_size", &page_size);
  if (rc != SQLITE_OK) return error(rc, "reading the file size");
  stats.file_bytes = page_count * page_size;
  return stats;
}

Result<int64_t> CodeObjectCache::prune(int64_t max_bytes) {
  if (max_bytes < 0)
    return FT_ERROR(ErrorCode::kInvalidArgument, "code-object cache {}: prune to {} bytes", path_,
                    max_bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t removed = 0;
  FT_RETURN_IF_ERROR(write_transaction("pruning", [&] {
    int rc = flush_touches_locked();
    if (sqlite::is_error(rc)) return rc;
    return prune_locked(max_bytes, std::string(), &removed);
  }));
  pending_touches_.clear();
  checkpoint_locked(kCheckpointPages);
  return removed;
}

Status CodeObjectCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_touches_.clear();
  Status st = write_transaction("clearing", [&] {
    int rc = db_->exec("DELETE FROM code_objects; DELETE FROM code_object_blobs");
    if (sqlite::is_error(rc)) return rc;
    return db_->exec("PRAGMA incremental_vacuum");
  });
  checkpoint_locked(kCheckpointPages);
  return st;
}

}  // namespace ft
