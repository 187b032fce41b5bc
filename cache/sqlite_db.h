// A thin RAII layer over the SQLite C API for the code-object cache: one
// connection, reusable prepared statements, retry on SQLITE_BUSY, and the
// mapping of SQLite result codes to ft::Status.
//
// Not thread-safe by itself; CodeObjectCache serializes access with a mutex.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/base/status.h"

namespace ft::sqlite {

inline bool is_busy(int rc) {
  int primary = rc & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}
inline bool is_corrupt(int rc) {
  int primary = rc & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}
inline bool is_error(int rc) { return rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE; }

// "while <context> on <path>: <sqlite message>"; SQLITE_FULL reads as a full
// disk, corruption as kCorrupt, I/O and permission failures as kIo.
Status to_status(int rc, std::string_view sqlite_message, std::string_view context,
                 std::string_view path);

// Calls `attempt` (returning a SQLite result code) again while it reports
// SQLITE_BUSY/SQLITE_LOCKED, for the cases where SQLite's own busy handler is
// not consulted (BEGIN IMMEDIATE during WAL recovery, a stale WAL snapshot).
// Gives up after about kRetryBudgetMs and returns the last code.
inline constexpr int kRetryBudgetMs = 10'000;
template <typename F>
int retry_busy(F&& attempt);
void sleep_before_retry(int attempt);
int64_t monotonic_ms();

class Statement {
 public:
  Statement() = default;
  ~Statement();
  Statement(Statement&& other) noexcept : stmt_(other.stmt_) { other.stmt_ = nullptr; }
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  static int prepare(sqlite3* db, std::string_view sql, Statement* out);

  // Bound text and blobs are NOT copied: they must outlive the next step().
  void bind_text(int index, std::string_view text);
  void bind_blob(int index, std::string_view bytes);
  void bind_int64(int index, int64_t value);
  void bind_double(int index, double value);

  int step() { return sqlite3_step(stmt_); }
  // Ends the statement's read of the database and drops the bindings.
  void reset();

  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string text(int col) const;
  std::string_view blob(int col) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// Resets a statement on scope exit so that no early return leaves it holding
// a read snapshot (which would block WAL checkpoints and go stale).
class ResetOnExit {
 public:
  explicit ResetOnExit(Statement& stmt) : stmt_(stmt) {}
  ~ResetOnExit() { stmt_.reset(); }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  Statement& stmt_;
};

class Connection {
 public:
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Opens (creating) `path`, or a private in-memory database for ":memory:".
  // On failure returns the SQLite code and fills *error.
  static int open(const std::string& path, std::unique_ptr<Connection>* out, std::string* error);

  sqlite3* raw() const { return db_; }
  // Runs SQL that returns no rows we need (pragmas, BEGIN, DDL).
  int exec(const char* sql);
  // Runs a single-value query (e.g. "PRAGMA user_version") into *value.
  int query_int64(const char* sql, int64_t* value);
  std::string message() const { return sqlite3_errmsg(db_); }

 private:
  explicit Connection(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

template <typename F>
int retry_busy(F&& attempt) {
  int64_t deadline = monotonic_ms() + kRetryBudgetMs;
  for (int i = 0;; ++i) {
    int rc = attempt();
    if (!is_busy(rc) || monotonic_ms() >= deadline) return rc;
    sleep_before_retry(i);
  }
}

}  // namespace ft::sqlite
