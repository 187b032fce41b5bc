#include "cache/cache_open.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "runtime/base/files.h"
#include "runtime/base/log.h"

namespace ft {
namespace {

// Bumped when the tables change shape; a database with another version is a
// cache of the past and is rebuilt empty.
constexpr int64_t kSchemaVersion = 1;
constexpr int kBusyTimeoutMs = 10'000;

// Blobs live in their own table so that marking a hit (an UPDATE of the
// metadata row) rewrites a few dozen bytes, not the whole code object.
// use_seq orders rows by recency exactly, where last_used_at (seconds) ties.
constexpr const char* kCreateSchema = R"sql(
CREATE TABLE code_objects (
  key TEXT PRIMARY KEY NOT NULL,
  format_version INTEGER NOT NULL,
  kernel TEXT NOT NULL,
  entry TEXT NOT NULL,
  template_args TEXT NOT NULL,
  arch TEXT NOT NULL,
  toolchain TEXT NOT NULL,
  toolchain_version TEXT NOT NULL,
  flags TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  blob_size INTEGER NOT NULL,
  blob_xxh3 INTEGER NOT NULL,
  resources TEXT NOT NULL,
  compile_ms REAL NOT NULL,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  use_seq INTEGER NOT NULL
);
CREATE INDEX code_objects_lru ON code_objects(use_seq, blob_size);
CREATE INDEX code_objects_arch ON code_objects(arch);
CREATE TABLE code_object_blobs (
  key TEXT PRIMARY KEY NOT NULL,
  blob BLOB NOT NULL
);
)sql";

constexpr const char* kDropSchema =
    "DROP TABLE IF EXISTS code_objects; DROP TABLE IF EXISTS code_object_blobs;";

struct OpenFailure {
  int rc = SQLITE_OK;
  std::string reason;
};

int set_wal_mode(sqlite::Connection& db) {
  return sqlite::retry_busy([&] {
    sqlite::Statement stmt;
    int rc = sqlite::Statement::prepare(db.raw(), "PRAGMA journal_mode=WAL", &stmt);
    if (rc != SQLITE_OK) return rc;
    rc = stmt.step();
    if (rc != SQLITE_ROW) return rc;
    // A file system without shared memory (some network mounts) refuses WAL;
    // the rollback journal with the busy timeout is slower but still correct.
    if (stmt.text(0) != "wal") log::debug("code-object cache: journal mode stays {}", stmt.text(0));
    return SQLITE_OK;
  });
}

int ensure_schema(sqlite::Connection& db) {
  int64_t version = 0;
  int rc = sqlite::retry_busy([&] { return db.query_int64("PRAGMA user_version", &version); });
  if (rc != SQLITE_OK || version == kSchemaVersion) return rc;
  return sqlite::retry_busy([&] {
    int rc = db.exec("BEGIN IMMEDIATE");
    if (rc != SQLITE_OK) return rc;
    // Another process may have created the schema while we waited.
    rc = db.query_int64("PRAGMA user_version", &version);
    if (rc == SQLITE_OK && version != kSchemaVersion) {
      if (version != 0) log::info("code-object cache: rebuilding schema version {} as {}", version,
                                  kSchemaVersion);
      rc = db.exec(kDropSchema);
      if (rc == SQLITE_OK) rc = db.exec(kCreateSchema);
      if (rc == SQLITE_OK) rc = db.exec(fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str());
    }
    if (rc == SQLITE_OK) rc = db.exec("COMMIT");
    if (rc != SQLITE_OK && !sqlite3_get_autocommit(db.raw())) db.exec("ROLLBACK");
    return rc;
  });
}

// Opens and configures the database at `path` (or ":memory:").
OpenFailure open_configured(const std::string& path, std::unique_ptr<sqlite::Connection>* out) {
  OpenFailure failure;
  std::unique_ptr<sqlite::Connection> db;
  failure.rc = sqlite::Connection::open(path, &db, &failure.reason);
  if (failure.rc != SQLITE_OK) return failure;
  bool in_memory = path == ":memory:";
  if (!in_memory && sqlite3_db_readonly(db->raw(), "main") == 1) {
    return {SQLITE_READONLY, "the database file is read-only"};
  }
  sqlite3_busy_timeout(db->raw(), kBusyTimeoutMs);
  // auto_vacuum only takes effect before the first table exists, so it goes
  // before WAL mode (which writes the header of a new file).
  int rc = db->exec("PRAGMA auto_vacuum=INCREMENTAL");
  if (rc == SQLITE_OK && !in_memory) rc = set_wal_mode(*db);
  if (rc == SQLITE_OK) rc = db->exec("PRAGMA synchronous=NORMAL");
  if (rc == SQLITE_OK) rc = ensure_schema(*db);
  if (rc != SQLITE_OK) return {rc, db->message()};
  *out = std::move(db);
  return failure;
}

// The file at `path` is not a database (or its structure is broken). Under an
// exclusive lock on the directory, so that processes that notice together
// move it only once, check again, rename it aside and start a fresh file.
OpenFailure recover_corrupt(const std::string& dir, const std::string& path,
                            std::unique_ptr<sqlite::Connection>* out) {
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return {SQLITE_CANTOPEN, fmt::format("cannot lock {}: {}", dir, std::strerror(errno))};
  while (::flock(dir_fd, LOCK_EX) != 0 && errno == EINTR) {
  }
  OpenFailure failure = open_configured(path, out);
  if (sqlite::is_corrupt(failure.rc)) {
    std::string aside = fmt::format("{}.corrupt-{}", path, std::time(nullptr));
    if (::rename(path.c_str(), aside.c_str()) != 0) {
      failure = {SQLITE_CANTOPEN, fmt::format("cannot move the corrupt database {} aside: {}", path,
                                              std::strerror(errno))};
    } else {
      // A WAL or shared-memory index left by the broken file must not be
      // replayed into the fresh one.
      ::unlink((path + "-wal").c_str());
      ::unlink((path + "-shm").c_str());
      log::warn("code-object cache: {} is not a usable database ({}); moved it to {} and started "
                "an empty cache", path, failure.reason, aside);
      failure = open_configured(path, out);
    }
  }
  ::flock(dir_fd, LOCK_UN);
  ::close(dir_fd);
  return failure;
}

Result<OpenedDatabase> open_in_memory() {
  OpenedDatabase opened;
  opened.path = ":memory:";
  opened.in_memory = true;
  OpenFailure failure = open_configured(opened.path, &opened.connection);
  if (failure.rc != SQLITE_OK) return sqlite::to_status(failure.rc, failure.reason, "opening", opened.path);
  return opened;
}

}  // namespace

Result<int64_t> resolve_cache_max_bytes(int64_t configured) {
  const char* env = std::getenv("FT_CACHE_MAX_BYTES");
  if (!env || !*env) {
    if (configured <= 0)
      return FT_ERROR(ErrorCode::kInvalidArgument, "code-object cache: max_bytes {} is not positive",
                      configured);
    return configured;
  }
  int64_t value = 0;
  std::string_view text(env);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value <= 0)
    return FT_ERROR(ErrorCode::kInvalidArgument,
                    "FT_CACHE_MAX_BYTES={} is not a positive number of bytes", text);
  return value;
}

std::string resolve_cache_dir(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* env = std::getenv("FT_CACHE_DIR"); env && *env) return env;
  return default_cache_dir();
}

Result<OpenedDatabase> open_cache_database(const CacheOptions& options) {
  if (options.in_memory) return open_in_memory();
  std::string dir = resolve_cache_dir(options.dir);
  std::string path = dir + "/" + CodeObjectCache::kFileName;
  std::string reason;
  if (Status st = make_dirs(dir); st.ok()) {
    OpenedDatabase opened;
    opened.path = path;
    OpenFailure failure = open_configured(path, &opened.connection);
    if (sqlite::is_corrupt(failure.rc)) failure = recover_corrupt(dir, path, &opened.connection);
    if (failure.rc == SQLITE_OK) return opened;
    reason = fmt::format("{} (sqlite code {})", failure.reason, failure.rc);
  } else {
    reason = st.message();
  }
  log::warn("code-object cache: cannot use directory {}: {}; using an in-memory cache, compiled "
            "kernels will not persist", dir, reason);
  return open_in_memory();
}

}  // namespace ft
