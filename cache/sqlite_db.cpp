#include "cache/sqlite_db.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace ft::sqlite {

Status to_status(int rc, std::string_view sqlite_message, std::string_view context,
                 std::string_view path) {
  int primary = rc & 0xff;
  std::string detail = fmt::format("{} (sqlite code {})", sqlite_message, rc);
  switch (primary) {
    case SQLITE_FULL:
      return FT_ERROR(ErrorCode::kIo, "code-object cache {}: disk full while {}: {}", path, context,
                      detail);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return FT_ERROR(ErrorCode::kCorrupt, "code-object cache {}: database corrupt while {}: {}",
                      path, context, detail);
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return FT_ERROR(ErrorCode::kIo, "code-object cache {}: {} failed: {}", path, context, detail);
    default:
      return FT_ERROR(ErrorCode::kInternal, "code-object cache {}: {} failed: {}", path, context,
                      detail);
  }
}

void sleep_before_retry(int attempt) {
  int ms = std::min(1 << std::min(attempt, 6), 50);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

int64_t monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = other.stmt_;
    other.stmt_ = nullptr;
  }
  return *this;
}

int Statement::prepare(sqlite3* db, std::string_view sql, Statement* out) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                              &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return rc;
  }
  *out = Statement();
  out->stmt_ = stmt;
  return SQLITE_OK;
}

void Statement::bind_text(int index, std::string_view text) {
  // A null data pointer would bind SQL NULL; keep empty strings empty.
  const char* data = text.data() ? text.data() : "";
  sqlite3_bind_text(stmt_, index, data, static_cast<int>(text.size()), SQLITE_STATIC);
}

void Statement::bind_blob(int index, std::string_view bytes) {
  if (bytes.empty()) {
    sqlite3_bind_zeroblob(stmt_, index, 0);
    return;
  }
  sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_STATIC);
}

void Statement::bind_int64(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }

void Statement::bind_double(int index, double value) { sqlite3_bind_double(stmt_, index, value); }

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Statement::text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n)) : std::string();
}

std::string_view Statement::blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::string_view(static_cast<const char*>(p), static_cast<size_t>(n)) : std::string_view();
}

Connection::~Connection() { sqlite3_close_v2(db_); }

int Connection::open(const std::string& path, std::unique_ptr<Connection>* out, std::string* error) {
  sqlite3* db = nullptr;
  // NOMUTEX: the owner serializes every call, so SQLite's own mutex is waste.
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    *error = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return rc;
  }
  sqlite3_extended_result_codes(db, 1);
  out->reset(new Connection(db));
  return SQLITE_OK;
}

int Connection::exec(const char* sql) { return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr); }

int Connection::query_int64(const char* sql, int64_t* value) {
  Statement stmt;
  int rc = Statement::prepare(db_, sql, &stmt);
  if (rc != SQLITE_OK) return rc;
  rc = stmt.step();
  if (rc == SQLITE_ROW) {
    *value = stmt.int64(0);
    return SQLITE_OK;
  }
  return rc == SQLITE_DONE ? SQLITE_ERROR : rc;
}

}  // namespace ft::sqlite
