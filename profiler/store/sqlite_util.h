#pragma once
// Thin RAII over the SQLite C API for the session store. Every failure becomes a
// StoreError whose one-line message names the session file, so callers (CLI, GUI)
// can show it as is.
#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ampscope::profiler {

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace store_detail {

// "'path'" with quotes, as every message spells the file.
std::string quoted(const std::string& path);

class Db {
 public:
  Db() = default;
  // flags: SQLITE_OPEN_READONLY or SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, and
  // SQLITE_OPEN_NOMUTEX for a connection only one thread at a time uses (no lock per call).
  Db(const std::string& path, int flags);
  ~Db();
  Db(Db&& other) noexcept;
  Db& operator=(Db&& other) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }
  // Runs statements without results; `what` says what was being done, for the message.
  void exec(const char* sql, std::string_view what) const;
  // Throws the StoreError for the connection's last error code.
  [[noreturn]] void fail(int rc, std::string_view what) const;
  void close();

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

// A prepared statement; reset() makes it reusable with new bindings.
class Stmt {
 public:
  Stmt(const Db& db, const char* sql, std::string_view what);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Binding is 1-based, as in SQLite.
  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Stmt& bind(int i, uint64_t v) { return bind(i, static_cast<int64_t>(v)); }
  Stmt& bind(int i, bool v) { return bind(i, static_cast<int64_t>(v ? 1 : 0)); }
  Stmt& bind(int i, double v);
  // The string must outlive step(): bound without a copy.
  Stmt& bind_text(int i, std::string_view v);
  Stmt& bind_blob(int i, const void* data, size_t bytes);
  Stmt& bind_null(int i);

  // True while a row is available.
  bool step();
  // Steps a statement that returns no rows, then resets it.
  void run();
  void reset();

  // Numbers are checked: a text or blob value where the schema has a number (a file
  // edited by another program) throws StoreError naming the table and the column,
  // instead of reading back as 0.
  int64_t i64(int col) const;
  uint64_t u64(int col) const { return static_cast<uint64_t>(i64(col)); }
  int32_t i32(int col) const { return static_cast<int32_t>(i64(col)); }
  bool boolean(int col) const { return i64(col) != 0; }
  // SQLite stores NaN as NULL: NULL reads back as NaN, so a diverged loss survives.
  double real(int col) const;
  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string text(int col) const;
  std::string_view blob(int col) const;

 private:
  void check_number(int col) const;

  const Db* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string what_;
};

// `table`'s columns in order (PRAGMA table_info); none when the file has no such
// table. Files from before an additive column lack it (row_codec's AddedColumn).
std::vector<std::string> table_columns(const Db& db, std::string_view table);

}  // namespace store_detail
}  // namespace ampscope::profiler
